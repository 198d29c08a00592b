import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createCapability, expectLedgerConsistent, ledgerBalance, ledgerRows, newBuyer, signProof } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

describe('concurrent authorizations', () => {
  it('accept one of 50 concurrent submissions of the same proof and place one hold', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '10' });
    const buyer = await newBuyer(t, t.workspace, '1000');
    const proof = signProof(await s.client.payments.challenge(capabilityId), buyer);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => s.client.payments.authorize({ capabilityId, payment: proof })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refusedCodes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : []));
    expect(ok).toHaveLength(1);
    expect(refusedCodes).toEqual(Array(49).fill('REPLAY_DETECTED'));
    expect(ledgerRows(t, { walletId: buyer.walletId }).filter((e) => e.type === 'hold')).toHaveLength(1);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 10n });
    expectLedgerConsistent(t);
  });

  it('never overdraw: 200 concurrent purchases of 1 on a wallet funded 150 authorize exactly 150', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '1' });
    const buyer = await newBuyer(t, t.workspace, '150');
    const proofs = await Promise.all(Array.from({ length: 200 }, async () => signProof(await s.client.payments.challenge(capabilityId), buyer)));
    const results = await Promise.allSettled(proofs.map((payment) => s.client.payments.authorize({ capabilityId, payment })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refusedCodes = new Set(results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : [])));
    expect(ok).toHaveLength(150);
    expect([...refusedCodes]).toEqual(['INSUFFICIENT_FUNDS']);
    expect(await t.workspace.wallets.balance(buyer.walletId)).toEqual({ balanceMinor: '150', availableMinor: '0', currency: 'USD' });
    // expectLedgerConsistent also proves available was never negative after any entry
    expectLedgerConsistent(t);
  }, 60_000); // 400 HTTPS requests at once: cold TLS handshakes dominate on slow machines
});
