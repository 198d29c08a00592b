/**
 * Payment sessions the SDK runs by itself (docs/sdk.md § Payment sessions): `createBuyer` against
 * a fastify seller and a hono seller on 127.0.0.1 whose middleware was given `sessions`, over
 * the real HTTPS test gateway, on the backend of the run. The buyer opens one session on its
 * first call and pays the rest with vouchers; the ledger after `buyer.close()` moves exactly what
 * the successful calls cost (the seller credited less the 3% fee, the fee to the platform, the
 * hold released); a spent cap opens another session; a failing handler charges nothing; parallel
 * calls all get through; a seller without `sessions` is paid per-call.
 */
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import axios from 'axios';
import { createBuyer, type Buyer } from '../../packages/sdk/src/buyer/index.js';
import { withAgentpay } from '../../packages/sdk/src/buyer/axios.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { agentpayHono } from '../../packages/sdk/src/seller/hono.js';
import { createSellerPayments, type SellerPayments } from '../../packages/sdk/src/seller/core.js';
import { FileVoucherStore } from '../../packages/sdk/src/seller/voucher-file-store.js';
import type { Session } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from './helpers.js';
import { until } from '../helpers/wait.js';

const PRICE = 10n;
/** 3% rounded down, the per-call rule, over what a session paid in all */
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
let fastify: FastifyInstance;
let perCall: FastifyInstance;
let honoServer: ServerType;
let honoSeller: SellerPayments;
const urls: Record<'fastify' | 'hono' | 'perCall', string> = { fastify: '', hono: '', perCall: '' };
const handled = { calls: 0 };
const voucherDir = mkdtempSync(join(tmpdir(), 'agentpay-auto-sessions-'));

beforeAll(async () => {
  t = await startTestGateway();
  const seller = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} };

  // fastify: vouchers in memory, claims every 20 accepted vouchers
  fastify = Fastify();
  await fastify.register(agentpaySeller, { ...seller, capabilityId: await publish(t, PRICE.toString(), 'Forecast (fastify sessions)'), sessions: { claimEvery: 20 } });
  fastify.get('/forecast/:city', async (req, reply) => {
    handled.calls++;
    if ((req.query as { fail?: string }).fail) return reply.code(500).send({ error: 'the forecast service is down' });
    return { city: (req.params as { city: string }).city, sunny: true };
  });
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  urls.fastify = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;

  // hono on the web adapter: vouchers in a directory (written, fsynced, renamed before each call is served)
  honoSeller = createSellerPayments({ ...seller, capabilityId: await publish(t, PRICE.toString(), 'Forecast (hono sessions)'), sessions: { store: new FileVoucherStore(voucherDir) } });
  const app = new Hono();
  app.use('/forecast/*', agentpayHono({ seller: honoSeller }));
  app.get('/forecast/:city', (c) => {
    handled.calls++;
    if (c.req.query('fail')) return c.json({ error: 'the forecast service is down' }, 500);
    return c.json({ city: c.req.param('city'), sunny: true });
  });
  await new Promise<void>((resolve) => { honoServer = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve()); });
  urls.hono = `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`;

  // no voucher store: per-call only
  perCall = Fastify();
  await perCall.register(agentpaySeller, { ...seller, capabilityId: await publish(t, PRICE.toString(), 'Forecast (per-call)') });
  perCall.get('/forecast/:city', async () => ({ sunny: true }));
  await perCall.listen({ host: '127.0.0.1', port: 0 });
  urls.perCall = `http://127.0.0.1:${(perCall.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await fastify?.close();
  await perCall?.close();
  await honoSeller?.close?.();
  await new Promise((r) => honoServer?.close(r));
  await t?.close();
  rmSync(voucherDir, { recursive: true, force: true });
});

const buyerFor = (a: { walletId: string; privateKeyPem: string }, sessions = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions });
const balance = async (walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);

/** Everything a set of closed sessions moved: the buyer paid `paid`, the seller got it less the fee of each session, the platform the fees, nothing held. */
async function expectSettled(walletId: string, before: { buyer: bigint; seller: bigint; platform: bigint }, sessions: Session[], paid: bigint, funded: bigint): Promise<void> {
  const fees = sessions.reduce((sum, s) => sum + fee(BigInt(s.claimedMinor)), 0n);
  expect(sessions.reduce((sum, s) => sum + BigInt(s.claimedMinor), 0n)).toBe(paid);
  for (const s of sessions) {
    expect(s.status).toBe('closed');
    expect(s.heldMinor).toBe('0');
    expect(s.feeMinor).toBe(fee(BigInt(s.claimedMinor)).toString());
  }
  expect(await balance(walletId)).toEqual({ balance: funded - paid, held: 0n });
  expect(before.buyer - paid).toBe(funded - paid);
  expect(await sellerBalance()).toBe(before.seller + paid - fees);
  expect(await platformRevenue(t)).toBe(before.platform + fees);
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

async function snapshot(walletId: string) {
  return { buyer: (await balance(walletId)).balance, seller: await sellerBalance(), platform: await platformRevenue(t) };
}

describe.each(['fastify', 'hono'] as const)('createBuyer against a %s seller that takes sessions', (kind) => {
  it('opens exactly one session for 50 calls, and the ledger after close() moves exactly what was charged', async () => {
    const a = await fundedAgent(t, '10000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a);
    const first = await fetch(`${urls[kind]}/forecast/Porto`);
    expect(first.status).toBe(402);
    expect(((await first.json()) as { session: unknown }).session).toMatchObject({ version: 1, priceMinor: '10', currency: 'USD', openHeader: 'x-agentpay-session-open' });

    const calls0 = handled.calls;
    for (let i = 0; i < 50; i++) {
      const res = await buyer.fetch(`${urls[kind]}/forecast/Lisbon`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', sunny: true });
      expect(res.receipt).toBeNull();
      expect(res.sessionReceipt).toMatchObject({ type: 'session.receipt', sequence: i + 1, chargedMinor: '10', cumulativeMinor: String((i + 1) * 10) });
    }
    expect(handled.calls - calls0).toBe(50);
    let open = await sessionsOf(a.walletId);
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ status: 'open', capMinor: String(PRICE * 100n) });
    // the cap is held, less what the seller's batched claims (every 20 vouchers on fastify) took. A claim
    // goes out without the call waiting for it (and hono's 30 s timer may send one on a slow machine):
    // the session and the wallet are read once they agree
    if (kind === 'fastify') await until(async () => (await sessionsOf(a.walletId))[0]?.claimedMinor === '400', 'the claims at 20 and 40 vouchers');
    await until(async () => {
      open = await sessionsOf(a.walletId);
      const claimed = BigInt(open[0]!.claimedMinor);
      const b = await balance(a.walletId);
      return b.balance === before.buyer - claimed && b.held === BigInt(open[0]!.capMinor) - claimed;
    }, 'the wallet to show the cap held less what was claimed');

    const closed = await buyer.close();
    expect(closed.map((s) => s.id)).toEqual([open[0]!.id]);
    expect(buyer.sessions()).toEqual([]);
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 50n * PRICE, 10000n);
  });

  it('opens a second session when the cap is spent (top-ups off), and closes both', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a, { capMinor: '100', topUpMinor: '0' });
    for (let i = 0; i < 15; i++) expect((await buyer.fetch(`${urls[kind]}/forecast/Braga`)).status).toBe(200);
    const sessions = await sessionsOf(a.walletId);
    expect(sessions).toHaveLength(2);
    await buyer.close();
    const after = await sessionsOf(a.walletId);
    expect(after.map((s) => s.claimedMinor).sort()).toEqual(['100', '50']);
    await expectSettled(a.walletId, before, after, 15n * PRICE, 1000n);
  });

  it('charges nothing for a call whose handler fails (5xx), the last one included', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a);
    const outcomes: number[] = [];
    for (const fail of [false, true, false, false, true]) {
      const res = await buyer.fetch(`${urls[kind]}/forecast/Faro${fail ? '?fail=1' : ''}`);
      outcomes.push(res.status);
      if (fail) expect(res.sessionReceipt).toBeNull();
    }
    expect(outcomes).toEqual([200, 500, 200, 200, 500]);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 3n * PRICE, 1000n);
  });

  it('takes 10 parallel calls of one session, with the right cumulative amount', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a);
    expect((await buyer.fetch(`${urls[kind]}/forecast/Evora`)).status).toBe(200); // opens it
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => buyer.fetch(`${urls[kind]}/forecast/City${i}`)));
    expect(all.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(all.every((r) => r.sessionReceipt?.chargedMinor === '10')).toBe(true);
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 11n * PRICE, 1000n);
  });
});

describe('parallel vouchers overtaking each other', () => {
  it('resyncs from the corrective 402 and charges each call once', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    // the transport holds back every other voucher, so later ones reach the seller first
    let sent = 0;
    const stale: string[] = [];
    const slowFetch: typeof fetch = async (input, init) => {
      const voucher = new Headers(init?.headers).get('x-agentpay-voucher');
      if (voucher && sent++ % 2 === 0) await new Promise((r) => setTimeout(r, 150));
      const res = await fetch(input, init);
      if (res.status === 402 && voucher) stale.push(((await res.clone().json()) as { error: { code: string } }).error.code);
      return res;
    };
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: slowFetch });
    expect((await buyer.fetch(`${urls.fastify}/forecast/Evora`)).status).toBe(200);
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => buyer.fetch(`${urls.fastify}/forecast/Town${i}`)));
    expect(all.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(stale.length).toBeGreaterThan(0);
    expect(new Set(stale)).toEqual(new Set(['VOUCHER_STALE']));
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 9n * PRICE, 1000n);
  });
});

describe('the seller claims by itself', () => {
  it('claims what was served when its fastify server closes; the session stays open for the buyer to close or expire', async () => {
    const app = Fastify();
    await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {}, capabilityId: await publish(t, PRICE.toString(), 'Forecast (closing)'), sessions: {} });
    app.get('/forecast', async () => ({ sunny: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    for (let i = 0; i < 3; i++) expect((await buyer.fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/forecast`)).status).toBe(200);
    const [open] = await sessionsOf(a.walletId);
    expect(open).toMatchObject({ status: 'open', claimedMinor: '0' });
    await app.close();
    expect(await t.workspace.sessions.get(open!.id)).toMatchObject({ status: 'open', claimedMinor: '30', heldMinor: String(PRICE * 100n - 30n) });
    expect(await balance(a.walletId)).toEqual({ balance: 970n, held: PRICE * 100n - 30n });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('the axios adapter', () => {
  it("pays with the sessions of the buyer it was given, and buyer.close() closes them", async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a);
    const api = withAgentpay(axios.create(), buyer);
    for (let i = 0; i < 5; i++) {
      const res = await api.get(`${urls.hono}/forecast/Sintra`);
      expect(res.status).toBe(200);
      expect(res.data).toEqual({ city: 'Sintra', sunny: true });
      expect(res.sessionReceipt).toMatchObject({ sequence: i + 1, chargedMinor: '10' });
    }
    // fetch reuses the session axios opened
    expect((await buyer.fetch(`${urls.hono}/forecast/Sintra`)).sessionReceipt).toMatchObject({ sequence: 6 });
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 6n * PRICE, 1000n);
  });
});

describe('sessions and per-call payment side by side', () => {
  it('pays per-call a seller without a voucher store: no session is opened', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    const res = await buyer.fetch(`${urls.perCall}/forecast/Porto`);
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '10' } });
    expect(res.sessionReceipt).toBeUndefined();
    expect(await sessionsOf(a.walletId)).toEqual([]);
    expect(await buyer.close()).toEqual([]);
    expect(await balance(a.walletId)).toEqual({ balance: 990n, held: 0n });
  });

  it("pays per-call a seller that takes sessions when the buyer prefers per-call", async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a, { prefer: 'per-call' });
    const res = await buyer.fetch(`${urls.fastify}/forecast/Porto`);
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success' });
    expect(await sessionsOf(a.walletId)).toEqual([]);
  });

  it('falls back to per-call when the wallet cannot hold the cap', async () => {
    const a = await fundedAgent(t, '50');
    const buyer = buyerFor(a);
    const res = await buyer.fetch(`${urls.fastify}/forecast/Porto`);
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success' });
    expect(await sessionsOf(a.walletId)).toEqual([]);
    expect(await balance(a.walletId)).toEqual({ balance: 40n, held: 0n });
  });
});

export type { Buyer };
