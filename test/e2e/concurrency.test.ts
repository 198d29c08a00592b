/**
 * Many buyers' calls at once through a real seller: the wallet pays for exactly as many
 * calls as it can afford and its balance never goes below zero.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, platformRevenue, publish, recordingFetch, startFastifySeller, type RunningSeller } from './helpers.js';

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

/** The seller's gateway requests by path, and the size of each batch, through a recording fetch. */
function countingFetch(ca: string) {
  const { fetch: f, log } = recordingFetch(ca);
  return {
    f,
    get paths() { return log.map((r) => r.path); },
    get batchSizes() { return log.flatMap((r) => (r.operations === undefined ? [] : [r.operations])); },
  };
}

describe("the seller's gateway calls under load", () => {
  it('share batch requests when many calls are in flight, and settle each call exactly as alone', async () => {
    const counting = countingFetch(t.ca);
    const busy = await startFastifySeller(t, { price100: await publish(t, '100'), price1: await publish(t, '1') }, { fetch: counting.f });
    try {
      const revenueBefore = await platformRevenue(t);
      const a = await fundedAgent(t, '6000');
      const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: fetchTrusting(t.ca) });
      const results = await Promise.all(Array.from({ length: 60 }, () => buyer.fetch(`${busy.url}/forecast`)));
      for (const r of results) expect(r.receipt?.status).toBe('success');
      expect(busy.log.handled.forecast).toBe(60);
      // 60 calls x 3 operations, fewer requests: at least one batch carried several
      expect(counting.batchSizes.length).toBeGreaterThan(0);
      expect(Math.max(...counting.batchSizes)).toBeGreaterThan(1);
      expect(counting.paths.length).toBeLessThan(180);
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
      expect((await platformRevenue(t)) - revenueBefore).toBe(180n);
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await busy.close();
    }
  });

  it('go one request each on their own routes when the seller is idle, or when batching is off', async () => {
    const idle = countingFetch(t.ca);
    const off = countingFetch(t.ca);
    const caps = { price100: await publish(t, '100'), price1: await publish(t, '1') };
    const sellers = [await startFastifySeller(t, caps, { fetch: idle.f }), await startFastifySeller(t, caps, { fetch: off.f, batch: false })];
    try {
      const a = await fundedAgent(t, '400');
      const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: fetchTrusting(t.ca) });
      for (const s of sellers) for (let i = 0; i < 2; i++) expect((await buyer.fetch(`${s.url}/forecast`)).receipt?.status).toBe('success');
      const each = ['/v1/x402/challenge', '/v1/x402/authorize', '/v1/x402/complete'];
      // the x402 `exact` offer is read once per seller, before its first paid call
      expect(idle.paths).toEqual(['/v1/x402/exact', ...each, ...each]);
      expect(off.paths).toEqual(['/v1/x402/exact', ...each, ...each]);
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
      // batching off: not even 40 calls at once share a request
      const b = await fundedAgent(t, '4000');
      const many = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: b.walletId, privateKeyPem: b.privateKeyPem, fetch: fetchTrusting(t.ca) });
      const results = await Promise.all(Array.from({ length: 40 }, () => many.fetch(`${sellers[1]!.url}/forecast`)));
      for (const r of results) expect(r.receipt?.status).toBe('success');
      expect(off.batchSizes).toEqual([]);
      expect(off.paths).toHaveLength(1 + 6 + 40 * 3);
      expect(await t.workspace.wallets.balance(b.walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
    } finally {
      for (const s of sellers) await s.close();
    }
  });
});
