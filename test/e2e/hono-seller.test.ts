/**
 * The hono adapter (`agentpay-sdk/seller/hono`) end to end: a hono app on @hono/node-server on
 * 127.0.0.1, bought by our own buyer (`createBuyer`) against the real HTTPS test gateway.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { decodeHeader, RECEIPT_HEADER, type Receipt } from '../../packages/sdk/src/protocol.js';
import { agentpayHono, type AgentpayVariables } from '../../packages/sdk/src/seller/hono.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish, sha256 } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
let server: ServerType;
let url: string;
const handled: Record<string, number> = {};
const count = (route: string) => (handled[route] = (handled[route] ?? 0) + 1);

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  const app = new Hono<{ Variables: AgentpayVariables }>();
  app.use('/paid/*', agentpayHono({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, cors: { origin: '*' }, onError: () => {} }));
  app.get('/paid/forecast/:city', (c) => {
    count('forecast');
    c.header('x-handled-by', 'hono');
    return c.json({ city: c.req.param('city'), sunny: true, walletId: c.get('agentpayCall')?.walletId });
  });
  app.get('/paid/throws', () => {
    count('throws');
    throw new Error('kaboom');
  });
  app.get('/paid/unauthorized', () => {
    count('unauthorized');
    throw new HTTPException(401, { message: 'sign in first' });
  });
  app.get('/free', (c) => c.text('free'));
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
});

const buyerFor = (a: { walletId: string; privateKeyPem: string }) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const balanceOf = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;

describe('agentpayHono on @hono/node-server', () => {
  it('answers an unpaid call 402 with the challenge and never runs the handler', async () => {
    const res = await fetch(`${url}/paid/forecast/Porto`);
    expect(res.status).toBe(402);
    expect(res.headers.get('access-control-expose-headers')).toBe('x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
    expect(((await res.json()) as { challenge: { amountMinor: string; capabilityId: string } }).challenge).toMatchObject({ amountMinor: '100', capabilityId });
    expect(handled.forecast).toBeUndefined();
  });

  it('sells a call to our buyer: the ledger moves 100, 97 to the seller and 3 to the platform, with the receipt header', async () => {
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const res = await buyerFor(a).fetch(`${url}/paid/forecast/Faro`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-handled-by')).toBe('hono');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ city: 'Faro', sunny: true, walletId: a.walletId });
    const receipt = res.receipt!;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, responseHash: sha256(body), amount: { amountMinor: '100', currency: 'USD' } });
    expect(decodeHeader<Receipt>(res.headers.get(RECEIPT_HEADER)!)).toEqual(receipt);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(await balanceOf(a.walletId)).toBe('900');
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    expect((await platformRevenue(t)) - platformBefore).toBe(3n);
    expect(handled.forecast).toBe(1);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('settles a handler that threw (answered 500 by hono) as a provider error and refunds the buyer', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${url}/paid/throws`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect(await balanceOf(a.walletId)).toBe('100');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('settles an HTTPException 4xx as a client error: failed receipt, refund, nothing toward the breaker', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${url}/paid/unauthorized`);
    expect(res.status).toBe(401);
    const body = await res.text();
    expect(body).toBe('sign in first');
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(body) });
    expect(await balanceOf(a.walletId)).toBe('100');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 0 });
  });

  it('answers CORS preflights of paid routes and leaves free routes alone', async () => {
    const pre = await fetch(`${url}/paid/forecast/Porto`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-payment' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toContain('x-payment');
    const unpaid = await fetch(`${url}/paid/forecast/Porto`, { headers: { origin: 'https://app.example' } });
    expect(unpaid.headers.get('access-control-allow-origin')).toBe('*');
    const free = await fetch(`${url}/free`);
    expect(free.status).toBe(200);
    expect(await free.text()).toBe('free');
    expect(free.headers.get(RECEIPT_HEADER)).toBeNull();
  });
});
