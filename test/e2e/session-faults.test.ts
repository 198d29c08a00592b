/**
 * Payment sessions when things go wrong, black-box (issue 29 part 4): a real seller process
 * (test/e2e/fixtures/session-seller.mjs: fastify, the built SDK, vouchers in a FileVoucherStore,
 * claims only at close), `createBuyer` with sessions, the real HTTPS test gateway on the backend of
 * the run. After each case the ledger is checked: what the buyer paid is what the seller was
 * credited plus the platform's fee, nothing stays held, every chain verifies.
 *   - The seller is killed (SIGKILL) after serving calls whose vouchers it persisted but never
 *     claimed; restarted on the same voucher directory, it takes the same session's next vouchers and
 *     claims everything it served at close: nothing lost, nothing paid twice.
 *   - A buyer whose wallet cannot hold a second cap: the open at a second seller is refused
 *     (nothing held, nothing overdrawn) and those calls are paid per call.
 *   - A voucher sent again after the session was closed is refused at the seller: the handler does not
 *     run and nothing more is charged.
 *   - The session expires while a call is in flight (the gateway's clock moved past the expiry): the
 *     seller had accepted its voucher before, so the call is served, and the seller's claim in the claim
 *     window after the expiry is taken; once the window ended, the sweeper gives the rest back.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { VOUCHER_HEADER, type Session } from '../../packages/sdk/src/contract/sessions.js';
import { CLAIM_WINDOW_MS } from '../../src/domain/payments/sessions/view.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from './helpers.js';

const SELLER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'session-seller.mjs');
const PRICE = 10n;
/** 3% rounded down, over what a session paid in all (per call for per-call payments) */
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
/** the gateway's clock: real time plus what a test moved it on by (the seller process keeps real time) */
const clock = {
  offsetMs: 0,
  now: () => Date.now() + clock.offsetMs,
  advance: (ms: number) => { clock.offsetMs += ms; },
};
const dirs: string[] = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await t?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface SellerSetup { capabilityId: string; voucherDir: string; keyFile: string }

async function sellerSetup(name: string): Promise<SellerSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-session-faults-'));
  dirs.push(dir);
  const keyFile = join(dir, 'seller-key.pem');
  writeFileSync(keyFile, generateEd25519().privateKeyPem, { mode: 0o600 });
  return { capabilityId: await publish(t, PRICE.toString(), name), voucherDir: join(dir, 'vouchers'), keyFile };
}

/** Starts the seller process; resolves with its URL once it listens. */
function startSeller(s: SellerSetup, port = 0): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(SELLER, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      PATH: process.env.PATH ?? '', AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_API_KEY: t.creds.provider.apiKey, AGENTPAY_CA: t.gw.tls!.caCertPath,
      AGENTPAY_CAPABILITY_ID: s.capabilityId, VOUCHER_DIR: s.voucherDir, SELLER_KEY_FILE: s.keyFile, PORT: String(port),
    },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    child.once('message', (m: { type: string; port: number }) => resolve({ child, url: `http://127.0.0.1:${m.port}` }));
    child.once('exit', (code) => reject(new Error(`the seller exited (${code}) before it listened`)));
  });
}

/** Resolves with the next IPC message of this type from the child. */
function nextMessage(child: ChildProcess, type: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }) => {
      if (m?.type !== type) return;
      child.off('message', on);
      resolve();
    };
    child.on('message', on);
  });
}

async function stopSeller(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill(signal);
  return exited;
}

const balance = async (walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);

async function books(walletId: string) {
  return { buyer: await balance(walletId), seller: await sellerBalance(), platform: await platformRevenue(t) };
}

/** The buyer paid `paid` in all, `fees` of it went to the platform, the rest to the seller; nothing held; every chain verifies. */
async function expectPaid(walletId: string, before: Awaited<ReturnType<typeof books>>, paid: bigint, fees: bigint): Promise<void> {
  const after = await books(walletId);
  expect(after.buyer).toEqual({ balance: before.buyer.balance - paid, held: 0n });
  expect(after.seller - before.seller).toBe(paid - fees);
  expect(after.platform - before.platform).toBe(fees);
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

describe('payment sessions when things go wrong', () => {
  it('a seller killed after serving, its vouchers persisted but not claimed, restarts on the same store, goes on with the same session and claims all it served', async () => {
    const s = await sellerSetup('Calls (seller killed)');
    let seller = await startSeller(s);
    const a = await fundedAgent(t, '1000');
    const before = await books(a.walletId);
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions: { capMinor: '500' } });
    for (let n = 1; n <= 10; n++) expect((await buyer.fetch(`${seller.url}/calls/${n}`)).status).toBe(200);
    const [open] = await sessionsOf(a.walletId);
    expect(open).toMatchObject({ status: 'open', claimedMinor: '0', capMinor: '500' });

    expect(await stopSeller(seller.child, 'SIGKILL')).toBe(null);
    const firstPid = seller.child.pid;
    seller = await startSeller(s, Number(new URL(seller.url).port));
    for (let n = 11; n <= 15; n++) {
      const res = await buyer.fetch(`${seller.url}/calls/${n}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { pid: number }).pid).not.toBe(firstPid);
    }
    // the same session all along: the restarted seller read the highest voucher back from its store
    expect((await sessionsOf(a.walletId)).map((x) => x.id)).toEqual([open!.id]);

    // the buyer closes at the seller: it claims the 15 calls it served and closes at the gateway
    await buyer.close();
    const [closed] = await sessionsOf(a.walletId);
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '150', heldMinor: '0', feeMinor: fee(150n).toString() });
    await expectPaid(a.walletId, before, 150n, fee(150n));
    expect(await stopSeller(seller.child, 'SIGTERM')).toBe(0);
  }, 120_000);

  it('a wallet that cannot hold a second cap: the open at a second seller is refused, holds nothing, and those calls are paid per call', async () => {
    const [one, two] = [await sellerSetup('Calls (first seller)'), await sellerSetup('Calls (second seller)')];
    const sellers = [await startSeller(one), await startSeller(two)];
    const a = await fundedAgent(t, '1000');
    const before = await books(a.walletId);
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions: { capMinor: '800' } });
    for (let n = 1; n <= 3; n++) expect((await buyer.fetch(`${sellers[0]!.url}/calls/${n}`)).status).toBe(200);
    expect(await balance(a.walletId)).toEqual({ balance: 1000n, held: 800n });
    // 200 available: the second cap cannot be held, so the calls go per call (each authorized and completed at the gateway)
    for (let n = 1; n <= 4; n++) expect((await buyer.fetch(`${sellers[1]!.url}/calls/${n}`)).status).toBe(200);
    const sessions = await sessionsOf(a.walletId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.capabilityId).toBe(one.capabilityId);
    const mid = await balance(a.walletId);
    expect(mid.held).toBe(800n);
    expect(mid.balance).toBe(1000n - 4n * PRICE);

    await buyer.close();
    await expectPaid(a.walletId, before, 7n * PRICE, fee(3n * PRICE) + 4n * fee(PRICE));
    for (const s of sellers) expect(await stopSeller(s.child, 'SIGTERM')).toBe(0);
  }, 120_000);

  it('a voucher sent again after its session closed is refused at the seller: the handler does not run, nothing more is charged', async () => {
    const s = await sellerSetup('Calls (late voucher)');
    const seller = await startSeller(s);
    const a = await fundedAgent(t, '1000');
    const before = await books(a.walletId);
    const vouchers: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const v = new Headers(init?.headers).get(VOUCHER_HEADER);
      if (v) vouchers.push(v);
      return fetch(input, init);
    };
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions: { capMinor: '500' }, fetch: recording });
    for (let n = 1; n <= 3; n++) expect((await buyer.fetch(`${seller.url}/calls/${n}`)).status).toBe(200);
    await buyer.close();
    await until(async () => (await sessionsOf(a.walletId))[0]?.status === 'closed', 'the session closed');
    expect(vouchers.length).toBeGreaterThanOrEqual(3);

    // the last voucher again, and one for the next sequence would need the session key: the replay is what an attacker has
    const late = await fetch(`${seller.url}/calls/99`, { headers: { [VOUCHER_HEADER]: vouchers.at(-1)! } });
    expect(late.status).toBe(402);
    const body = await late.text();
    expect(body).not.toContain('"n":99');
    await expectPaid(a.walletId, before, 3n * PRICE, fee(3n * PRICE));
    expect(await stopSeller(seller.child, 'SIGTERM')).toBe(0);
  }, 120_000);

  it('the session expires during a call: the call is served, the claim in the window after expiry is taken, then the sweeper releases the rest', async () => {
    const s = await sellerSetup('Calls (expiry during a call)');
    const seller = await startSeller(s);
    const a = await fundedAgent(t, '1000');
    const before = await books(a.walletId);
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, sessions: { capMinor: '500', expiresInMs: 120_000 } });
    expect((await buyer.fetch(`${seller.url}/calls/1`)).status).toBe(200);
    const inCall = nextMessage(seller.child, 'in-call');
    const slow = buyer.fetch(`${seller.url}/slow/2`);
    await inCall; // the seller accepted the voucher and the handler runs
    const [open] = await sessionsOf(a.walletId);
    clock.advance(Date.parse(open!.expiresAt) + 1_000 - clock.now()); // the session expired at the gateway meanwhile
    seller.child.send({ type: 'release' });
    expect((await slow).status).toBe(200);
    expect((await sessionsOf(a.walletId))[0]).toMatchObject({ claimedMinor: '0', heldMinor: '500' });

    // the seller claims at its close (after the expiry, inside the claim window): both calls are paid
    expect(await stopSeller(seller.child, 'SIGTERM')).toBe(0);
    await until(async () => (await sessionsOf(a.walletId))[0]?.claimedMinor === '20', 'the claim after the expiry was taken');
    // the window ends, the sweeper gives the rest back
    clock.advance(CLAIM_WINDOW_MS);
    await t.gw.services.sweeper.sweepOnce();
    const [released] = await sessionsOf(a.walletId);
    expect(released).toMatchObject({ claimedMinor: '20', heldMinor: '0' });
    expect(released!.status).not.toBe('open');
    await buyer.close().catch(() => undefined); // the seller is gone: nothing left to close there
    await expectPaid(a.walletId, before, 20n, fee(20n));
  }, 120_000);
});
