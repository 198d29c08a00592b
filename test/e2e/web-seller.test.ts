/**
 * The web-standard seller (`agentpay-sdk/seller/web`, Request → Response) end to end without any
 * server: plain `Request` objects go straight into the wrapped handler, as Next.js route handlers,
 * Workers, Bun.serve and Deno.serve call it, against the real HTTPS test gateway. The buyer is our
 * own `createBuyer`, whose seller fetch is the handler itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { decodeHeader, encodeHeader, PAYMENT_HEADER, RECEIPT_HEADER, type Receipt } from '../../packages/sdk/src/protocol.js';
import { paidHandler, type PaidContext } from '../../packages/sdk/src/seller/web.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { signProof } from '../payments/helpers.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish, sha256 } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
let handler: (req: Request) => Promise<Response>;
const ORIGIN = 'https://app.example';
/** handler runs per path, and the paid call each saw */
const handled: Record<string, number> = {};
const calls: PaidContext['call'][] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  handler = paidHandler({
    gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca,
    routes: { '/forecast': capabilityId, '/client-error': capabilityId, '/throws': capabilityId, '/slow': capabilityId, '/empty': capabilityId, 'POST /echo': capabilityId },
    handlerTimeoutMs: 300,
    cors: { origin: ORIGIN },
    onError: () => {},
  }, async (req, { call }) => {
    const path = new URL(req.url).pathname;
    handled[path] = (handled[path] ?? 0) + 1;
    calls.push(call);
    switch (path) {
      case '/forecast':
        // a streamed body in several chunks: the hash covers all of it
        return new Response(new ReadableStream({
          start(c) {
            for (const part of ['{"city":"Porto",', '"sunny":false,', '"tempC":17}']) c.enqueue(new TextEncoder().encode(part));
            c.close();
          },
        }), { headers: { 'content-type': 'application/json', 'x-seller': 'web', 'access-control-expose-headers': 'x-seller' } });
      case '/client-error':
        return Response.json({ error: { code: 'BAD_CITY', message: 'city is required' } }, { status: 422 });
      case '/throws':
        throw new Error('kaboom');
      case '/slow':
        await sleep(1000);
        return Response.json({ late: true });
      case '/empty':
        return new Response(null, { status: 204, headers: { 'x-empty': 'yes' } });
      case '/echo':
        return new Response(await req.text(), { headers: { 'content-type': 'text/plain' } });
      default:
        return new Response('free', { headers: { 'content-type': 'text/plain' } });
    }
  });
});
afterAll(async () => {
  await t?.close();
});

const SELLER = 'https://seller.example';
/** A buyer whose "network" is the wrapped handler, called with a plain Request. */
const buyerFor = (a: { walletId: string; privateKeyPem: string }) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: (async (input: RequestInfo | URL, init?: RequestInit) => handler(new Request(input, init))) as typeof fetch });
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const balanceOf = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;

describe('paidHandler with a plain Request', () => {
  it('answers an unpaid call 402 with the challenge, JSON, the payment headers exposed, without running the handler', async () => {
    const res = await handler(new Request(`${SELLER}/forecast`, { headers: { origin: ORIGIN } }));
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('access-control-expose-headers')).toBe('x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const body = (await res.json()) as { error: { code: string }; challenge: Record<string, unknown> };
    expect(body.error.code).toBe('PAYMENT_REQUIRED');
    expect(body.challenge).toMatchObject({ capabilityId, providerId: t.creds.provider.id, amountMinor: '100', currency: 'USD', payTo: t.creds.provider.walletId });
    expect(handled['/forecast']).toBeUndefined();
  });

  it('sells a paid call: the exact streamed bytes hashed, the receipt header, 100 paid as 97 to the seller and 3 to the platform', async () => {
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const res = await buyerFor(a).fetch(`${SELLER}/forecast`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe('{"city":"Porto","sunny":false,"tempC":17}');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-seller')).toBe('web');
    // the handler's own exposed header is kept, the payment headers added
    expect(res.headers.get('access-control-expose-headers')).toBe('x-seller, x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const receipt = res.receipt!;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, responseHash: sha256(body), amount: { amountMinor: '100', currency: 'USD' } });
    expect(decodeHeader<Receipt>(res.headers.get(RECEIPT_HEADER)!)).toEqual(receipt);
    expect(calls.at(-1)).toMatchObject({ walletId: a.walletId, capabilityId, amountMinor: '100', currency: 'USD', transactionId: receipt.transactionId });
    expect(await balanceOf(a.walletId)).toBe('900');
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    expect((await platformRevenue(t)) - platformBefore).toBe(3n);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('passes the request body to the handler of a paid POST', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${SELLER}/echo`, { method: 'POST', body: 'hello seller' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello seller');
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256('hello seller') });
  });

  it('fails a 4xx as client_error with a failed receipt and refunds the buyer', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${SELLER}/client-error`);
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect(await balanceOf(a.walletId)).toBe('100');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 0 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('turns a handler that threw into 500 INTERNAL, fails it as provider_error and refunds the buyer', async () => {
    const a = await fundedAgent(t, '100');
    const sellerBefore = await sellerBalance();
    const res = await buyerFor(a).fetch(`${SELLER}/throws`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'INTERNAL' } });
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect(await balanceOf(a.walletId)).toBe('100');
    expect(await sellerBalance()).toBe(sellerBefore);
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('answers 504 HANDLER_TIMEOUT past handlerTimeoutMs, with a failed receipt and no hold left', async () => {
    const a = await fundedAgent(t, '100');
    const started = Date.now();
    const res = await buyerFor(a).fetch(`${SELLER}/slow`);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { code: 'HANDLER_TIMEOUT', details: { timeoutMs: 300 } } });
    expect(res.receipt).toMatchObject({ status: 'failed' });
    expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '100', availableMinor: '100' });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('sends a paid 204 without a body, hashing the empty body it sends', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${SELLER}/empty`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256('') });
    expect(res.headers.get('content-length')).toBeNull();
  });

  it('answers a CORS preflight of a paid route itself, allowing x-payment', async () => {
    const before = handled['/forecast'] ?? 0;
    const pre = await handler(new Request(`${SELLER}/forecast`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'content-type' } }));
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type, x-payment, payment-signature, authorization, idempotency-key, accept-payment, x-agentpay-session-open, x-agentpay-voucher, x-agentpay-session-close');
    expect(pre.headers.get('access-control-expose-headers')).toBe('x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
    expect(handled['/forecast'] ?? 0).toBe(before);
  });

  it('answers HEAD on a paid route 405, and a proof sent with HEAD is neither used nor charged', async () => {
    const a = await fundedAgent(t, '100');
    const challenge = ((await (await handler(new Request(`${SELLER}/forecast`))).json()) as { challenge: Record<string, string> }).challenge;
    const proof = encodeHeader(signProof(challenge as never, a));
    const head = await handler(new Request(`${SELLER}/forecast`, { method: 'HEAD', headers: { [PAYMENT_HEADER]: proof } }));
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET');
    expect(await balanceOf(a.walletId)).toBe('100');
    // the same proof still buys the GET
    const get = await handler(new Request(`${SELLER}/forecast`, { headers: { [PAYMENT_HEADER]: proof } }));
    expect(get.status).toBe(200);
    expect(get.headers.get(RECEIPT_HEADER)).toBeTruthy();
    expect(await balanceOf(a.walletId)).toBe('0');
  });

  it('passes the gateway refusal of a proof on with its status and code, without running the handler', async () => {
    const before = handled['/forecast'] ?? 0;
    const res = await handler(new Request(`${SELLER}/forecast`, { headers: { [PAYMENT_HEADER]: 'not-a-proof' } }));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/^[A-Z_]+$/);
    expect(handled['/forecast'] ?? 0).toBe(before);
  });

  it('runs a route the options do not sell as is, free', async () => {
    const res = await handler(new Request(`${SELLER}/free`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('free');
    expect(res.headers.get(RECEIPT_HEADER)).toBeNull();
    expect(calls.at(-1)).toBeUndefined();
  });
});
