/**
 * Metered prices through the seller SDK (docs/sdk.md § Metered prices): a capability priced 2 a
 * token, at most 50 tokens (100) a call, sold by fastify (`reply.agentpay.charge`), hono
 * (`c.get('agentpayCall').charge`, the web adapter) and node (`paidCallOf(res).charge`) sellers on
 * 127.0.0.1, bought with `createBuyer` over the real HTTPS test gateway, on the backend of the run.
 * Per call, the buyer authorizes 100 and pays what the handler reported; in a session, the voucher
 * covers 100 and the seller's claim takes what the calls used. The ledger is checked after each.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { agentpayHono, type AgentpayVariables } from '../../packages/sdk/src/seller/hono.js';
import { paid, paidCallOf } from '../../packages/sdk/src/seller/node.js';
import type { Session } from '../../packages/sdk/src/contract/sessions.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue } from './helpers.js';

const METERING = { unit: 'token', unitPriceMinor: '2', maxUnits: '50' };
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
let capabilityId: string;
let sessionCapabilityId: string;
let fastify: FastifyInstance;
let sessions: FastifyInstance;
let honoServer: ServerType;
let nodeServer: Server;
const urls = { fastify: '', hono: '', node: '', sessions: '' };

async function publishMetered(name: string): Promise<string> {
  const { capability } = await t.provider.capabilities.publish({
    name, description: 'summaries priced per token', protocol: 'rest', priceMinor: '100', category: 'text', endpoint: 'https://127.0.0.1/summarize', metering: METERING,
  });
  return capability.id;
}

const tokensOf = (url: string) => Number(new URL(url, 'http://x').searchParams.get('tokens') ?? '0');

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishMetered('Summaries (per call)');
  sessionCapabilityId = await publishMetered('Summaries (sessions)');
  const seller = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} };

  fastify = Fastify();
  await fastify.register(agentpaySeller, { ...seller, capabilityId });
  fastify.get('/summarize', async (req, reply) => {
    reply.agentpay?.charge?.(tokensOf(req.url)); // more than 50: a RangeError, answered 500
    return { summary: 'short', tokens: tokensOf(req.url) };
  });
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  urls.fastify = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;

  const app = new Hono<{ Variables: AgentpayVariables }>();
  app.use('/summarize', agentpayHono({ ...seller, capabilityId }));
  app.get('/summarize', (c) => {
    // reported in two parts: they add up
    const n = tokensOf(c.req.url);
    c.get('agentpayCall')?.charge?.(Math.floor(n / 2));
    c.get('agentpayCall')?.charge?.(n - Math.floor(n / 2));
    return c.json({ summary: 'short' });
  });
  await new Promise<void>((resolve) => { honoServer = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve()); });
  urls.hono = `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`;

  nodeServer = createServer(paid((req, res) => {
    paidCallOf(res)?.charge?.(BigInt(tokensOf(req.url ?? '/')));
    res.setHeader('content-type', 'application/json');
    res.end('{"summary":"short"}');
  }, { ...seller, capabilityId }));
  await new Promise<void>((resolve) => nodeServer.listen(0, '127.0.0.1', resolve));
  urls.node = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`;

  sessions = Fastify();
  await sessions.register(agentpaySeller, { ...seller, capabilityId: sessionCapabilityId, sessions: { claimEvery: 3 } });
  sessions.get('/summarize', async (req, reply) => {
    reply.agentpay?.charge?.(String(tokensOf(req.url)));
    return { summary: 'short' };
  });
  await sessions.listen({ host: '127.0.0.1', port: 0 });
  urls.sessions = `http://127.0.0.1:${(sessions.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await fastify?.close();
  await sessions?.close();
  await new Promise((r) => honoServer?.close(r));
  await new Promise((r) => nodeServer?.close(r));
  await t?.close();
});

const balance = async (walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

describe.each(['fastify', 'hono', 'node'] as const)('a metered call per call, %s seller', (kind) => {
  it('authorizes the maximum, charges the tokens the handler reported, gives the rest back; the receipt says so', async () => {
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    const res = await buyer.fetch(`${urls[kind]}/summarize?tokens=17`);
    expect(res.status).toBe(200);
    await res.text();
    expect(res.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '34' }, usage: { unit: 'token', units: '17', unitPriceMinor: '2', authorizedMinor: '100' } });
    expect(await balance(a.walletId)).toEqual({ balance: 1000n - 34n, held: 0n });
    expect((await sellerBalance()) - sellerBefore).toBe(34n - fee(34n));
    expect((await platformRevenue(t)) - platformBefore).toBe(fee(34n));
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });
});

describe('a metered handler that reports more than the maximum', () => {
  it('fails (500): the buyer is refunded in full and the seller gets nothing', async () => {
    const a = await fundedAgent(t, '1000');
    const sellerBefore = await sellerBalance();
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    const res = await buyer.fetch(`${urls.fastify}/summarize?tokens=51`);
    expect(res.status).toBe(500);
    await res.text();
    expect(res.receipt).toMatchObject({ status: 'failed', amount: { amountMinor: '100' } });
    expect(await balance(a.walletId)).toEqual({ balance: 1000n, held: 0n });
    expect(await sellerBalance()).toBe(sellerBefore);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });
});

describe('a metered call in a payment session', () => {
  it('each voucher covers the maximum, each call is charged its tokens, and the claims take exactly what was used', async () => {
    const a = await fundedAgent(t, '10000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions: {} });
    const tokens = [5, 50, 0, 12, 33];
    let cumulativeCharged = 0n;
    for (const n of tokens) {
      const res = await buyer.fetch(`${urls.sessions}/summarize?tokens=${n}`);
      expect(res.status).toBe(200);
      await res.text();
      cumulativeCharged += BigInt(n) * 2n;
      expect(res.sessionReceipt).toMatchObject({ chargedMinor: String(n * 2) });
    }
    const paidInAll = cumulativeCharged;
    expect(paidInAll).toBe(200n);
    await buyer.close();
    const mine: Session[] = (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === a.walletId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ status: 'closed', claimedMinor: paidInAll.toString(), heldMinor: '0' });
    const fees = fee(BigInt(mine[0]!.claimedMinor));
    expect(await balance(a.walletId)).toEqual({ balance: 10000n - paidInAll, held: 0n });
    expect((await sellerBalance()) - sellerBefore).toBe(paidInAll - fees);
    expect((await platformRevenue(t)) - platformBefore).toBe(fees);
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });
});
