/**
 * Many buyers' calls at once through a real seller: the wallet pays for exactly as many
 * calls as it can afford and its balance never goes below zero.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayError } from '../../src/sdk/errors.js';
import { createBuyer } from '../../src/sdk/buyer/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, publish, startFastifySeller, type RunningSeller } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;

beforeAll(async () => {
  t = await startTestGateway();
  const caps = { price100: await publish(t, '100'), price1: await publish(t, '1') };
  seller = await startFastifySeller(t, caps);
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

describe('200 concurrent purchases at price 1 on a wallet funded for 150', () => {
  it('lets exactly 150 succeed, refuses 50 with INSUFFICIENT_FUNDS, and never overdraws', async () => {
    const a = await fundedAgent(t, '150');
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: fetchTrusting(t.ca) });

    const results = await Promise.allSettled(Array.from({ length: 200 }, () => buyer.fetch(`${seller.url}/cheap`)));
    const succeeded = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(succeeded).toHaveLength(150);
    for (const r of succeeded) expect(r.value.receipt?.status).toBe('success');
    expect(refused).toHaveLength(50);
    for (const r of refused) expect(r.reason).toBeInstanceOf(AgentpayError);
    expect(new Set(refused.map((r) => (r.reason as AgentpayError).code))).toEqual(new Set(['INSUFFICIENT_FUNDS']));

    expect(seller.log.handled.cheap).toBe(150);
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
    // every running sum along the way stayed at or above zero
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
