import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, createCapability, expectLedgerConsistent, hashOf, ledgerBalance, newBuyer, verifiesWithPlatformKey } from './helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-restart-'));
let t: TestGateway | undefined;
afterAll(async () => {
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('an authorized transaction across a gateway restart', () => {
  it('is completed by the restarted gateway on the same data directory', async () => {
    t = await startTestGateway({ dataDir });
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '500');
    const auth = await authorizeCall(s.client, capabilityId, buyer);
    await t.close();

    t = await startTestGateway({ dataDir });
    const seller = t.client(s.apiKey);
    const { receipt } = await seller.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('after restart') });
    expect(receipt).toMatchObject({ status: 'success', transactionId: auth.transactionId });
    expect(await verifiesWithPlatformKey(t, receipt)).toBe(true);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 400n, held: 0n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: 97n, held: 0n });
    expectLedgerConsistent(t);
  });
});
