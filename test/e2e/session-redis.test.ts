/**
 * Two seller instances sharing one Redis voucher store (packages/sdk/src/seller/voucher-redis-store.ts)
 * behind a load balancer, over the real HTTPS test gateway, on the backend of the run: two fastify
 * servers on 127.0.0.1, each with its own middleware and its own Redis connection, the same key
 * prefix and the same receipt key. The buyer's transport is the balancer: it sends each request to
 * the next instance, so one session's vouchers arrive at both, in parallel too. Each call is served
 * and charged once, the receipts verify against the grant's key whichever instance signed them, the
 * claims of both instances add up to what was served, and the ledger agrees. A voucher sent to both
 * instances at once is charged once (the other serves it as an idempotent retry). No instance
 * claims a call another is still serving (the shared record counts the calls in flight).
 */
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { createSellerPayments, type SellerPayments } from '../../packages/sdk/src/seller/core.js';
import { RedisVoucherStore } from '../../packages/sdk/src/seller/voucher-redis-store.js';
import { generateKeyPair } from '../../packages/sdk/src/signing.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { SESSION_RECEIPT_HEADER, type Session, type SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { decodeHeader } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { redisEnabled, TEST_REDIS_URL } from '../helpers/redis.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from './helpers.js';
import { until } from '../helpers/wait.js';

const PRICE = 10n;
const fee = (n: bigint) => (n * 300n) / 10_000n;

describe.skipIf(!redisEnabled())('two seller instances sharing a Redis voucher store', () => {
  let t: TestGateway;
  const prefix = `agentpay-test:e2e-vouchers:${randomUUID()}:`;
  const redis: Redis[] = [];
  const instances: { app: FastifyInstance; seller: SellerPayments; url: string; handled: number }[] = [];
  const errors: unknown[] = [];
  /** a call with `?hold=1` waits for this gate (set by a test), then fails */
  let gate: Promise<void> | undefined;
  let holding = 0;

  beforeAll(async () => {
    t = await startTestGateway();
    const capabilityId = await publish(t, PRICE.toString(), 'Forecast (two instances)');
    const { privateKeyPem } = await generateKeyPair(); // every instance signs receipts with it
    for (let i = 0; i < 2; i++) {
      const client = new Redis(TEST_REDIS_URL);
      redis.push(client);
      const app = Fastify();
      const seller = createSellerPayments({
        gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, onError: (e) => { errors.push(e); },
        sessions: { store: new RedisVoucherStore({ client, prefix }), privateKeyPem, claimEvery: 5, claimIntervalMs: 0 },
      });
      const instance = { app, seller, url: '', handled: 0 };
      await app.register(agentpaySeller, { seller });
      app.get('/forecast/:city', async (req, reply) => {
        instance.handled++;
        if ((req.query as { hold?: string }).hold) {
          holding++;
          await gate;
          return reply.code(502).send({ error: 'the upstream failed' });
        }
        return { city: (req.params as { city: string }).city, instance: i };
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      instance.url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      instances.push(instance);
    }
  });

  afterAll(async () => {
    for (const i of instances) {
      await i.app.close();
      await i.seller.close?.();
    }
    if (redis[0]) {
      const keys = await redis[0].keys(`${prefix}*`);
      if (keys.length > 0) await redis[0].del(...keys);
    }
    await Promise.all(redis.map((r) => r.quit()));
    await t?.close();
  });

  const BALANCER = 'http://balancer.invalid';
  /**
   * The load balancer: a request to BALANCER goes to the next instance, its answer returned as the
   * balancer's (its url too); `both`: a voucher request goes to both instances at once, the first's
   * answer returned.
   */
  function balancer(opts: { both?: (n: number) => boolean } = {}): { fetch: typeof fetch; vouchers: number; pairs: { status: number; charged: string | null }[][] } {
    let next = 0;
    const asBalancer = (res: Response, url: string) => Object.defineProperty(res, 'url', { value: url });
    const outcome = (res: Response) => {
      const receipt = res.headers.get(SESSION_RECEIPT_HEADER);
      return { status: res.status, charged: receipt ? decodeHeader<SessionReceipt>(receipt).chargedMinor : null };
    };
    const state = { vouchers: 0, pairs: [] as { status: number; charged: string | null }[][], fetch: (async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (!url.startsWith(BALANCER)) return fetch(input, init);
      const path = url.slice(BALANCER.length);
      if (new Headers(init?.headers).has('x-agentpay-voucher') && opts.both?.(++state.vouchers)) {
        const [first, second] = await Promise.all(instances.map((i) => fetch(i.url + path, init)));
        await second!.arrayBuffer();
        state.pairs.push([outcome(first!), outcome(second!)]);
        return asBalancer(first!, url);
      }
      return asBalancer(await fetch(instances[next++ % instances.length]!.url + path, init), url);
    }) as typeof fetch };
    return state;
  }

  const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);
  const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

  it('serves and charges each call once across both instances, and the claims of both add up in the ledger', async () => {
    const a = await fundedAgent(t, '10000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const handledBefore = instances.map((i) => i.handled);
    const lb = balancer();
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: lb.fetch });
    const receipts = [];
    for (let i = 0; i < 20; i++) {
      const res = await buyer.fetch(`${BALANCER}/forecast/Porto`);
      expect(res.status).toBe(200);
      receipts.push(res.sessionReceipt);
    }
    // parallel calls of the one session, spread over both instances
    const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => buyer.fetch(`${BALANCER}/forecast/City${i}`)));
    expect(parallel.map((r) => r.status)).toEqual(Array(20).fill(200));
    receipts.push(...parallel.map((r) => r.sessionReceipt));

    // every answer carries a receipt the buyer verified against the grant's key, whichever instance signed it
    expect(receipts.every((r) => r?.chargedMinor === '10')).toBe(true);
    expect(new Set(receipts.map((r) => r!.sequence)).size).toBe(40);
    const served = instances.map((inst, i) => inst.handled - handledBefore[i]!);
    expect(served[0]! + served[1]!).toBe(40);
    expect(served.every((n) => n > 0)).toBe(true);
    const [open] = await sessionsOf(a.walletId);
    expect(open).toMatchObject({ status: 'open' });
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    // both instances claim (every 5 vouchers each); the session's claimed amount never passes what was served
    await until(async () => BigInt((await t.workspace.sessions.get(open!.id)).claimedMinor) > 0n, 'a claim by the instances');
    expect(BigInt((await t.workspace.sessions.get(open!.id)).claimedMinor)).toBeLessThanOrEqual(40n * PRICE);

    const [closed] = await buyer.close();
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: String(40n * PRICE), heldMinor: '0', feeMinor: String(fee(40n * PRICE)) });
    const b = await t.workspace.wallets.balance(a.walletId);
    expect(b).toMatchObject({ balanceMinor: String(10000n - 40n * PRICE), availableMinor: String(10000n - 40n * PRICE) });
    expect(await sellerBalance()).toBe(sellerBefore + 40n * PRICE - fee(40n * PRICE));
    expect(await platformRevenue(t)).toBe(platformBefore + fee(40n * PRICE));
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
    // the closed session is gone from the shared store
    expect(await new RedisVoucherStore({ client: redis[0]!, prefix }).get(open!.id)).toBeUndefined();
  });

  it('charges a voucher sent to both instances at once only once', async () => {
    const a = await fundedAgent(t, '10000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const handledBefore = instances.map((i) => i.handled);
    // every third voucher goes to both instances at the same moment (a balancer's retry, a replay)
    const lb = balancer({ both: (n) => n % 3 === 0 });
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: lb.fetch });
    const charged: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await buyer.fetch(`${BALANCER}/forecast/Faro`);
      expect(res.status).toBe(200);
      charged.push(res.sessionReceipt!.chargedMinor);
    }
    // a doubled voucher: accepted and charged by one instance; at the other an idempotent retry
    // (served, charged 0) or, for a voucher the seller's state had passed, refused by both (402)
    expect(lb.pairs.length).toBeGreaterThan(0);
    for (const pair of lb.pairs) {
      expect(pair.filter((o) => o.charged === '10').length).toBeLessThanOrEqual(1);
      expect(pair.every((o) => (o.status === 200 && (o.charged === '10' || o.charged === '0')) || o.status === 402)).toBe(true);
    }
    expect(lb.pairs.some((pair) => pair.map((o) => o.charged).sort().join() === '0,10')).toBe(true);
    // the buyer got either answer: the one that charged (10) or the retry's (0; its next voucher resyncs)
    expect(charged.every((c) => c === '10' || c === '0')).toBe(true);
    // every handler run: the 12 calls, and each retry served again
    const retries = lb.pairs.flat().filter((o) => o.charged === '0').length;
    expect(instances.reduce((n, inst, i) => n + inst.handled - handledBefore[i]!, 0)).toBe(12 + retries);
    const [closed] = await buyer.close();
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: String(12n * PRICE), heldMinor: '0' });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe(String(10000n - 12n * PRICE));
    expect(await sellerBalance()).toBe(sellerBefore + 12n * PRICE - fee(12n * PRICE));
    expect(await platformRevenue(t)).toBe(platformBefore + fee(12n * PRICE));
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });

  it('claims no call another instance is still serving, nor one that then failed', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: balancer().fetch });
    for (let i = 0; i < 2; i++) expect((await buyer.fetch(`${BALANCER}/forecast/Porto`)).status).toBe(200);
    const [open] = await sessionsOf(a.walletId);
    let release = () => {};
    gate = new Promise<void>((r) => { release = r; });
    holding = 0;
    const held = buyer.fetch(`${BALANCER}/forecast/Porto?hold=1`);
    await until(() => holding === 1, 'the held call to reach its handler');
    // both instances claim while one serves the held call: neither claims it
    await Promise.all(instances.map((i) => i.seller.sessions!.claim()));
    expect(await t.workspace.sessions.get(open!.id)).toMatchObject({ claimedMinor: '20' });
    expect(await new RedisVoucherStore({ client: redis[0]!, prefix }).get(open!.id)).toMatchObject({ spentMinor: '30', inFlightMinor: '10' });
    release();
    const failed = await held;
    expect(failed.status).toBe(502);
    expect(failed.sessionReceipt).toBeNull();
    // it failed: its price went back to the session's credit, and there is still nothing more to claim
    expect(await new RedisVoucherStore({ client: redis[0]!, prefix }).get(open!.id)).toMatchObject({ spentMinor: '20', inFlightMinor: '0' });
    await Promise.all(instances.map((i) => i.seller.sessions!.claim()));
    expect(await t.workspace.sessions.get(open!.id)).toMatchObject({ claimedMinor: '20' });
    expect((await buyer.fetch(`${BALANCER}/forecast/Porto`)).status).toBe(200);
    const [closed] = await buyer.close();
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '30', heldMinor: '0' });
    expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '970', availableMinor: '970' });
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });

  it('refuses to start a seller on a shared store without the receipt key every instance shares', () => {
    const store = new RedisVoucherStore({ client: redis[0]!, prefix });
    let thrown: unknown;
    try {
      createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId: 'cap_x', sessions: { store } });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(AgentpayError);
    expect(thrown).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'sessions.privateKeyPem' } });
    expect((thrown as Error).message).toMatch(/never kept in Redis/);
  });
});
