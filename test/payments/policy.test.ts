import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { Principal } from '../../src/domain/tenancy/api-keys.js';
import { PaymentService, type Purchase, type PurchasePolicy } from '../../src/domain/payments/service.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { createCapability, expectLedgerConsistent, ledgerBalance, newBuyer, signProof } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

/** A payment service like the gateway's, with a policy of the test's choosing. */
function serviceWith(policy: PurchasePolicy): PaymentService {
  const { ctx, signingKeys, config } = t.gw.services;
  return new PaymentService({ ctx, signingKeys, settings: config, policy });
}

describe('the purchase policy hook', () => {
  it('sees the purchase and, refusing with POLICY_DENIED, moves no money and leaves the proof usable', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '1000');
    const seen: Purchase[] = [];
    const deny: PurchasePolicy = {
      async check(_r, purchase) {
        seen.push(purchase);
        throw new AppError('POLICY_DENIED', 'price above 50 is not allowed', { matchedRule: 'price > 50: deny' });
      },
    };
    const proof = signProof(await s.client.payments.challenge(capabilityId), buyer);
    const principal: Principal = { keyId: 'key_test', tenantId: s.id, tenantKind: 'provider', scopes: new Set(['payments:write']) };

    const before = snapshotDb(t.dataDir);
    const e = await serviceWith(deny).authorize(principal, { capabilityId, payment: proof }).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'POLICY_DENIED', details: { matchedRule: 'price > 50: deny' } });
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ workspaceId: t.creds.workspace.id, walletId: buyer.walletId, providerId: s.id, amountMinor: 100n, currency: 'USD' });
    expect(seen[0]!.capability.id).toBe(capabilityId);

    // the gateway's own service (allow all) accepts the same proof: the refusal did not use the nonce
    const auth = await s.client.payments.authorize({ capabilityId, payment: proof });
    expect(auth.amountMinor).toBe('100');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });
    expectLedgerConsistent(t);
  });

  it('passes APPROVAL_REQUIRED through with its approvalId and commits only what the policy wrote', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '1000');
    const hold: PurchasePolicy = {
      async check(r, purchase) {
        // stands in for an approval request: a write the refusal must not roll back
        await r.wallets.update(purchase.walletId, { updatedAt: purchase.now + 1 });
        throw new AppError('APPROVAL_REQUIRED', 'a person must approve this purchase', {}, { approvalId: 'apr_test' });
      },
    };
    const proof = signProof(await s.client.payments.challenge(capabilityId), buyer);
    const principal: Principal = { keyId: 'key_test', tenantId: s.id, tenantKind: 'provider', scopes: new Set(['payments:write']) };
    const before = snapshotDb(t.dataDir);
    const e = await serviceWith(hold).authorize(principal, { capabilityId, payment: proof }).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'APPROVAL_REQUIRED', extra: { approvalId: 'apr_test' } });
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual(['wallets']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
    expectLedgerConsistent(t);
  });
});
