/**
 * Idempotent retries of paid calls (issue 18 part 4, docs/protocol.md § Idempotent retries):
 * a real gateway, a real fastify seller and our own buyer. A retry with the same key and the
 * same request is charged once and answered the first answer with the first receipt; the same
 * key for another request is refused with 409; concurrent retries charge once; a key is kept
 * 24 hours. Runs on SQLite, and on PostgreSQL in the postgres project.
 */
import type { AddressInfo } from 'node:net';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { createAgentpayX402Scheme, decodeX402Header } from '../../packages/sdk/src/interop/x402.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { paidHandler } from '../../packages/sdk/src/seller/web.js';
import type { Receipt, Replay } from '../../packages/sdk/src/types.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { fetchTrusting, fundedAgent, platformRevenue, publish, expectLedgerConsistent, type AgentWallet } from '../e2e/helpers.js';
import { hashOf, refused, signProof } from './helpers.js';

const HOUR = 60 * 60 * 1000;
const clock = new ManualClock(Date.now());
let t: TestGateway;
let capabilityId: string;
let slowCapabilityId: string;
let app: FastifyInstance;
let sellerUrl: string;
const handled: Record<string, number> = {};
/** released by the concurrency test: the slow handler waits for it */
let releaseSlow: () => void = () => {};
let slowGate: Promise<void> = Promise.resolve();

beforeAll(async () => {
  t = await startTestGateway({ clock });
  capabilityId = await publish(t, '100', 'Orders');
  slowCapabilityId = await publish(t, '100', 'Slow orders');
  app = Fastify({ https: { cert: t.gw.tls!.cert, key: t.gw.tls!.key } });
  await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, batch: false });
  let n = 0;
  app.post<{ Body: { item: string } }>('/order', { config: { agentpay: { capabilityId } } }, async (request) => {
    handled.order = (handled.order ?? 0) + 1;
    // a different answer each time the handler runs: a replay must be the first one, byte for byte
    return { ordered: request.body.item, orderNo: ++n };
  });
  let flaky = 0;
  app.post('/flaky', { config: { agentpay: { capabilityId } } }, async (_request, reply) => {
    handled.flaky = (handled.flaky ?? 0) + 1;
    if (++flaky === 1) return reply.code(503).send({ error: { code: 'UPSTREAM_DOWN', message: 'try again' } });
    return { ok: true, attempt: flaky };
  });
  app.post('/slow', { config: { agentpay: { capabilityId: slowCapabilityId } } }, async () => {
    handled.slow = (handled.slow ?? 0) + 1;
    await slowGate;
    return { slow: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  sellerUrl = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const buyerOf = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: fetchTrusting(t.ca), now: () => clock.now() });
const post = (key: string | undefined, body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
  body: JSON.stringify(body),
});
const newKey = () => `key-${Math.random().toString(36).slice(2)}-${Date.now()}`;
const balance = async (a: AgentWallet) => (await t.workspace.wallets.balance(a.walletId)).balanceMinor;

describe('a retry with the same idempotency key and the same request', () => {
  it('is charged once and answered the first answer, byte for byte, with the first receipt; the handler runs once', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerOf(a);
    const key = newKey();
    const revenue = await platformRevenue(t);
    const before = handled.order ?? 0;

    const first = await buyer.fetch(`${sellerUrl}/order`, post(key, { item: 'tea' }));
    expect(first.status).toBe(200);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    expect(first.receipt?.status).toBe('success');

    const again = await buyer.fetch(`${sellerUrl}/order`, post(key, { item: 'tea' }));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(Buffer.from(await again.arrayBuffer())).toEqual(firstBytes);
    // verified by the buyer against the platform key and the bytes received
    expect(again.receipt).toEqual(first.receipt);

    expect((handled.order ?? 0) - before).toBe(1);
    expect(await balance(a)).toBe('900');
    expect((await platformRevenue(t)) - revenue).toBe(3n);
    await expectLedgerConsistent(t.workspace, a.walletId);
    // one transaction, one receipt
    const { receipts } = await t.workspace.receipts.list();
    expect(receipts.filter((r: Receipt) => r.consumerId === a.walletId)).toHaveLength(1);
  });

  it('without a key, the same request twice is two calls, charged twice (unchanged)', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerOf(a);
    const r1 = await buyer.fetch(`${sellerUrl}/order`, post(undefined, { item: 'tea' }));
    const r2 = await buyer.fetch(`${sellerUrl}/order`, post(undefined, { item: 'tea' }));
    expect(r1.receipt!.transactionId).not.toBe(r2.receipt!.transactionId);
    expect(await balance(a)).toBe('800');
  });

  it('keys are per wallet: another wallet with the same key is its own call', async () => {
    const key = newKey();
    const a = await fundedAgent(t, '1000');
    const b = await fundedAgent(t, '1000');
    const ra = await buyerOf(a).fetch(`${sellerUrl}/order`, post(key, { item: 'tea' }));
    const rb = await buyerOf(b).fetch(`${sellerUrl}/order`, post(key, { item: 'tea' }));
    expect(ra.receipt!.transactionId).not.toBe(rb.receipt!.transactionId);
    expect(await balance(a)).toBe('900');
    expect(await balance(b)).toBe('900');
  });
});

describe('the same key for another request', () => {
  it('is refused with 409 IDEMPOTENCY_KEY_REUSED: nothing charged, the handler does not run', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerOf(a);
    const key = newKey();
    await buyer.fetch(`${sellerUrl}/order`, post(key, { item: 'tea' }));
    const before = handled.order ?? 0;
    const e = await buyer.fetch(`${sellerUrl}/order`, post(key, { item: 'coffee' })).then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' });
    // another path is another request too
    await expect(buyer.fetch(`${sellerUrl}/order?x=1`, post(key, { item: 'tea' }))).rejects.toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect((handled.order ?? 0) - before).toBe(0);
    expect(await balance(a)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('a key whose first call failed', () => {
  it('is free again: the refunded call is retried and charged once', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerOf(a);
    const key = newKey();
    const r1 = await buyer.fetch(`${sellerUrl}/flaky`, post(key, {}));
    expect(r1.status).toBe(503);
    expect(r1.receipt?.status).toBe('failed');
    const r2 = await buyer.fetch(`${sellerUrl}/flaky`, post(key, {}));
    expect(r2.status).toBe(200);
    expect(r2.receipt?.status).toBe('success');
    const r3 = await buyer.fetch(`${sellerUrl}/flaky`, post(key, {}));
    expect(r3.headers.get('idempotent-replayed')).toBe('true');
    expect(r3.receipt).toEqual(r2.receipt);
    expect(await balance(a)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('concurrent retries with one key', () => {
  it('charge once: one runs, the others are told it is in progress (409) or get its answer; a later retry gets its answer', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerOf(a);
    const key = newKey();
    const before = handled.slow ?? 0;
    slowGate = new Promise((r) => { releaseSlow = r; });
    let settled = 0;
    const calls = Array.from({ length: 6 }, () => buyer.fetch(`${sellerUrl}/slow`, post(key, { n: 1 })).then(
      (res) => ({ ok: res, error: undefined }),
      (error: unknown) => ({ ok: undefined, error }),
    ).finally(() => settled++));
    // the handler holds the first until the others were answered (409 while it runs)
    await until(() => settled >= 5, 'the five retries to be answered while the first runs');
    releaseSlow();
    const results = await Promise.all(calls);
    const ok = results.filter((r) => r.ok).map((r) => r.ok!);
    const refusedOnes = results.filter((r) => r.error);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of refusedOnes) expect(r.error).toMatchObject({ status: 409, code: 'IDEMPOTENCY_IN_PROGRESS' });
    const txns = new Set(ok.map((r) => r.receipt!.transactionId));
    expect(txns.size).toBe(1);
    expect((handled.slow ?? 0) - before).toBe(1);

    const later = await buyer.fetch(`${sellerUrl}/slow`, post(key, { n: 1 }));
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.receipt!.transactionId).toBe([...txns][0]);
    expect((handled.slow ?? 0) - before).toBe(1);
    expect(await balance(a)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('at the gateway: many authorizations with one key and different proofs place one hold (the unique key decides)', async () => {
    const a = await fundedAgent(t, '1000');
    const seller = t.provider;
    const key = newKey();
    const requestHash = hashOf('POST /slow');
    const proofs = await Promise.all(Array.from({ length: 8 }, async () => signProof(await seller.payments.challenge(slowCapabilityId), a)));
    const results = await Promise.allSettled(proofs.map((payment) => seller.payments.authorize({ capabilityId: slowCapabilityId, payment, idempotencyKey: key, requestHash })));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409, code: 'IDEMPOTENCY_IN_PROGRESS' });
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '1000', availableMinor: '900', currency: 'USD' });
    const auth = (won[0] as PromiseFulfilledResult<{ transactionId: string }>).value;
    await seller.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' });
  });
});

describe('at the gateway', () => {
  it('the very proof of the first call, resent with its key (a lost answer), is a replay, not REPLAY_DETECTED', async () => {
    const a = await fundedAgent(t, '1000');
    const seller = t.provider;
    const key = newKey();
    const requestHash = hashOf('GET /x');
    const payment = signProof(await seller.payments.challenge(capabilityId), a);
    const auth = await seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash });
    expect(auth.status).toBe('authorized');
    // while it runs: in progress
    await refused(seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash }), 409, 'IDEMPOTENCY_IN_PROGRESS');
    const body = '{"hello":"world"}';
    const { receipt } = await seller.payments.complete({
      transactionId: auth.transactionId, responseHash: hashOf(body), response: { status: 201, contentType: 'application/json', body: Buffer.from(body).toString('base64') },
    });
    const replay = (await seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash })) as Replay;
    expect(replay).toMatchObject({ status: 'replayed', transactionId: auth.transactionId, walletId: a.walletId, amountMinor: '100' });
    expect(replay.receipt).toEqual(receipt);
    expect(replay.response).toEqual({ status: 201, contentType: 'application/json', body: Buffer.from(body).toString('base64') });
    // without the key it is the replayed proof it is
    await refused(seller.payments.authorize({ capabilityId, payment }), 409, 'REPLAY_DETECTED');
    // another request with the key
    await refused(seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash: hashOf('GET /y') }), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await balance(a)).toBe('900');
  });

  it('answers a replay on a challenge that expired since (the proof still names the buyer), and is kept 24 hours', async () => {
    const a = await fundedAgent(t, '1000');
    const seller = t.provider;
    const key = newKey();
    const requestHash = hashOf('GET /kept');
    const auth = await seller.payments.authorize({ capabilityId, payment: signProof(await seller.payments.challenge(capabilityId), a), idempotencyKey: key, requestHash });
    await seller.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') });
    const payment = signProof(await seller.payments.challenge(capabilityId), a);
    clock.advance(24 * HOUR - 60_000);
    const replay = (await seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash })) as Replay;
    expect(replay.status).toBe('replayed');
    expect(replay.response).toBeNull(); // the seller did not send the answer to keep
    // past 24 hours the key is forgotten: the same key is a new call (and the sweeper deletes it)
    clock.advance(2 * HOUR);
    await refused(seller.payments.authorize({ capabilityId, payment, idempotencyKey: key, requestHash }), 410, 'CHALLENGE_EXPIRED');
    await t.gw.services.sweeper.sweepOnce();
    expect(await t.gw.store.read((r) => r.paymentIdempotency.get(a.walletId, capabilityId, key))).toBeUndefined();
    const fresh = await seller.payments.authorize({ capabilityId, payment: signProof(await seller.payments.challenge(capabilityId), a), idempotencyKey: key, requestHash });
    expect(fresh.status).toBe('authorized');
    expect(fresh.transactionId).not.toBe(auth.transactionId);
    await seller.payments.fail({ transactionId: fresh.transactionId, reason: 'client_error' });
    expect(await balance(a)).toBe('900');
  });

  it('refuses a kept answer that does not hash to responseHash, and a key without requestHash', async () => {
    const a = await fundedAgent(t, '1000');
    const seller = t.provider;
    const auth = await seller.payments.authorize({ capabilityId, payment: signProof(await seller.payments.challenge(capabilityId), a), idempotencyKey: newKey(), requestHash: hashOf('r') });
    const e = await refused(seller.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('a'), response: { status: 200, body: Buffer.from('b').toString('base64') } }), 400, 'VALIDATION_FAILED');
    expect(e).toMatchObject({ details: { field: 'response.body' } });
    await seller.payments.fail({ transactionId: auth.transactionId, reason: 'client_error' });
    const payment = signProof(await seller.payments.challenge(capabilityId), a);
    await refused(seller.payments.authorize({ capabilityId, payment, idempotencyKey: newKey() }), 400, 'VALIDATION_FAILED');
  });
});

describe('the web adapter (hono renders through it) and the x402 dialect', () => {
  let webN = 0;
  const web = () => paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, batch: false, publicUrl: 'https://api.seller.example' }, async (req) => {
    handled.web = (handled.web ?? 0) + 1;
    const body = (await req.json()) as { item: string };
    return Response.json({ ordered: body.item, orderNo: ++webN });
  });
  /** a fetch that hands the request to the web handler: no socket, the handler is the seller */
  const webFetch = (handler: (req: Request) => Promise<Response>) =>
    (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => handler(new Request(input as never, init))) as typeof fetch;

  it('replays the first answer to our buyer; the body is in the fingerprint (the handler still reads it)', async () => {
    const handler = webFetch(web());
    const a = await fundedAgent(t, '1000');
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: handler, now: () => clock.now() });
    const key = newKey();
    const before = handled.web ?? 0;
    const first = await buyer.fetch('https://api.seller.example/order', post(key, { item: 'tea' }));
    expect(first.status).toBe(200);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    expect(JSON.parse(firstBytes.toString())).toMatchObject({ ordered: 'tea' });
    const again = await buyer.fetch('https://api.seller.example/order', post(key, { item: 'tea' }));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(await again.arrayBuffer())).toEqual(firstBytes);
    expect(again.receipt).toEqual(first.receipt);
    expect((handled.web ?? 0) - before).toBe(1);
    await expect(buyer.fetch('https://api.seller.example/order', post(key, { item: 'coffee' }))).rejects.toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect((handled.web ?? 0) - before).toBe(1);
    expect(await balance(a)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('a stock @x402/fetch client retrying with its payment-identifier id is charged once; the replay carries PAYMENT-RESPONSE with the first receipt', async () => {
    const handler = webFetch(web());
    const a = await fundedAgent(t, '1000');
    // the x402 idempotency key: the payment-identifier id (our scheme sends a fresh one per payment unless told)
    const key = newKey().replace(/[^a-zA-Z0-9_-]/g, '_');
    const scheme = createAgentpayX402Scheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500', paymentId: key });
    const xfetch = wrapFetchWithPayment(scheme.checkingFetch(handler), new x402Client().register('agentpay:*', scheme));
    const before = handled.web ?? 0;
    // an Idempotency-Key header too: the payment-identifier wins over it
    const first = await xfetch('https://api.seller.example/order', post('ignored-header-key', { item: 'tea' }));
    expect(first.status).toBe(200);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const firstReceipt = scheme.lastReceipt;
    expect(firstReceipt).toMatchObject({ status: 'success', consumerId: a.walletId });
    const again = await xfetch('https://api.seller.example/order', post('another-header-key', { item: 'tea' }));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(await again.arrayBuffer())).toEqual(firstBytes);
    const settled = decodeX402Header<{ success: boolean; transaction: string; extra: { receipt: Receipt } }>(again.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, transaction: firstReceipt!.transactionId });
    expect(settled.extra.receipt).toEqual(firstReceipt);
    expect((handled.web ?? 0) - before).toBe(1);
    expect(await balance(a)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
