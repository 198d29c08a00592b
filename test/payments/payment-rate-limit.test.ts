/**
 * Challenge, authorize, complete and fail count on a limit of their own per key and per
 * operation (rateLimit.paymentMax per paymentWindowMs), not on the general limit: a purchase
 * costs its seller no general request, so a seller key is no longer held to a third of the
 * general limit in paid calls (about 16 a second under the default 50). In process here (no
 * Redis); across a fleet in test/gateway/rate-limit-fleet.test.ts. A ManualClock moves (or
 * holds) the windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/gateway/config.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, hashOf, ledgerBalance, newBuyer, newSeller, paidCall, signProof, verifiesWithPlatformKey } from './helpers.js';

const GENERAL = 5;
const PAYMENT = 8;
const clock = new ManualClock(Date.now());
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock, config: { rateLimit: { max: GENERAL, windowMs: 60_000, signupMax: 10, signupWindowMs: 60_000, paymentMax: PAYMENT, paymentWindowMs: 10_000 } } });
});
afterAll(async () => {
  await t?.close();
});

type Raw = { status: number; headers: Headers; body: { error?: { code: string; message: string; details: Record<string, unknown> }; results?: { status: number }[] } };
const post = (apiKey: string, path: string, body: unknown) => t.client(apiKey).http.raw('POST', path, { body }) as Promise<Raw>;

describe('the payment operation limit', () => {
  it('lets a seller make more paid calls than the general limit allows requests, the ledger right after each', async () => {
    const seller = await newSeller(t, '100'); // made through the store: nothing counted yet
    const buyer = await newBuyer(t, t.workspace, '1000');
    // PAYMENT paid calls, more than the GENERAL requests a window: each purchase's challenge,
    // authorize and complete go to their own limits. Before, 5 requests a window were one paid call and a challenge.
    const receipts = [];
    for (let i = 0; i < PAYMENT; i++) receipts.push(await paidCall(seller.client, seller.capabilityId, buyer));
    // (the platform key is read without an API key, on the per-IP general budget: the first and the last)
    for (const receipt of [receipts[0]!, receipts[PAYMENT - 1]!]) expect(await verifiesWithPlatformKey(t, receipt)).toBe(true);
    expect(new Set(receipts.map((r) => r.transactionId)).size).toBe(PAYMENT);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n - 100n * BigInt(PAYMENT), held: 0n });
    expectLedgerConsistent(t);
    // the challenge budget is spent: the next challenge is refused naming its operation
    const over = await post(seller.apiKey, '/v1/x402/challenge', { capabilityId: seller.capabilityId });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: PAYMENT, operation: 'challenge' } });
    // the general budget is untouched by the purchases
    const res = await seller.client.http.raw('GET', '/v1/capabilities');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe(String(GENERAL - 1));
  });

  it('refuses the operation past paymentMax with 429 RATE_LIMITED naming it, each operation on its own counter, and again after the window', async () => {
    const seller = await newSeller(t);
    const unknownTxn = { transactionId: 'txn_' + '0'.repeat(32), responseHash: hashOf('x') };
    // a refused or unknown transaction still counts: the limit is on requests
    for (let i = 0; i < PAYMENT; i++) {
      const r = await post(seller.apiKey, '/v1/x402/complete', unknownTxn);
      expect(r.status).toBe(404);
      expect(r.headers.get('x-ratelimit-limit')).toBe(String(PAYMENT));
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(PAYMENT - 1 - i));
    }
    const over = await post(seller.apiKey, '/v1/x402/complete', unknownTxn);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: PAYMENT, operation: 'complete', retryAfterSeconds: 10 } });
    expect(over.body.error!.message).toContain(`at most ${PAYMENT} per 10 seconds for each payment operation`);
    expect(over.headers.get('retry-after')).toBe('10');
    // fail has a counter of its own; the general limit is untouched (5 left of 5)
    expect((await post(seller.apiKey, '/v1/x402/fail', { transactionId: unknownTxn.transactionId, reason: 'provider_error' })).status).toBe(404);
    const general = await seller.client.http.raw('GET', '/v1/capabilities');
    expect(general.status).toBe(200);
    expect(general.headers.get('x-ratelimit-remaining')).toBe(String(GENERAL - 1));
    // another seller's key is not affected
    const other = await newSeller(t);
    expect((await post(other.apiKey, '/v1/x402/complete', unknownTxn)).status).toBe(404);
    // the window passes (the gateway's clock)
    clock.advance(10_000);
    expect((await post(seller.apiKey, '/v1/x402/complete', unknownTxn)).status).toBe(404);
  });

  it('counts a batch’s authorize, complete and fail on their counters, refusing a batch that does not fit whole and running none of it', async () => {
    const seller = await newSeller(t, '100');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const txn = (n: number) => ({ op: 'complete', transactionId: `txn_${String(n).padStart(32, '0')}`, responseHash: hashOf('x') });
    // PAYMENT + 1 completes can never fit: refused without retry-after, nothing counted
    const never = await post(seller.apiKey, '/v1/x402/batch', { operations: Array.from({ length: PAYMENT + 1 }, (_, i) => txn(i)) });
    expect(never.status).toBe(429);
    expect(never.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: PAYMENT, operation: 'complete', operations: PAYMENT + 1 } });
    expect(never.headers.get('retry-after')).toBeNull();
    // 6 completes fit; then 3 more do not fit the 2 left: refused whole, with a real authorize in it that must not run
    const six = await post(seller.apiKey, '/v1/x402/batch', { operations: Array.from({ length: 6 }, (_, i) => txn(i)) });
    expect(six.status).toBe(200);
    expect(six.body.results!.map((r) => r.status)).toEqual(Array(6).fill(404));
    const challenge = await seller.client.payments.challenge(seller.capabilityId);
    const authorize = { op: 'authorize', capabilityId: seller.capabilityId, payment: signProof(challenge, buyer, new Date(clock.now()).toISOString()) };
    const mixed = await post(seller.apiKey, '/v1/x402/batch', { operations: [authorize, txn(1), txn(2), txn(3)] });
    expect(mixed.status).toBe(429);
    expect(mixed.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { operation: 'complete', operations: 3, remaining: 2, retryAfterSeconds: expect.any(Number) } });
    expect(mixed.body.results).toBeUndefined();
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
    // the authorize was not counted either: PAYMENT of it are left, and the refused batch runs once it fits
    const fits = await post(seller.apiKey, '/v1/x402/batch', { operations: [authorize, txn(1), txn(2)] });
    expect(fits.status).toBe(200);
    expect(fits.body.results!.map((r) => r.status)).toEqual([200, 404, 404]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });
    expectLedgerConsistent(t);
  });
});

describe('a seller key under the default limits', () => {
  const held = new ManualClock(Date.now());
  let d: TestGateway;
  beforeAll(async () => {
    // the gateway's own defaults (50 general requests and 1000 per payment operation a second), not the test helper's
    d = await startTestGateway({ clock: held, config: { rateLimit: { ...DEFAULT_CONFIG.rateLimit } } });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('makes well over 16 paid calls in one second-window without a 429, each paying right', async () => {
    const CALLS = 60; // 180 gateway requests from one key, more than the general 50 alone allows
    const seller = await newSeller(d, '100');
    const buyer = await newBuyer(d, d.workspace, String(100 * CALLS));
    // the clock does not move: every request lands in the same window
    const start = held.now();
    for (let i = 0; i < CALLS; i++) {
      const receipt = await paidCall(seller.client, seller.capabilityId, buyer);
      expect(receipt.amount).toEqual({ amountMinor: '100', currency: 'USD' });
    }
    expect(held.now()).toBe(start);
    expect(ledgerBalance(d, buyer.walletId)).toEqual({ balance: 0n, held: 0n });
    expectLedgerConsistent(d);
    // the same window: the challenge counter says how many were spent, and the general budget is whole
    const challenge = await seller.client.http.raw('POST', '/v1/x402/challenge', { body: { capabilityId: seller.capabilityId } });
    expect(challenge.status).toBe(200);
    expect(challenge.headers.get('x-ratelimit-remaining')).toBe(String(DEFAULT_CONFIG.rateLimit.paymentMax - CALLS - 1));
    const general = await seller.client.http.raw('GET', '/v1/capabilities');
    expect(general.status).toBe(200);
    expect(general.headers.get('x-ratelimit-remaining')).toBe(String(DEFAULT_CONFIG.rateLimit.max - 1));
  });
});
