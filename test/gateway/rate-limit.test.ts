/**
 * The general request rate limit: `rateLimit.max` requests per `rateLimit.windowMs`
 * per API key, or per client IP for requests without a key; past it, 429 RATE_LIMITED
 * in the error envelope with `retry-after`. (The stricter signup/recovery limit has its
 * own test in test/tenancy/rate-limit.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { backendOptions, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const WINDOW_MS = 1000;
const rateLimit = { max: 5, windowMs: WINDOW_MS, signupMax: 10_000, signupWindowMs: 60_000 };

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { error?: { code: string; message: string; details: Record<string, unknown> } };
}

/** `n` requests at once; the gateway's clock stands still, so they all land inside one window. */
async function burst(c: AgentpayClient, n: number, path = '/v1/wallets'): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await c.http.raw<Answer['body']>('GET', path);
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: res.body };
    }),
  );
}

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort();

let t: TestGateway;
/** the gateway's clock: windows pass when a test moves it, never while a burst is under way */
const clock = new ManualClock();
/** the next window: the clock moved past the current one */
const nextWindow = () => clock.advance(WINDOW_MS + 1);
beforeAll(async () => {
  t = await startTestGateway({ clock, config: { rateLimit } });
});
afterAll(async () => {
  await t?.close();
});

describe('the request rate limit', () => {
  it('answers the 6th request of a window 429 RATE_LIMITED in the envelope, with retry-after', async () => {
    const ws = await t.newWorkspace('Busy');
    const answers = await burst(ws.client, 6);
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 5 } });
    expect(limited.body.error!.message).toMatch(/too many requests/);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
  });

  it('counts per key: another key of the same caller IP is unaffected', async () => {
    const noisy = await t.newWorkspace('Noisy');
    const quiet = await t.newWorkspace('Quiet');
    expect(statuses(await burst(noisy.client, 7))).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(statuses(await burst(quiet.client, 5))).toEqual([200, 200, 200, 200, 200]);
    expect(statuses(await burst(noisy.client, 1))).toEqual([429]);
  });

  it('counts requests without a key per IP, apart from keyed requests', async () => {
    const anonymous = t.client();
    expect(statuses(await burst(anonymous, 6, '/health'))).toEqual([200, 200, 200, 200, 200, 429]);
    const keyed = await t.newWorkspace('Keyed');
    expect(statuses(await burst(keyed.client, 1, '/health'))).toEqual([200]);
    const limited = (await burst(anonymous, 1, '/v1/platform/public-key'))[0]!;
    expect(limited.status).toBe(429);
    expect(limited.body.error?.code).toBe('RATE_LIMITED');
    expect(limited.retryAfter).not.toBeNull();
  });

  it('counts requests to paths no route serves, on the same budget', async () => {
    const ws = await t.newWorkspace('Prober');
    const answers = await burst(ws.client, 6, '/v1/no-such-route');
    expect(statuses(answers)).toEqual([404, 404, 404, 404, 404, 429]);
    expect(answers.find((a) => a.status === 429)!.body.error?.code).toBe('RATE_LIMITED');
    expect(statuses(await burst(ws.client, 1))).toEqual([429]);
  });

  it('lets requests through again once the window has passed', async () => {
    const ws = await t.newWorkspace('Patient');
    expect(statuses(await burst(ws.client, 6))).toContain(429);
    nextWindow();
    expect(statuses(await burst(ws.client, 5))).toEqual([200, 200, 200, 200, 200]);
  });

  it('counts made-up keys per IP, so a new fake key per request does not escape the limit', async () => {
    nextWindow(); // a fresh window for this IP
    const fake = (i: number) => t.client(`ap_w_${String(i).padStart(32, 'x')}`);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => burst(fake(i), 1).then((a) => a[0]!)));
    expect(statuses(answers)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(statuses(await burst(t.client(), 1, '/health'))).toEqual([429]);
    // a real key from the same IP keeps its own budget
    expect(statuses(await burst(t.workspace, 1))).toEqual([200]);
  });
});

describe('the rate limit behind a trusted proxy', () => {
  let gw: RunningGateway;
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-ratelimit-'));
  beforeAll(async () => {
    gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, tls: false, httpPort: null, port: 0, clock: new ManualClock(), config: { trustProxy: true, rateLimit } });
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts per client IP from x-forwarded-for, not per proxy', async () => {
    const from = (ip: string) =>
      Promise.all(Array.from({ length: 6 }, () => fetch(`${gw.baseUrl}/health`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': ip } }).then((r) => r.status)));
    expect((await from('203.0.113.7')).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await from('198.51.100.9')).sort()).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('the rate limit on POST /v1/x402/batch', () => {
  it('counts a batch as one request on the general limit; its operations count on the payment limits', async () => {
    nextWindow(); // a fresh window
    const seller = await t.newProvider();
    const op = { op: 'challenge' as const, capabilityId: 'cap_unknown' };
    // 10 challenge operations, twice the general limit of 5, in one request
    expect((await seller.client.payments.batch(Array(10).fill(op))).map((r) => r.status)).toEqual(Array(10).fill(404));
    // the batch spent 1 of the 5 general requests: 4 more fit, then none
    expect(statuses(await burst(seller.client, 5))).toEqual([200, 200, 200, 200, 429]);
  });
});
