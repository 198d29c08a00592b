/**
 * POST /v1/x402/batch against the key's payment limits: a batch counts op by op, each
 * operation on its own payment counter (here challenge, the operation a seller batches most),
 * and one that does not fit is refused whole before any operation is counted or run, so it
 * neither spends the key's budget nor does anything. The seller's batcher, refused a batch
 * larger than the limit allows at all, resends in smaller batches. The batch request itself
 * is one request on the general limit, which is large here. A 60 s window, so that real time
 * cannot refill a budget during a test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayBatcher } from '../../packages/sdk/src/seller/batcher.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { recordingFetch } from '../e2e/helpers.js';
import { hashOf } from './helpers.js';

const LIMIT = 30;
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ config: { rateLimit: { max: 1000, windowMs: 60_000, signupMax: 10, signupWindowMs: 60_000, paymentMax: LIMIT, paymentWindowMs: 60_000 } } });
});
afterAll(async () => {
  await t?.close();
});

/** A seller of its own (its own key, so its own budget) with one capability. */
async function seller(): Promise<{ client: AgentpayClient; apiKey: string; capabilityId: string }> {
  const p = await t.newProvider();
  const { capability } = await p.client.capabilities.publish({ name: 'Echo', description: 'echo', protocol: 'rest', priceMinor: '10', category: 'testing', endpoint: 'https://127.0.0.1/echo' });
  return { client: p.client, apiKey: p.apiKey, capabilityId: capability.id };
}

const challenges = (capabilityId: string, n: number) => Array.from({ length: n }, () => ({ op: 'challenge' as const, capabilityId }));

/** How many more challenges the key may ask for in this window: spends them all, then counts. */
async function spendRest(client: AgentpayClient, capabilityId: string): Promise<number> {
  for (let n = 0; n <= LIMIT; n++) {
    const res = await client.http.raw<{ error?: { details: Record<string, unknown> } }>('POST', '/v1/x402/challenge', { body: { capabilityId } });
    if (res.status === 429) {
      expect(res.body.error?.details).toMatchObject({ limit: LIMIT, operation: 'challenge' });
      return n;
    }
    expect(res.status).toBe(200);
  }
  throw new Error('the limit never refused');
}

describe('POST /v1/x402/batch and the rate limit', () => {
  it('refuses a batch larger than the limit allows in any window as a whole, counting none of its operations', async () => {
    const s = await seller();
    const res = await s.client.http.raw<{ error: { code: string; message: string; details: Record<string, unknown> } }>('POST', '/v1/x402/batch', { body: { operations: challenges(s.capabilityId, LIMIT + 1) } });
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: LIMIT, operation: 'challenge', operations: LIMIT + 1 } });
    expect(res.body.error.message).toContain(`send at most ${LIMIT} challenge operations per batch`);
    expect(res.headers.get('retry-after')).toBeNull(); // waiting does not help; a smaller batch does
    // the whole challenge budget is left
    expect(await spendRest(s.client, s.capabilityId)).toBe(LIMIT);
  });

  it('refuses a batch that does not fit what is left of the window with retry-after, running none of it', async () => {
    const s = await seller();
    for (let i = 0; i < 20; i++) expect((await s.client.http.raw('POST', '/v1/x402/challenge', { body: { capabilityId: s.capabilityId } })).status).toBe(200);
    // 10 left: a batch of 11 challenges does not fit
    const res = await s.client.http.raw<{ error: { code: string; details: Record<string, unknown> }; results?: unknown }>('POST', '/v1/x402/batch', { body: { operations: challenges(s.capabilityId, 11) } });
    expect(res.status).toBe(429);
    expect(res.body.results).toBeUndefined();
    expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: LIMIT, operation: 'challenge', operations: 11, remaining: 10, retryAfterSeconds: expect.any(Number) } });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // all or nothing across counters: a batch whose completes fit but whose challenges do not counts neither
    const completes = Array.from({ length: 5 }, (_, i) => ({ op: 'complete' as const, transactionId: `txn_${String(i).padStart(32, '0')}`, responseHash: hashOf('x') }));
    const mixed = await s.client.http.raw<{ error: { details: Record<string, unknown> } }>('POST', '/v1/x402/batch', { body: { operations: [...completes, ...challenges(s.capabilityId, 11)] } });
    expect(mixed.status).toBe(429);
    expect(mixed.body.error.details).toMatchObject({ operation: 'challenge', operations: 11, remaining: 10 });
    const allCompletes = Array.from({ length: LIMIT }, (_, i) => ({ op: 'complete' as const, transactionId: `txn_${String(i).padStart(32, '0')}`, responseHash: hashOf('x') }));
    const fullComplete = await s.client.http.raw<{ results: { status: number }[] }>('POST', '/v1/x402/batch', { body: { operations: allCompletes } });
    expect(fullComplete.status).toBe(200); // all LIMIT completes were still left
    expect(fullComplete.body.results.map((r) => r.status)).toEqual(Array(LIMIT).fill(404));
    // a batch that fits what is left (10) runs whole
    const ok = await s.client.http.raw<{ results: { status: number }[] }>('POST', '/v1/x402/batch', { body: { operations: challenges(s.capabilityId, 10) } });
    expect(ok.status).toBe(200);
    expect(ok.body.results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await spendRest(s.client, s.capabilityId)).toBe(0);
  });
});

describe('GatewayBatcher refused a batch larger than the limit', () => {
  it('sends those operations again, first, in batches of half the limit', async () => {
    const s = await seller();
    const { fetch, log } = recordingFetch(t.ca);
    const batcher = new GatewayBatcher(new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: s.apiKey, fetch }), { maxInFlight: 1 });
    const first = batcher.run({ op: 'challenge', capabilityId: s.capabilityId });
    const waiting = challenges(s.capabilityId, LIMIT + 1).map((op) => batcher.run(op));
    const outcomes = await Promise.allSettled([first, ...waiting]);
    // alone (1), refused whole (0), 15 (15): 16 of 30 challenges spent; the next 15 do not fit the 14 left
    // and are refused whole as well (0); the last one goes alone (1)
    expect(log).toEqual([
      { path: '/v1/x402/challenge' },
      { path: '/v1/x402/batch', operations: LIMIT + 1 },
      { path: '/v1/x402/batch', operations: LIMIT / 2 },
      { path: '/v1/x402/batch', operations: LIMIT / 2 },
      { path: '/v1/x402/challenge' },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      ...Array(LIMIT / 2).fill('fulfilled'),
      ...Array(LIMIT / 2).fill('rejected'),
      'fulfilled',
    ]);
    for (const o of outcomes.filter((x) => x.status === 'rejected')) {
      expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'RATE_LIMITED', status: 429, details: { retryAfterSeconds: expect.any(Number) } });
    }
  });
});
