/**
 * The rate limits across a fleet: two gateways on one data directory (so one set of keys)
 * and one real Redis count every limit together. When Redis stops answering, each gateway
 * keeps serving and counts in its own process (fail open to local limits) until Redis answers
 * again; a Redis that cannot be reached at start refuses the start. Redis is reached through a
 * TCP relay in the test, so that it can be cut without touching the shared Redis. Every test
 * uses its own random key prefix, deleted afterwards.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startGateway } from '../../src/gateway/server.js';
import { RedisUnreachableError } from '../../src/gateway/rate-counter.js';
import { backendOptions, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { hashOf, newSeller } from '../payments/helpers.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { redisEnabled, TEST_REDIS_URL } from '../helpers/redis.js';
import { rmSync } from 'node:fs';

const REDIS_URL = TEST_REDIS_URL;
// lazy: without a Redis to test against (redisEnabled) nothing connects
const redis = new Redis(REDIS_URL, { lazyConnect: true });
const prefixes: string[] = [];
const newPrefix = () => {
  const p = `agentpay-test:${randomBytes(6).toString('hex')}:`;
  prefixes.push(p);
  return p;
};
const keysUnder = (prefix: string) => redis.keys(`${prefix}*`);

afterAll(async () => {
  for (const p of prefixes) {
    const keys = await keysUnder(p);
    if (keys.length) await redis.del(...keys);
  }
  redis.disconnect();
});

/** A TCP relay to Redis that the test can cut (`close`) or make silent (`mute`). */
async function relay(port = 0) {
  const target = new URL(REDIS_URL);
  const sockets = new Set<net.Socket>();
  let muted = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d) => {
      if (!muted) upstream.write(d);
    });
    upstream.on('data', (d) => client.write(d));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((res) => server.listen(port, '127.0.0.1', () => res()));
  const p = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    mute: () => (muted = true),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

const config = (url: string, keyPrefix: string) => ({
  redis: { url, keyPrefix },
  rateLimit: { max: 10, windowMs: 60_000, signupMax: 10, signupWindowMs: 60_000, paymentMax: 4, paymentWindowMs: 60_000 },
});

describe.skipIf(!redisEnabled())('two gateways sharing one Redis', () => {
  let a: TestGateway;
  let b: TestGateway;
  const prefix = newPrefix();
  beforeAll(async () => {
    a = await startTestGateway({ config: config(REDIS_URL, prefix), keepDataDir: true });
    b = await startTestGateway({ config: config(REDIS_URL, prefix), dataDir: a.dataDir });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    if (a) rmSync(a.dataDir, { recursive: true, force: true });
  });

  it('count one general limit per key: 10 requests spread over both, the 11th refused by either', async () => {
    const s = await newSeller(a);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await (i % 2 ? b : a).client(s.apiKey).http.raw('GET', '/v1/capabilities')).status);
    expect(statuses).toEqual(Array(10).fill(200));
    for (const gw of [a, b]) {
      const res = await gw.client(s.apiKey).http.raw<{ error: { code: string; details: { limit: number } } }>('GET', '/v1/capabilities');
      expect(res.status).toBe(429);
      expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 10 } });
    }
    // the counter is in Redis, under the prefix, with the 12 requests on it (no key in clear)
    const keys = await keysUnder(`${prefix}g:k:`);
    const counts = await Promise.all(keys.map((k) => redis.get(k)));
    expect(counts).toContain('12');
    expect(keys.every((k) => !k.includes(s.apiKey))).toBe(true);
    // another key is not affected
    expect((await b.provider.http.raw('GET', '/v1/capabilities')).status).toBe(200);
  });

  it('count one payment operation limit per key and operation', async () => {
    const s = await newSeller(a);
    const body = { transactionId: 'txn_' + '0'.repeat(32), responseHash: hashOf('x') };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await (i % 2 ? b : a).client(s.apiKey).http.raw('POST', '/v1/x402/complete', { body })).status);
    expect(statuses).toEqual([404, 404, 404, 404, 429]);
    const batch = await a.client(s.apiKey).http.raw<{ error: { details: Record<string, unknown> } }>('POST', '/v1/x402/batch', { body: { operations: [{ op: 'complete', ...body }] } });
    expect(batch.status).toBe(429);
    expect(batch.body.error.details).toMatchObject({ operation: 'complete', remaining: 0 });
    // fail counts on its own counter
    expect((await b.client(s.apiKey).http.raw('POST', '/v1/x402/fail', { body: { transactionId: body.transactionId, reason: 'client_error' } })).status).toBe(404);
  });
});

describe.skipIf(!redisEnabled())('when Redis stops answering', () => {
  let r: Awaited<ReturnType<typeof relay>>;
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await r?.close().catch(() => {});
  });

  it('keeps serving and counts in the gateway itself (fail open to local limits), and counts in Redis again once it answers', async () => {
    const prefix = newPrefix();
    r = await relay();
    t = await startTestGateway({ config: config(r.url, prefix) });
    const s = await newSeller(t);
    const get = async () => (await t!.client(s.apiKey).http.raw('GET', '/v1/capabilities')).status;
    for (let i = 0; i < 3; i++) expect(await get()).toBe(200);
    expect((await keysUnder(`${prefix}g:k:`)).length).toBe(1);
    await r.close(); // Redis is gone: refused connections from now on
    // served, counted in process: its own full limit of 10, then 429
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await get());
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    // payment operations too
    const body = { transactionId: 'txn_' + '0'.repeat(32), responseHash: hashOf('x') };
    const pay: number[] = [];
    for (let i = 0; i < 5; i++) pay.push((await t.client(s.apiKey).http.raw('POST', '/v1/x402/complete', { body })).status);
    expect(pay).toEqual([404, 404, 404, 404, 429]);
    // Redis back on the same port: within a retry interval the gateway counts there again
    r = await relay(r.port);
    const other = await newSeller(t);
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      await t.client(other.apiKey).http.raw('GET', '/health');
      back = (await keysUnder(`${prefix}g:`)).length > 1;
      if (!back) await new Promise((res) => setTimeout(res, 50));
    }
    expect(back).toBe(true);
  });

  it('answers without waiting on a Redis that accepts but never replies', async () => {
    const prefix = newPrefix();
    r = await relay();
    t = await startTestGateway({ config: config(r.url, prefix) });
    const s = await newSeller(t);
    expect((await t.client(s.apiKey).http.raw('GET', '/v1/capabilities')).status).toBe(200);
    r.mute();
    // each command times out (250 ms), then the gateway counts in process; no request hangs
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await t.client(s.apiKey).http.raw('GET', '/v1/capabilities')).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
  });
});

describe('a Redis that cannot be reached at start', () => {
  it('refuses the start, naming the URL without its password', async () => {
    const closed = await relay();
    await closed.close();
    const dirs = tempDirs('agentpay-redis-');
    const dir = dirs.make();
    const err = await startGateway({ ...(await backendOptions(dir)), dataDir: dir, port: 0, httpPort: 0, config: { redis: { url: `redis://agentpay:s3cret-pw@127.0.0.1:${closed.port}` } } }).then(
      () => {
        throw new Error('the gateway started without its Redis');
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisUnreachableError);
    expect((err as Error).message).toContain(`could not connect to Redis at redis://127.0.0.1:${closed.port}`);
    expect((err as Error).message).not.toContain('s3cret-pw');
    dirs.removeAll();
  });
});
