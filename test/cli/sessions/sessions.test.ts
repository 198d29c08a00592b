/**
 * `agentpay sessions list|show|close` (the built binary) against a real HTTPS gateway, on the
 * backend of the run: a seller's sessions opened from a buyer's signed open requests and claimed;
 * the buyer's workspace and the seller each list, filter and show them; the seller's close
 * releases the rest at once, the buyer's ends the session early. The ledger is checked after.
 * The human tables are checked in process (stdout is not a terminal under the test).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session, SessionOpen, Voucher } from '../../../packages/sdk/src/contract/sessions.js';
import { generateEd25519, signObject } from '../../../src/core/ed25519.js';
import { verifyLedger } from '../../../src/domain/wallets/verify.js';
import { closedSessionText, sessionDetailText, sessionPageText, type ClosedSession, type SessionDetail } from '../../../src/cli/sessions.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { hashOf, newBuyer, newSeller, type Buyer } from '../../payments/helpers.js';
import { cli, gatewayEnv, json, removeTempDirs, spawnCli, tempDir } from '../helpers.js';
import { startReceiver } from '../../webhooks/receiver.js';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../../packages/sdk/src/webhooks.js';

const HOUR = 60 * 60 * 1000;
let t: TestGateway;
const configDir = tempDir();
let seller: Awaited<ReturnType<typeof newSeller>>;
let ws: Awaited<ReturnType<TestGateway['newWorkspace']>>;
let buyer: Buyer;
let other: Buyer;
let claimed: string;
let idle: string;
let elsewhere: string;

async function open(s: typeof seller, b: Buyer, capMinor: string) {
  const sessionKey = generateEd25519();
  const unsigned = {
    version: 1 as const, type: 'session.open' as const, walletId: b.walletId, providerId: s.id, capabilityId: s.capabilityId, capMinor, currency: 'USD',
    expiresAt: new Date(t.clock.now() + HOUR).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `cli-${Math.random().toString(36).slice(2)}-${Date.now()}`,
    signedAt: new Date(t.clock.now()).toISOString(),
  };
  const { session } = await s.client.sessions.open({ open: { ...unsigned, signature: signObject(b.privateKeyPem, unsigned) } as SessionOpen, sellerPublicKey: generateEd25519().publicKeyPem });
  return { id: session.id, sessionKey: sessionKey.privateKeyPem };
}

function voucher(privateKeyPem: string, sessionId: string, cumulativeMinor: string, sequence: number): Voucher {
  const unsigned = { sessionId, cumulativeMinor, sequence, requestHash: hashOf(`GET /cli?${sequence}`) };
  return { ...unsigned, signature: signObject(privateKeyPem, unsigned) };
}

const as = (apiKey: string) => (...args: string[]) => cli(args, { configDir, env: gatewayEnv(t, apiKey) });

beforeAll(async () => {
  t = await startTestGateway();
  seller = await newSeller(t, '10');
  ws = await t.newWorkspace('Sessions CLI Buyer');
  buyer = await newBuyer(t, ws.client, '1000');
  other = await newBuyer(t, ws.client, '1000');
  const a = await open(seller, buyer, '500');
  claimed = a.id;
  const [c1] = await seller.client.sessions.claim([{ sessionId: a.id, voucher: voucher(a.sessionKey, a.id, '100', 1) }]);
  const [c2] = await seller.client.sessions.claim([{ sessionId: a.id, voucher: voucher(a.sessionKey, a.id, '150', 2) }]);
  expect([c1!.status, c2!.status]).toEqual([200, 200]);
  idle = (await open(seller, buyer, '300')).id;
  elsewhere = (await open(seller, other, '200')).id;
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

describe('agentpay sessions list', () => {
  it("shows the buyer's workspace its wallets' sessions and the seller its sales', newest first, filtered by --status, --wallet and --seller", async () => {
    const buyerRun = as(ws.apiKey);
    const all = await buyerRun('sessions', 'list', '--json');
    expect(all.exitCode, all.stderr).toBe(0);
    const page = json<{ sessions: Session[]; nextCursor: string | null }>(all);
    expect(page.sessions.map((s) => s.id)).toEqual([elsewhere, idle, claimed]);
    expect(page.sessions[2]).toMatchObject({ walletId: buyer.walletId, providerId: seller.id, capMinor: '500', claimedMinor: '150', heldMinor: '350', status: 'open' });

    const byWallet = json<{ sessions: Session[] }>(await buyerRun('sessions', 'list', '--wallet', buyer.walletId, '--json'));
    expect(byWallet.sessions.map((s) => s.id)).toEqual([idle, claimed]);
    const bySeller = json<{ sessions: Session[] }>(await buyerRun('sessions', 'list', '--seller', seller.id, '--status', 'open', '--limit', '2', '--json'));
    expect(bySeller.sessions.map((s) => s.id)).toEqual([elsewhere, idle]);
    expect(json<{ nextCursor: string }>(await buyerRun('sessions', 'list', '--seller', seller.id, '--limit', '2', '--json')).nextCursor).toBe(idle);
    expect(json<{ sessions: Session[] }>(await buyerRun('sessions', 'list', '--seller', 'prv_nobody', '--json')).sessions).toEqual([]);
    expect(json<{ sessions: Session[] }>(await buyerRun('sessions', 'list', '--status', 'closed', '--json')).sessions).toEqual([]);

    // the seller sees the same sessions; another seller's filter shows it nothing
    const sellerRun = as(seller.apiKey);
    expect(json<{ sessions: Session[] }>(await sellerRun('sessions', 'list', '--json')).sessions.map((s) => s.id)).toEqual([elsewhere, idle, claimed]);
    expect(json<{ sessions: Session[] }>(await sellerRun('sessions', 'list', '--seller', 'prv_other', '--json')).sessions).toEqual([]);
    // a stranger sees none of them
    const stranger = await t.newWorkspace('Sessions CLI Stranger');
    expect(json<{ sessions: Session[] }>(await as(stranger.apiKey)('sessions', 'list', '--json')).sessions).toEqual([]);

    // a status outside the three is a usage error naming the flag
    const bad = await buyerRun('sessions', 'list', '--status', 'pending');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--status');
  });
});

describe('agentpay sessions show', () => {
  it('shows one session with every claim that moved money; another tenant gets SESSION_NOT_FOUND', async () => {
    const r = await as(ws.apiKey)('sessions', 'show', claimed, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const d = json<SessionDetail>(r);
    expect(d.session).toMatchObject({ id: claimed, claimedMinor: '150', feeMinor: '4', lastSequence: 2 });
    // fees are feeFor(cumulative) less what was taken: 3 of 100, then 4 - 3 of the next 50
    expect(d.claims.map((c) => [c.sequence, c.cumulativeMinor, c.amountMinor, c.feeMinor])).toEqual([[1, '100', '100', '3'], [2, '150', '50', '1']]);
    expect(json<SessionDetail>(await as(seller.apiKey)('sessions', 'show', claimed, '--json'))).toEqual(d);

    const stranger = await t.newWorkspace('Sessions CLI Show Stranger');
    const refused = await as(stranger.apiKey)('sessions', 'show', claimed, '--json');
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('SESSION_NOT_FOUND');
  });
});

describe('agentpay sessions close', () => {
  it("the seller's close releases the rest at once and says how much; again it changes nothing", async () => {
    const r = await as(seller.apiKey)('sessions', 'close', claimed, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const c = json<ClosedSession>(r);
    expect(c).toMatchObject({ closedBy: 'seller', releasedMinor: '350', unchanged: false, session: { id: claimed, status: 'closed', heldMinor: '0' } });
    const again = json<ClosedSession>(await as(seller.apiKey)('sessions', 'close', claimed, '--json'));
    expect(again).toMatchObject({ releasedMinor: '0', unchanged: true, session: { status: 'closed' } });
    // the buyer's wallet: 1000 less the 150 claimed, nothing held but the idle session's 300
    expect(await ws.client.wallets.balance(buyer.walletId)).toMatchObject({ balanceMinor: '850', availableMinor: '550' });
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });

  it("the buyer's close ends the session early: nothing released now, the rest after the seller's claim window", async () => {
    const before = t.clock.now();
    const r = await as(ws.apiKey)('sessions', 'close', idle, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const c = json<ClosedSession>(r);
    expect(c).toMatchObject({ closedBy: 'buyer', releasedMinor: '0', pendingMinor: '300', unchanged: false, session: { id: idle, status: 'open', heldMinor: '300' } });
    expect(c.releasesAt).toBe(c.session.claimWindowEndsAt);
    // expiresAt is the time of the close; the claim window an hour after it
    const endedAt = Date.parse(c.session.expiresAt);
    expect(endedAt).toBeGreaterThanOrEqual(before);
    expect(endedAt).toBeLessThanOrEqual(t.clock.now());
    expect(Date.parse(c.session.claimWindowEndsAt)).toBe(endedAt + HOUR);
    expect(json<ClosedSession>(await as(ws.apiKey)('sessions', 'close', idle, '--json'))).toMatchObject({ unchanged: true });
    expect(await ws.client.wallets.balance(buyer.walletId)).toMatchObject({ balanceMinor: '850', availableMinor: '550' });

    // a stranger's close is refused and changes nothing
    const stranger = await t.newWorkspace('Sessions CLI Close Stranger');
    const refused = await as(stranger.apiKey)('sessions', 'close', elsewhere, '--json');
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('SESSION_NOT_FOUND');
    expect(await seller.client.sessions.get(elsewhere)).toMatchObject({ status: 'open', heldMinor: '200' });
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });
});

describe('the human rendering', () => {
  const s: Session = {
    id: 'ses_1', status: 'open', walletId: 'wal_1', workspaceId: 'ws_1', providerId: 'prv_1', capabilityId: 'cap_1', payTo: 'wal_2', capMinor: '500', claimedMinor: '150',
    feeMinor: '4', heldMinor: '350', currency: 'USD', lastSequence: 2, expiresAt: '2026-12-07T11:00:00.000Z', claimWindowEndsAt: '2026-12-07T12:00:00.000Z',
    createdAt: '2026-12-07T10:00:00.000Z', closedAt: null,
  };

  it('lists id, status, buyer wallet, seller, cap, claimed, held and expiry, amounts in currency units, and the next page', () => {
    const text = sessionPageText({ sessions: [s], nextCursor: 'ses_1' }, 1);
    const [header, row] = text.split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['ID', 'STATUS', 'WALLET', 'SELLER', 'CAP', 'CLAIMED', 'HELD', 'EXPIRES']);
    expect(row!.split(/\s{2,}/)).toEqual(['ses_1', 'open', 'wal_1', 'prv_1', '5.00 USD', '1.50 USD', '3.50 USD', '2026-12-07T11:00:00.000Z']);
    expect(text).toContain('agentpay sessions list --after ses_1 --limit 1');
    expect(sessionPageText({ sessions: [], nextCursor: null }, undefined)).toBe('(no sessions)');
  });

  it('shows a session with its claims, and what a close released', () => {
    const text = sessionDetailText({ session: s, claims: [{ cumulativeMinor: '150', sequence: 2, amountMinor: '150', feeMinor: '4', createdAt: '2026-12-07T10:30:00.000Z' }] });
    expect(text).toMatch(/claimed:\s+1\.50 USD/);
    expect(text).toMatch(/claims:\nTIME\s+SEQUENCE\s+CUMULATIVE\s+AMOUNT\s+FEE\n2026-12-07T10:30:00.000Z\s+2\s+1\.50 USD\s+1\.50 USD\s+0\.04 USD/);
    expect(sessionDetailText({ session: s, claims: [] })).toContain('(no claims yet)');
    const closed = { ...s, status: 'closed' as const, heldMinor: '0' };
    expect(closedSessionText({ session: closed, closedBy: 'seller', releasedMinor: '350', pendingMinor: '0', releasesAt: null, unchanged: false }))
      .toContain('closed session ses_1: 3.50 USD released to wallet wal_1');
    expect(closedSessionText({ session: s, closedBy: 'buyer', releasedMinor: '0', pendingMinor: '350', releasesAt: s.claimWindowEndsAt, unchanged: false }))
      .toContain('3.50 USD still held is released to wallet wal_1 at 2026-12-07T12:00:00.000Z unless the seller claims it first');
  });
});

describe('agentpay trigger session.* and agentpay listen', () => {
  it('listen forwards the session events that trigger session.closed makes, signed; the trigger wallet ends with the cap less the claim', async () => {
    const env = gatewayEnv(t, ws.apiKey);
    const rx = await startReceiver('/sessions');
    try {
      const listen = spawnCli(['listen', '--forward-to', rx.url, '--events', 'session.opened,session.claimed,session.closed', '--count', '3', '--interval', '1', '--timeout', '120', '--json'], { configDir, env });
      await listen.waitFor('stderr', 'Ready!');
      const { secret } = JSON.parse(listen.stdout().split('\n')[0]!) as { secret: string };

      const trig = await cli(['trigger', 'session.closed', '--amount', '100', '--seller-key', seller.apiKey, '--json'], { configDir, env });
      expect(trig.exitCode, trig.stderr).toBe(0);
      const triggered = json<{ type: string; steps: string[]; event: { data: { sessionId: string; walletId: string; releasedMinor: string } } }>(trig);
      expect(triggered.event.data).toMatchObject({ releasedMinor: '100' });

      const r = await listen.done;
      expect(r.exitCode, r.stderr).toBe(0);
      const events = await Promise.all(rx.received.map((x) => verifyWebhookSignature(x.rawBody, String(x.headers[SIGNATURE_HEADER]), secret)));
      expect(events.map((e) => [e.type, (e.data as { sessionId: string }).sessionId])).toEqual([
        ['session.opened', triggered.event.data.sessionId], ['session.claimed', triggered.event.data.sessionId], ['session.closed', triggered.event.data.sessionId],
      ]);
      // funded 300, a cap of 200 held, 100 claimed, 100 released
      expect(await ws.client.wallets.balance(triggered.event.data.walletId)).toMatchObject({ balanceMinor: '200', availableMinor: '200' });
      expect((await ws.client.wallets.ledger(triggered.event.data.walletId)).map((e) => e.type)).toEqual(['fund', 'hold', 'capture', 'release']);
      expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
    } finally {
      await rx.close();
    }
  });
});
