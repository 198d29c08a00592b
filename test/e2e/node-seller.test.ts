/**
 * The node:http adapter end to end: a plain node:http seller on 127.0.0.1 wrapping its
 * handler with `paid()` (and the middleware form in a connect-style chain), the real
 * HTTPS test gateway, and the buyer client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { RECEIPT_HEADER, decodeHeader, type Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, publish, sha256, startNodeSeller, type RunningSeller } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  seller = await startNodeSeller(t, capabilityId);
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

const buyerFor = (a: { walletId: string; privateKeyPem: string }) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });

describe('paid(handler) on node:http', () => {
  it('answers an unpaid call 402 without running the handler', async () => {
    const res = await fetch(`${seller.url}/forecast`);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { challenge: { amountMinor: string } }).challenge.amountMinor).toBe('100');
    expect(seller.log.handled.forecast).toBeUndefined();
  });

  it('buffers writeHead, several writes and end, hashes those exact bytes and settles 97/3', async () => {
    const a = await fundedAgent(t, '300');
    const sellerBefore = BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
    const res = await buyerFor(a).fetch(`${seller.url}/forecast`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await res.text();
    expect(body).toBe('{"city":"Porto","sunny":false,"tempC":17}');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256(body), amount: { amountMinor: '100', currency: 'USD' } });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('200');
    expect(BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor) - sellerBefore).toBe(97n);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('fails a 4xx as client_error with a failed receipt and refunds the buyer', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/client-error`);
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('100');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 0 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('turns a handler that threw into a 500, drops its partial output, fails provider_error and refunds', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/throws`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).not.toContain('partial output');
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'INTERNAL' } });
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('100');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
  });
});

describe('CORS on the node adapter', () => {
  it('answers a preflight allowing x-payment and lets the origin read the protocol headers', async () => {
    const s = await startNodeSeller(t, capabilityId, { cors: { origin: 'https://app.example' } });
    try {
      const pre = await fetch(`${s.url}/forecast`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-payment, content-type' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(pre.headers.get('access-control-allow-headers')).toBe('x-payment, content-type, payment-signature, authorization, idempotency-key, accept-payment, x-agentpay-session-open, x-agentpay-voucher, x-agentpay-session-close');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET');
      const unpaid = await fetch(`${s.url}/forecast`, { headers: { origin: 'https://app.example' } });
      expect(unpaid.status).toBe(402);
      expect(unpaid.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(unpaid.headers.get('access-control-expose-headers')).toBe('x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
      expect(s.log.handled.forecast).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});

describe('CORS with per-method routes', () => {
  it('answers the preflight of a route keyed by method ("GET /forecast") by the method it asks for', async () => {
    const s = await startNodeSeller(t, capabilityId, { cors: { origin: '*' }, capabilityId: undefined, routes: { 'GET /forecast': capabilityId } });
    try {
      const pre = await fetch(`${s.url}/forecast`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-payment' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-headers')).toContain('x-payment');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET');
      expect(s.log.handled.forecast).toBeUndefined(); // the handler did not answer the preflight
      expect((await fetch(`${s.url}/forecast`)).status).toBe(402);
    } finally {
      await s.close();
    }
  });
});

describe('paidMiddleware in a connect-style chain', () => {
  it('calls next only after authorization and settles what the route handler sent', async () => {
    const unpaid = await fetch(`${seller.url}/mw`);
    expect(unpaid.status).toBe(402);
    expect(seller.log.handled.mw).toBeUndefined();

    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/mw`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe('from the middleware chain');
    expect(res.receipt?.responseHash).toBe(sha256(body));
    expect(seller.log.handled.mw).toBe(1);
  });
});

describe('a gateway that cannot be reached when the call completes', () => {
  it('retries complete with backoff and still delivers the receipt', async () => {
    const trusting = fetchTrusting(t.ca);
    let completeAttempts = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/v1/x402/complete') && ++completeAttempts <= 2) throw new TypeError('fetch failed: ECONNRESET');
      return trusting(input, init);
    };
    const errors: string[] = [];
    const s = await startNodeSeller(t, capabilityId, { fetch: flaky, completeRetry: { attempts: 4, baseDelayMs: 10 }, onError: (_e, c) => errors.push(c.stage) });
    try {
      const a = await fundedAgent(t, '100');
      const res = await buyerFor(a).fetch(`${s.url}/forecast`);
      expect(res.status).toBe(200);
      expect(res.receipt?.status).toBe('success');
      expect(completeAttempts).toBe(3);
      expect(errors).toEqual([]);
      expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('0');
    } finally {
      await s.close();
    }
  });

  it('keeps the transaction authorized and durable when every retry fails; a later complete settles it', async () => {
    const trusting = fetchTrusting(t.ca);
    const down: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/v1/x402/complete')) throw new TypeError('fetch failed: ECONNREFUSED');
      return trusting(input, init);
    };
    const reported: { stage: string; transactionId?: string }[] = [];
    const s = await startNodeSeller(t, capabilityId, { fetch: down, completeRetry: { attempts: 2, baseDelayMs: 5 }, onError: (_e, c) => reported.push(c) });
    try {
      const a = await fundedAgent(t, '100');
      const res = await buyerFor(a).fetch(`${s.url}/forecast`);
      // the buyer got the bytes, without a receipt; the hold stays until complete or the sweeper
      expect(res.status).toBe(200);
      expect(res.receipt).toBeNull();
      const body = await res.text();
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '100', availableMinor: '0', currency: 'USD' });
      expect(reported).toHaveLength(1);
      expect(reported[0]!.stage).toBe('complete');

      // once the gateway is back, the same complete settles it
      const { receipt } = await t.provider.payments.complete({ transactionId: reported[0]!.transactionId!, responseHash: sha256(body) });
      expect((receipt as Receipt).status).toBe('success');
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '0', availableMinor: '0', currency: 'USD' });
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await s.close();
    }
  });

  it('answers 503 GATEWAY_UNAVAILABLE when authorization cannot reach the gateway; nothing charged, handler not run', async () => {
    const trusting = fetchTrusting(t.ca);
    const down: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/v1/x402/authorize')) throw new TypeError('fetch failed: ECONNREFUSED');
      return trusting(input, init);
    };
    const s = await startNodeSeller(t, capabilityId, { fetch: down, onError: () => {} });
    try {
      const a = await fundedAgent(t, '100');
      const e = await buyerFor(a).fetch(`${s.url}/forecast`).catch((err: unknown) => err);
      expect(e).toMatchObject({ name: 'AgentpayError', code: 'GATEWAY_UNAVAILABLE', status: 503 });
      // the hold's lifetime is the gateway's (the authorization's expiresAt, which never arrived): no number in the words
      expect((e as Error).message).toContain('a hold the gateway may have placed is released when its authorization expires');
      expect((e as Error).message).not.toMatch(/\d+ (seconds|minutes|hours)/);
      expect(s.log.handled.forecast).toBeUndefined();
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '100', availableMinor: '100', currency: 'USD' });
    } finally {
      await s.close();
    }
  });

  it('encodes the receipt header as base64url JSON', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/forecast`);
    const header = res.headers.get(RECEIPT_HEADER)!;
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeHeader(header)).toEqual(res.receipt);
  });
});
