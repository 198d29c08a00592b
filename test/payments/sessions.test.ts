/**
 * Payment sessions over a real HTTPS gateway (docs/protocol.md § Payment sessions), on the
 * backend of the run: open (a hold of the cap), many vouchers checked by the seller's SDK alone,
 * batched claims, close, expiry; the ledger checked after every step, and refusals that write
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { CLAIM_WINDOW_MS } from '../../src/domain/payments/sessions/view.js';
import { startTestGateway, ManualClock, type TestGateway } from '../helpers/gateway.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { authorizeCall, hashOf, ledgerBalance, ledgerRows, newBuyer, newSeller, refused, type Buyer } from './helpers.js';
import { openRequest } from '../../packages/sdk/src/buyer/session.js';
import { MemoryVoucherStore, SessionChecker } from '../../packages/sdk/src/seller/sessions.js';
import type { SessionGrant, SessionOpen, Voucher } from '../../packages/sdk/src/contract/sessions.js';
import type { SessionClaimOutcome } from '../../packages/sdk/src/client/sessions.js';

const HOUR = 60 * 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t.close();
});

const platformKey = async (keyId: string) => (await t.client().platform.receiptKey(keyId)).publicKeyPem;
const platformBalance = () => ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance;
/** 3% rounded down, the per-call rule */
const fee = (n: bigint) => (n * 300n) / 10_000n;

type Seller = Awaited<ReturnType<typeof newSeller>>;

/** The ledger as a whole: each wallet's sums, never negative, and `ledger verify` (holds of open sessions included) passes. */
async function expectLedgerVerifies(): Promise<void> {
  const report = await verifyLedger(t.gw.store);
  expect(report.problems).toEqual([]);
}

/** An open request signed by hand (the refusal tests need vouchers the SDK would not sign). */
function signedOpen(s: Seller, buyer: Buyer, capMinor: string, over: Partial<SessionOpen> = {}) {
  const sessionKey = generateEd25519();
  const unsigned = {
    version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: s.id, capabilityId: s.capabilityId, capMinor, currency: 'USD',
    expiresAt: new Date(clock.now() + HOUR).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `nonce-${Math.random().toString(36).slice(2)}-${Date.now()}`,
    signedAt: new Date(clock.now()).toISOString(), ...over,
  };
  return { open: { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) } as SessionOpen, sessionKey };
}

function voucherOf(privateKeyPem: string, sessionId: string, cumulativeMinor: string, sequence: number): Voucher {
  const unsigned = { sessionId, cumulativeMinor, sequence, requestHash: hashOf(`GET /thing?${sequence}`) };
  return { ...unsigned, signature: signObject(privateKeyPem, unsigned) };
}

const sellerKey = generateEd25519();

async function opened(s: Seller, buyer: Buyer, capMinor: string, over: Partial<SessionOpen> = {}) {
  const { open, sessionKey } = signedOpen(s, buyer, capMinor, over);
  const res = await s.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem });
  return { ...res, sessionKey: sessionKey.privateKeyPem };
}

/** The types of a session's entries on one wallet, in the wallet's order (seq: PostgreSQL's physical order is not insertion order). */
const entryTypes = (sessionId: string, walletId: string) =>
  ledgerRows(t, { transactionId: sessionId }).filter((e) => e.wallet_id === walletId).sort((a, b) => Number(a.seq - b.seq)).map((e) => e.type);

const bodyOf = (o: SessionClaimOutcome) => o.body as Record<string, unknown> & { error?: { code: string } };

describe('a session from open to close', () => {
  it('holds the cap, takes many vouchers at the seller alone, claims in batches, closes and gives back the rest', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const platformBefore = platformBalance();
    const checker = new SessionChecker({ providerId: s.id, sellerPrivateKeyPem: sellerKey.privateKeyPem, platformKey, store: new MemoryVoucherStore(), now: () => clock.now() });

    // open: one gateway trip; the cap is held
    const { open, session: pending } = await openRequest({
      walletId: buyer.walletId, privateKeyPem: buyer.privateKeyPem, providerId: s.id, capabilityId: s.capabilityId, capMinor: '500', currency: 'USD',
      expiresAt: new Date(clock.now() + HOUR).toISOString(), now: () => clock.now(),
    });
    const { session, grant } = await s.client.sessions.open({ open, sellerPublicKey: await checker.publicKeyPem() });
    expect(session).toMatchObject({ status: 'open', capMinor: '500', claimedMinor: '0', heldMinor: '500', walletId: buyer.walletId, providerId: s.id, capabilityId: s.capabilityId });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 500n });
    expect(ledgerRows(t, { transactionId: session.id }).map((e) => [e.type, e.hold_minor])).toEqual([['hold', 500n]]);
    await expectLedgerVerifies();

    const paying = await pending.start(grant, await platformKey(grant.signingKeyId));
    await checker.acceptGrant(grant);

    // 20 calls at 10: vouchers checked and persisted by the seller, receipts signed by the seller; nothing at the gateway
    const rowsBefore = ledgerRows(t).length;
    for (let i = 1; i <= 20; i++) {
      const requestHash = hashOf(`GET /thing?${i}`);
      const voucher = await paying.voucher('10', requestHash);
      const d = await checker.check(voucher, { priceMinor: '10', requestHash, capabilityId: s.capabilityId });
      expect(d.kind).toBe('accept');
      if (d.kind !== 'accept') return;
      const responseHash = hashOf(`{"n":${i}}`);
      const receipt = await checker.settle(d, { ok: true, responseHash });
      expect(receipt).toMatchObject({ sessionId: session.id, sequence: i, cumulativeMinor: String(10 * i), chargedMinor: '10' });
      expect(await paying.verifyReceipt(receipt!, responseHash)).toBe(true);
      // an equal voucher is an idempotent retry: charged nothing more
      if (i === 5) expect((await checker.check(voucher, { priceMinor: '10', requestHash })).kind).toBe('retry');
    }
    expect(ledgerRows(t).length).toBe(rowsBefore);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 500n });

    // the claim: 200 moved from the hold to the seller (less 3%) and the platform
    const [first] = await s.client.sessions.claim(await checker.claims());
    expect(first!.status).toBe(200);
    expect(first!.body).toMatchObject({ status: 'claimed', cumulativeMinor: '200', amountMinor: '200', feeMinor: String(fee(200n)) });
    await checker.claimed(session.id, '200');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 800n, held: 300n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: 200n - fee(200n), held: 0n });
    expect(platformBalance() - platformBefore).toBe(fee(200n));
    await expectLedgerVerifies();

    // a replayed claim changes nothing
    const rows = ledgerRows(t).length;
    const [again] = await s.client.sessions.claim([{ sessionId: session.id, voucher: (await checker.highest(session.id))! }]);
    expect(again).toMatchObject({ status: 200, body: { status: 'unchanged', amountMinor: '0', feeMinor: '0' } });
    expect(ledgerRows(t).length).toBe(rows);

    // 5 more calls, then the close claims the last voucher and releases the rest
    for (let i = 21; i <= 25; i++) {
      const requestHash = hashOf(`GET /thing?${i}`);
      const d = await checker.check(await paying.voucher('10', requestHash), { priceMinor: '10', requestHash });
      expect(d.kind).toBe('accept');
    }
    const [last] = await s.client.sessions.claim(await checker.claims());
    expect(last!.body).toMatchObject({ status: 'claimed', cumulativeMinor: '250', amountMinor: '50', feeMinor: String(fee(250n) - fee(200n)) });
    const closed = await s.client.sessions.close(session.id);
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '250', feeMinor: String(fee(250n)), heldMinor: '0', lastSequence: 25 });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 750n, held: 0n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: 250n - fee(250n), held: 0n });
    expect(platformBalance() - platformBefore).toBe(fee(250n));
    expect(entryTypes(session.id, buyer.walletId)).toEqual(['hold', 'capture', 'capture', 'release']);
    await expectLedgerVerifies();

    // the close again answers the closed session; nothing more moves
    const rowsClosed = ledgerRows(t).length;
    expect((await s.client.sessions.close(session.id)).status).toBe('closed');
    expect(ledgerRows(t).length).toBe(rowsClosed);

    // the buyer's workspace and the seller see it; another seller does not
    expect(await t.workspace.sessions.get(session.id)).toMatchObject({ id: session.id, status: 'closed' });
    expect((await s.client.sessions.list()).sessions.map((x) => x.id)).toContain(session.id);
    expect((await t.workspace.sessions.list({ status: 'closed' })).sessions.map((x) => x.id)).toContain(session.id);
    const other = await newSeller(t, '10');
    await refused(other.client.sessions.get(session.id), 404, 'SESSION_NOT_FOUND');
    await refused(other.client.sessions.claim([{ sessionId: session.id, voucher: (await checker.highest(session.id))! }]).then((r) => {
      if (r[0]!.status !== 200) throw Object.assign(new Error('refused'), { status: r[0]!.status, code: bodyOf(r[0]!).error?.code });
    }), 404, 'SESSION_NOT_FOUND');
  });

  it('a failed call gives its price back to the session credit; a late voucher gets the state to resync from', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const checker = new SessionChecker({ providerId: s.id, sellerPrivateKeyPem: sellerKey.privateKeyPem, platformKey, store: new MemoryVoucherStore(), now: () => clock.now() });
    const { open, session: pending } = await openRequest({
      walletId: buyer.walletId, privateKeyPem: buyer.privateKeyPem, providerId: s.id, capabilityId: s.capabilityId, capMinor: '100', currency: 'USD',
      expiresAt: new Date(clock.now() + HOUR).toISOString(), now: () => clock.now(),
    });
    const { grant } = await s.client.sessions.open({ open, sellerPublicKey: await checker.publicKeyPem() });
    const paying = await pending.start(grant, await platformKey(grant.signingKeyId));
    await checker.acceptGrant(grant);
    const h = (i: number) => hashOf(`POST /thing ${i}`);
    // two calls in flight: vouchers 1 and 2; 2 arrives first
    const v1 = await paying.voucher('10', h(1));
    const v2 = await paying.voucher('10', h(2));
    const d2 = await checker.check(v2, { priceMinor: '10', requestHash: h(2) });
    expect(d2.kind).toBe('accept');
    const late = await checker.check(v1, { priceMinor: '10', requestHash: h(1) });
    expect(late).toMatchObject({ kind: 'refuse', code: 'VOUCHER_STALE', state: { sequence: 2, cumulativeMinor: '20', spentMinor: '10' } });
    // the buyer resyncs: the next voucher covers what was served plus the call
    if (late.kind === 'refuse') paying.resync(late.state!);
    const v3 = await paying.voucher('10', h(1));
    // voucher 2 brought 20 and paid 10: its credit pays call 1, at cumulative 20 still
    expect(v3).toMatchObject({ sequence: 3, cumulativeMinor: '20' });
    const d3 = await checker.check(v3, { priceMinor: '10', requestHash: h(1) });
    expect(d3).toMatchObject({ kind: 'accept', state: { spentMinor: '20', cumulativeMinor: '20' } });
    // a failed call gives its 10 back to the credit
    if (d3.kind === 'accept') expect(await checker.settle(d3, { ok: false, responseHash: h(0) })).toBeNull();
    const v4 = await paying.voucher('10', h(4));
    const d4 = await checker.check(v4, { priceMinor: '10', requestHash: h(4) });
    expect(d4).toMatchObject({ kind: 'accept', state: { spentMinor: '20', cumulativeMinor: '30' } });
    // above the cap: the buyer signs nothing
    await expect(paying.voucher('71', h(5))).rejects.toMatchObject({ code: 'VOUCHER_ABOVE_CAP' });
  });
});

describe('top-up', () => {
  it('raises the cap by a buyer-signed top-up: the increase is held, a new grant the seller and the buyer take; a replay changes nothing', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const checker = new SessionChecker({ providerId: s.id, sellerPrivateKeyPem: sellerKey.privateKeyPem, platformKey, store: new MemoryVoucherStore(), now: () => clock.now() });
    const { open, session: pending } = await openRequest({
      walletId: buyer.walletId, privateKeyPem: buyer.privateKeyPem, providerId: s.id, capabilityId: s.capabilityId, capMinor: '20', currency: 'USD',
      expiresAt: new Date(clock.now() + HOUR).toISOString(), now: () => clock.now(),
    });
    const { session, grant } = await s.client.sessions.open({ open, sellerPublicKey: await checker.publicKeyPem() });
    const paying = await pending.start(grant, await platformKey(grant.signingKeyId));
    await checker.acceptGrant(grant);
    for (let i = 1; i <= 2; i++) expect((await checker.check(await paying.voucher('10', hashOf(`${i}`)), { priceMinor: '10', requestHash: hashOf(`${i}`) })).kind).toBe('accept');
    await expect(paying.voucher('10', hashOf('3'))).rejects.toMatchObject({ code: 'VOUCHER_ABOVE_CAP' });

    const topUp = await paying.topUpRequest(buyer.privateKeyPem, '50');
    const raised = await s.client.sessions.topUp(session.id, topUp);
    expect(raised.session).toMatchObject({ capMinor: '50', heldMinor: '50' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 50n });
    expect(entryTypes(session.id, buyer.walletId)).toEqual(['hold', 'hold']);
    // the same top-up again: applied already, nothing held twice
    expect((await s.client.sessions.topUp(session.id, topUp)).session.capMinor).toBe('50');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 50n });
    // a top-up from a cap it no longer has is refused; one changed after signing too; neither holds anything
    await refused(s.client.sessions.topUp(session.id, await paying.topUpRequest(buyer.privateKeyPem, '60')), 409, 'CONFLICT');
    await refused(s.client.sessions.topUp(session.id, { ...topUp, toCapMinor: '60' }), 403, 'FORBIDDEN');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 50n });

    await paying.raised(raised.grant, await platformKey(raised.grant.signingKeyId));
    await checker.acceptGrant(raised.grant);
    const v3 = await paying.voucher('10', hashOf('3'));
    expect(await checker.check(v3, { priceMinor: '10', requestHash: hashOf('3') })).toMatchObject({ kind: 'accept', state: { cumulativeMinor: '30' } });
    await s.client.sessions.claim(await checker.claims());
    await s.client.sessions.close(session.id);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 970n, held: 0n });
    await expectLedgerVerifies();
  });
});

describe('claims refused write nothing', () => {
  it('above the cap, with a bad signature, for another session, or below what was claimed', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const { session, sessionKey } = await opened(s, buyer, '100');
    const expectRefused = async (voucher: Voucher, status: number, code: string, sessionId = session.id) => {
      const before = snapshotDb(t.dataDir);
      const [r] = await s.client.sessions.claim([{ sessionId, voucher }]);
      expect(r!.status, JSON.stringify(r)).toBe(status);
      expect(bodyOf(r!).error?.code).toBe(code);
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    };
    await expectRefused(voucherOf(sessionKey, session.id, '101', 1), 409, 'VOUCHER_ABOVE_CAP');
    await expectRefused(voucherOf(generateEd25519().privateKeyPem, session.id, '50', 1), 400, 'VOUCHER_INVALID');
    await expectRefused({ ...voucherOf(sessionKey, session.id, '50', 1), cumulativeMinor: '60' }, 400, 'VOUCHER_INVALID');
    const { session: second } = await opened(s, buyer, '100');
    await expectRefused(voucherOf(sessionKey, session.id, '50', 1), 400, 'VOUCHER_INVALID', second.id);

    const [ok] = await s.client.sessions.claim([{ sessionId: session.id, voucher: voucherOf(sessionKey, session.id, '50', 5) }]);
    expect(ok!.body).toMatchObject({ status: 'claimed', amountMinor: '50' });
    await expectRefused(voucherOf(sessionKey, session.id, '40', 4), 409, 'VOUCHER_STALE');
    await expectRefused(voucherOf(sessionKey, session.id, '60', 5), 409, 'VOUCHER_STALE');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 950n, held: 150n });

    await s.client.sessions.close(session.id);
    await expectRefused(voucherOf(sessionKey, session.id, '70', 6), 409, 'SESSION_CLOSED');
    await s.client.sessions.close(second.id);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 950n, held: 0n });
    await expectLedgerVerifies();
  });

  it('an open the wallet cannot cover, signed by another key, replayed or for another seller is refused and holds nothing', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '100');
    const other = await newSeller(t, '10');
    const { open } = signedOpen(s, buyer, '50');
    const before = snapshotDb(t.dataDir);
    await refused(opened(s, buyer, '101'), 402, 'INSUFFICIENT_FUNDS');
    await refused(s.client.sessions.open({ open: { ...open, capMinor: '60' }, sellerPublicKey: sellerKey.publicKeyPem }), 403, 'FORBIDDEN');
    await refused(other.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem }), 403, 'FORBIDDEN');
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 0n });
    await s.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem });
    await refused(s.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem }), 409, 'REPLAY_DETECTED');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 50n });
  });
});

describe('policies decide on the cap', () => {
  it('a budget counts the cap while the session is open, and what was not used once it is closed', async () => {
    const ws = await t.newWorkspace('Session Budget');
    const buyer = await newBuyer(t, ws.client, '5000');
    await ws.client.policies.apply('budget:\n  per agent 1000 per day\n');
    const s = await newSeller(t, '300');
    const denied = await refused(opened(s, buyer, '1200'), 403, 'POLICY_DENIED');
    expect(denied.details).toMatchObject({ amountMinor: '1200', limitMinor: '1000' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
    const { session, sessionKey } = await opened(s, buyer, '800');
    // 800 of the day's 1000 are taken by the cap: a per-call purchase of 300 does not fit
    await refused(authorizeCall(s.client, s.capabilityId, buyer), 403, 'POLICY_DENIED');
    await s.client.sessions.claim([{ sessionId: session.id, voucher: voucherOf(sessionKey, session.id, '100', 1) }]);
    await s.client.sessions.close(session.id);
    // 100 spent in the session: the 300 fit now
    await authorizeCall(s.client, s.capabilityId, buyer);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 4900n, held: 300n });
  });

  it('an approval rule holds an open above it for a person; once approved, the same open request opens', async () => {
    const ws = await t.newWorkspace('Session Approval');
    const buyer = await newBuyer(t, ws.client, '5000');
    await ws.client.policies.apply('approval "over 500":\n  price > 500\n');
    const s = await newSeller(t, '10');
    const { open } = signedOpen(s, buyer, '600');
    const held = await refused(s.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem }), 403, 'APPROVAL_REQUIRED');
    const approvalId = (held as { details: { approvalId: string } }).details.approvalId;
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
    await ws.client.approvals.approve(approvalId);
    const { session } = await s.client.sessions.open({ open, sellerPublicKey: sellerKey.publicKeyPem });
    expect(session.capMinor).toBe('600');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 5000n, held: 600n });
    // a seller-wide session has no one capability for the policies to judge
    await refused(opened(s, buyer, '100', { capabilityId: null }), 403, 'POLICY_DENIED');
    await s.client.sessions.close(session.id);
  });
});

describe('expiry', () => {
  it('takes claims in the claim window after expiry, then the sweeper releases the rest', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const { session, sessionKey, grant } = await opened(s, buyer, '300');
    expect(grant.claimWindowEndsAt).toBe(new Date(Date.parse(grant.expiresAt) + CLAIM_WINDOW_MS).toISOString());
    clock.set(Date.parse(grant.expiresAt) + 1);
    const [late] = await s.client.sessions.claim([{ sessionId: session.id, voucher: voucherOf(sessionKey, session.id, '120', 12) }]);
    expect(late!.body).toMatchObject({ status: 'claimed', amountMinor: '120' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 880n, held: 180n });
    // not yet due: the sweep leaves it
    await t.gw.services.sweeper.sweepOnce();
    expect((await s.client.sessions.get(session.id)).status).toBe('open');
    clock.set(Date.parse(grant.claimWindowEndsAt));
    const [tooLate] = await s.client.sessions.claim([{ sessionId: session.id, voucher: voucherOf(sessionKey, session.id, '130', 13) }]);
    expect(bodyOf(tooLate!).error?.code).toBe('SESSION_EXPIRED');
    await t.gw.services.sweeper.sweepOnce();
    expect(await s.client.sessions.get(session.id)).toMatchObject({ status: 'expired', claimedMinor: '120', heldMinor: '0' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 880n, held: 0n });
    expect(entryTypes(session.id, buyer.walletId)).toEqual(['hold', 'capture', 'release']);
    // a second sweep releases nothing more
    const rows = ledgerRows(t).length;
    await t.gw.services.sweeper.sweepOnce();
    expect(ledgerRows(t).length).toBe(rows);
    await expectLedgerVerifies();
  });
});

describe('concurrent claims', () => {
  it('of one session on several requests pay once', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const platformBefore = platformBalance();
    const { session, sessionKey } = await opened(s, buyer, '500');
    const voucher = voucherOf(sessionKey, session.id, '333', 33);
    const results = (await Promise.all(Array.from({ length: 12 }, () => s.client.sessions.claim([{ sessionId: session.id, voucher }])))).flat();
    expect(results.every((r) => r.status === 200), JSON.stringify(results)).toBe(true);
    expect(results.filter((r) => bodyOf(r).status === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => bodyOf(r).status === 'unchanged')).toHaveLength(11);
    // and different vouchers at once: the highest wins, each increase paid once
    const vouchers = [400, 350, 450, 420].map((n, i) => voucherOf(sessionKey, session.id, String(n), 40 + i + (n === 450 ? 10 : 0)));
    await Promise.all(vouchers.map((v) => s.client.sessions.claim([{ sessionId: session.id, voucher: v }])));
    const after = await s.client.sessions.get(session.id);
    const claimed = BigInt(after.claimedMinor);
    expect(claimed >= 400n).toBe(true);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n - claimed, held: 500n - claimed });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: claimed - fee(claimed), held: 0n });
    expect(platformBalance() - platformBefore).toBe(fee(claimed));
    await s.client.sessions.close(session.id);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n - claimed, held: 0n });
    await expectLedgerVerifies();
  });
});

describe('a claim up to less than the voucher (amountMinor)', () => {
  it('takes what the calls served, the same voucher again for more, never more than it pays; close releases the rest', async () => {
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const platformBefore = platformBalance();
    const { session, sessionKey } = await opened(s, buyer, '100');
    // the buyer's voucher pays 50 ahead; the seller served calls worth 30 of it so far
    const v = voucherOf(sessionKey, session.id, '50', 5);
    const [first] = await s.client.sessions.claim([{ sessionId: session.id, voucher: v, amountMinor: '30' }]);
    expect(first).toMatchObject({ status: 200, body: { status: 'claimed', cumulativeMinor: '30', amountMinor: '30', feeMinor: String(fee(30n)) } });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 970n, held: 70n });

    // the same amount again: unchanged; above the voucher: refused, nothing written
    const rows = ledgerRows(t).length;
    const [again] = await s.client.sessions.claim([{ sessionId: session.id, voucher: v, amountMinor: '30' }]);
    expect(again).toMatchObject({ status: 200, body: { status: 'unchanged', amountMinor: '0' } });
    const [above] = await s.client.sessions.claim([{ sessionId: session.id, voucher: v, amountMinor: '60' }]);
    expect(above).toMatchObject({ status: 409, body: { error: { code: 'VOUCHER_ABOVE_CAP', details: { field: 'amountMinor' } } } });
    expect(ledgerRows(t).length).toBe(rows);

    // the calls in flight finished: the same voucher, claimed up to 40; a lower amount after it is stale
    const [more] = await s.client.sessions.claim([{ sessionId: session.id, voucher: v, amountMinor: '40' }]);
    expect(more).toMatchObject({ status: 200, body: { status: 'claimed', cumulativeMinor: '40', amountMinor: '10', feeMinor: String(fee(40n) - fee(30n)) } });
    const [lower] = await s.client.sessions.claim([{ sessionId: session.id, voucher: v, amountMinor: '35' }]);
    expect(lower).toMatchObject({ status: 409, body: { error: { code: 'VOUCHER_STALE' } } });

    const closed = await s.client.sessions.close(session.id);
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '40', feeMinor: String(fee(40n)), heldMinor: '0' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 960n, held: 0n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: 40n - fee(40n), held: 0n });
    expect(platformBalance() - platformBefore).toBe(fee(40n));
    await expectLedgerVerifies();
  });
});
