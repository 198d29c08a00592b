/**
 * The seller's side of sessions over time, over the real HTTPS test gateway on the backend of the
 * run (hono sellers on 127.0.0.1, the web adapter):
 * - the claim timer: a seller with a short `claimIntervalMs` and a count it never reaches claims
 *   what its few calls served by the timer alone, while the session stays open; the ledger shows it.
 * - the receipt key across a restart: a seller on a file voucher store without `privateKeyPem`
 *   keeps its receipt key beside the journal (`receipt-key.pem`, 0600); a new seller process on the
 *   directory signs the receipts of a session opened before the restart with the key its grant
 *   names, so the buyer goes on paying and verifying, and the close settles everything served.
 */
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { agentpayHono } from '../../packages/sdk/src/seller/hono.js';
import { createSellerPayments, type SellerPayments } from '../../packages/sdk/src/seller/core.js';
import type { SellerSessionOptions } from '../../packages/sdk/src/seller/session-payments.js';
import { FileVoucherStore } from '../../packages/sdk/src/seller/voucher-file-store.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Session, SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from './helpers.js';
import { until } from '../helpers/wait.js';

const PRICE = 10n;
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
const dirs: string[] = [];
const running: { seller: SellerPayments; server: ServerType }[] = [];

beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  for (const r of running) await stop(r);
  await t?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A hono seller of `capabilityId` taking sessions with these options; its URL. */
async function startSeller(capabilityId: string, sessions: SellerSessionOptions): Promise<{ url: string; seller: SellerPayments; server: ServerType }> {
  const seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, onError: () => {}, sessions });
  const app = new Hono();
  app.use('/forecast/*', agentpayHono({ seller }));
  app.get('/forecast/:city', (c) => c.json({ city: c.req.param('city'), sunny: true }));
  const server = await new Promise<ServerType>((resolve) => { const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s)); });
  const r = { seller, server };
  running.push(r);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ...r };
}

async function stop(r: { seller: SellerPayments; server: ServerType }): Promise<void> {
  const i = running.indexOf(r);
  if (i < 0) return;
  running.splice(i, 1);
  await r.seller.close?.();
  await new Promise((resolve) => r.server.close(resolve));
}

const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

describe('the claim timer', () => {
  it('claims what a few calls served by the timer, with the count never reached, and the session stays open', async () => {
    const capabilityId = await publish(t, PRICE.toString(), 'Forecast (timer claims)');
    const { url } = await startSeller(capabilityId, { claimEvery: 1000, claimIntervalMs: 100 });
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    for (let i = 0; i < 3; i++) expect((await buyer.fetch(`${url}/forecast/Porto`)).status).toBe(200);

    const [open] = await sessionsOf(a.walletId);
    await until(async () => (await t.workspace.sessions.get(open!.id)).claimedMinor === '30', 'the timer to claim the 3 calls');
    // later ticks find nothing more to claim: what was claimed stays
    const second = await buyer.fetch(`${url}/forecast/Braga`);
    expect(second.status).toBe(200);
    await until(async () => (await t.workspace.sessions.get(open!.id)).claimedMinor === '40', 'the timer to claim the 4th call');
    const session = await t.workspace.sessions.get(open!.id);
    expect(session).toMatchObject({ status: 'open', claimedMinor: '40', heldMinor: String(100n * PRICE - 40n) });
    const b = await t.workspace.wallets.balance(a.walletId);
    expect(b).toMatchObject({ balanceMinor: '960', availableMinor: String(960n - (100n * PRICE - 40n)) });
    expect(await sellerBalance()).toBe(sellerBefore + 40n - fee(40n));
    expect(await platformRevenue(t)).toBe(platformBefore + fee(40n));
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);

    const [closed] = await buyer.close();
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '40', heldMinor: '0' });
    expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '960', availableMinor: '960' });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('the receipt key across a restart', () => {
  it('keeps the key beside the file store, so receipts of a session opened before the restart still verify', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-session-key-'));
    dirs.push(dir);
    const capabilityId = await publish(t, PRICE.toString(), 'Forecast (restarted seller)');
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];
    // the buyer calls one address; it reaches whichever seller process runs now
    const BASE = 'http://seller.invalid';
    let current = '';
    const viaSeller: typeof fetch = async (input, init) => {
      const u = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (!u.startsWith(BASE)) return fetch(input, init);
      const res = await fetch(current + u.slice(BASE.length), init);
      return Object.defineProperty(res, 'url', { value: u });
    };
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: viaSeller });
    const receipts: SessionReceipt[] = [];
    const call = async () => {
      const res = await buyer.fetch(`${BASE}/forecast/Lisbon`);
      expect(res.status).toBe(200);
      receipts.push(res.sessionReceipt!); // verified by the buyer against the grant's key
    };

    const store1 = new FileVoucherStore(dir);
    const first = await startSeller(capabilityId, { store: store1, claimIntervalMs: 0 });
    current = first.url;
    for (let i = 0; i < 3; i++) await call();
    const keyFile = join(dir, 'receipt-key.pem');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8');
    const publicKey = await first.seller.sessions!.publicKeyPem();
    await stop(first);
    await store1.close();

    // a new seller process on the same directory: the same key, the session goes on
    const store2 = new FileVoucherStore(dir);
    const second = await startSeller(capabilityId, { store: store2, claimIntervalMs: 0 });
    current = second.url;
    expect(await second.seller.sessions!.publicKeyPem()).toBe(publicKey);
    for (let i = 0; i < 3; i++) await call();
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    const [session] = await sessionsOf(a.walletId);
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    expect(receipts.map((r) => [r.sessionId, r.sequence, r.chargedMinor])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [session!.id, n, '10']));
    // offline, every receipt verifies against the key the grant names
    for (const r of receipts) expect(await verifyObject(publicKey, r as unknown as Record<string, unknown>)).toBe(true);

    const [closed] = await buyer.close();
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '60', heldMinor: '0' });
    expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '940', availableMinor: '940' });
    expect(await sellerBalance()).toBe(sellerBefore + 60n - fee(60n));
    expect(await platformRevenue(t)).toBe(platformBefore + fee(60n));
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
    await stop(second);
    await store2.close();
  });
});
