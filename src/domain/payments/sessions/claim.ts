/**
 * Claims, close and expiry of payment sessions (docs/protocol.md § Payment sessions). A claim
 * moves the increase of a voucher's cumulative amount over what was claimed before from the
 * buyer's hold to the seller, less the platform fee, in one database transaction; the session's
 * row is locked first (PostgreSQL; SQLite has one writer), and its `claimedMinor` changes by
 * compare and set, and a (session, cumulative) claim row is unique: a voucher pays once however
 * many requests and instances carry it. A replayed claim (the cumulative amount already claimed)
 * answers `unchanged` and writes nothing. Close and the expiry sweep release what is left.
 *
 * Fees: the fee of a session is always feeFor(claimedMinor), the per-call rule (rounded down)
 * over everything claimed; each claim takes the difference. So the total does not depend on how
 * the claims were batched, and a session that paid N equals one call that paid N.
 */
import { AppError, wrongKeyKind } from '../../../core/errors.js';
import { verifyObject } from '../../../core/ed25519.js';
import { feeFor } from '../../../core/money.js';
import { isUniqueViolation } from '../../../store/errors.js';
import type { Repos } from '../../../store/store.js';
import type { Session } from '../../../store/repos/sessions.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../tenancy/tenants.js';
import { placeAll, post, type Movement } from '../../wallets/ledger.js';
import { requireProvider, type PaymentDeps } from '../deps.js';
import { CLAIM_WINDOW_MS, sessionNotFound, sessionView, type SessionView } from './view.js';
import { recordSessionEvent } from './events.js';
import type { SessionClaimResult, Voucher } from 'agentpay-sdk/contract';

export interface ClaimInput {
  sessionId: string;
  voucher: Voucher;
  /** claim up to this amount, at most the voucher's cumulative (default: the cumulative) */
  amountMinor?: string | undefined;
}

/** A seller's own session; another's is not found. */
async function ownSession(r: Repos, p: Principal, id: string): Promise<Session> {
  const s = await r.sessions.getForUpdate(id);
  if (!s || s.providerId !== p.tenantId) throw sessionNotFound(id);
  return s;
}

function invalid(message: string, details: Record<string, unknown>): AppError {
  return new AppError('VOUCHER_INVALID', message, details);
}

/** The voucher's signature by the session's key (outside any transaction: crypto is the slow part). */
async function checkSignature(deps: PaymentDeps, p: Principal, input: ClaimInput): Promise<void> {
  if (input.voucher.sessionId !== input.sessionId) {
    throw invalid(`the voucher is for session ${input.voucher.sessionId}, not ${input.sessionId}`, { sessionId: input.sessionId, field: 'voucher.sessionId' });
  }
  const s = await deps.ctx.store.read((r) => r.sessions.get(input.sessionId), { unsynced: true });
  if (!s || s.providerId !== p.tenantId) throw sessionNotFound(input.sessionId);
  if (!verifyObject(s.sessionPublicKey, input.voucher)) {
    throw invalid(`the voucher is not signed by the key of session ${s.id}; nothing was claimed`, { sessionId: s.id, field: 'voucher.signature' });
  }
}

/**
 * The claim of one voucher on a session read under its lock: the increase moved, or `unchanged`
 * for a cumulative amount claimed already. Refusals throw and write nothing.
 */
async function claimIn(deps: PaymentDeps, r: Repos, s: Session, voucher: Voucher, upTo: string | undefined, now: number): Promise<{ result: SessionClaimResult; session: Session }> {
  const signed = BigInt(voucher.cumulativeMinor);
  const at = { sessionId: s.id, cumulativeMinor: voucher.cumulativeMinor };
  if (signed > s.capMinor) {
    throw new AppError('VOUCHER_ABOVE_CAP', `the voucher's cumulative ${signed} is above the session's cap ${s.capMinor}; nothing was claimed`, { ...at, capMinor: s.capMinor.toString() });
  }
  // what the seller claims up to: the voucher's cumulative, or less (what the calls served cost)
  const cumulative = upTo === undefined ? signed : BigInt(upTo);
  if (cumulative > signed) {
    throw new AppError('VOUCHER_ABOVE_CAP', `amountMinor ${cumulative} is above the voucher's cumulative ${signed}; claim at most what the voucher pays`, { ...at, field: 'amountMinor', amountMinor: cumulative.toString() });
  }
  if (cumulative === s.claimedMinor) {
    return { session: s, result: { sessionId: s.id, status: 'unchanged', cumulativeMinor: cumulative.toString(), amountMinor: '0', feeMinor: '0', session: sessionView(s) } };
  }
  // the same voucher may be claimed again for more (its calls finished since); an older one never
  if (cumulative < s.claimedMinor || voucher.sequence < s.lastSequence || (upTo === undefined && voucher.sequence === s.lastSequence)) {
    throw new AppError('VOUCHER_STALE', `session ${s.id} was claimed up to ${s.claimedMinor} (sequence ${s.lastSequence}); a voucher below it pays nothing more. Claim the highest voucher`, {
      ...at, claimedMinor: s.claimedMinor.toString(), lastSequence: s.lastSequence,
    });
  }
  if (s.status !== 'open') throw new AppError('SESSION_CLOSED', `session ${s.id} is ${s.status}; its rest went back to the buyer and nothing more can be claimed`, { sessionId: s.id, status: s.status });
  if (now >= s.claimWindowEndsAt) {
    throw new AppError('SESSION_EXPIRED', `session ${s.id}'s claim window ended at ${new Date(s.claimWindowEndsAt).toISOString()}; its rest goes back to the buyer`, { sessionId: s.id });
  }
  const amount = cumulative - s.claimedMinor;
  const totalFee = feeFor(cumulative, deps.settings.feeBps);
  const fee = totalFee - s.feeMinor;
  const sale = amount - fee;
  try {
    await r.sessions.insertClaim({ sessionId: s.id, cumulativeMinor: cumulative, sequence: voucher.sequence, amountMinor: amount, feeMinor: fee, createdAt: now });
  } catch (e) {
    if (isUniqueViolation(e)) throw concurrent(s.id);
    throw e;
  }
  const patch = { claimedMinor: cumulative, feeMinor: totalFee, lastSequence: voucher.sequence, updatedAt: now };
  if (!(await r.sessions.advance(s.id, s.claimedMinor, patch))) throw concurrent(s.id);
  const common = { currency: s.currency, transactionId: s.id, reference: s.capabilityId ?? s.providerId };
  // the lock order of docs/deploy.md: the buyer's wallet, the seller's, the platform's
  const movements: Movement[] = [{ ...common, walletId: s.walletId, type: 'capture', amountMinor: -amount, holdMinor: -amount, memo: `claim of session ${s.id} up to ${cumulative}` }];
  if (sale > 0n) movements.push({ ...common, walletId: s.payTo, type: 'sale', amountMinor: sale, memo: `sale of session ${s.id} up to ${cumulative}` });
  if (fee > 0n) movements.push({ ...common, walletId: PLATFORM_REVENUE_WALLET_ID, type: 'fee', amountMinor: fee, memo: `platform fee on session ${s.id}` });
  await placeAll(r, deps.ctx, movements);
  const session = { ...s, ...patch };
  await recordSessionEvent(r, deps.ctx, 'session.claimed', session, {
    cumulativeMinor: cumulative.toString(), sequence: voucher.sequence, amountMinor: amount.toString(), feeMinor: fee.toString(), saleMinor: sale.toString(),
  });
  return { session, result: { sessionId: s.id, status: 'claimed', cumulativeMinor: cumulative.toString(), amountMinor: amount.toString(), feeMinor: fee.toString(), session: sessionView(session) } };
}

function concurrent(id: string): AppError {
  return new AppError('CONFLICT', `session ${id} was claimed by another request at the same time; send the claim again`, { sessionId: id });
}

/** One claim, in its own database transaction. */
export async function claimSession(deps: PaymentDeps, p: Principal, input: ClaimInput): Promise<SessionClaimResult> {
  requireProvider(p);
  await checkSignature(deps, p, input);
  return deps.ctx.store.tx(async (r) => (await claimIn(deps, r, await ownSession(r, p, input.sessionId), input.voucher, input.amountMinor, deps.ctx.clock.now())).result);
}

/** Gives the rest of the cap back to the buyer and ends the session (`status`); the caller holds its lock. */
async function release(deps: PaymentDeps, r: Repos, s: Session, status: 'closed' | 'expired', now: number): Promise<Session | undefined> {
  const patch = { status, closedAt: now, updatedAt: now };
  if (!(await r.sessions.advance(s.id, s.claimedMinor, patch))) return undefined;
  const rest = s.capMinor - s.claimedMinor;
  if (rest > 0n) {
    await post(r, deps.ctx, {
      walletId: s.walletId, type: 'release', amountMinor: 0n, holdMinor: -rest, currency: s.currency, transactionId: s.id,
      reference: s.capabilityId ?? s.providerId, memo: `release of the rest of session ${s.id} (${status})`,
    });
  }
  const ended = { ...s, ...patch };
  await recordSessionEvent(r, deps.ctx, status === 'closed' ? 'session.closed' : 'session.expired', ended, { releasedMinor: rest.toString() });
  return ended;
}

/**
 * The seller closes its session (after claiming its highest voucher): the rest is released to
 * the buyer. Closing a closed or expired session answers it as it is.
 */
export async function closeSession(deps: PaymentDeps, p: Principal, sessionId: string): Promise<SessionView> {
  requireProvider(p);
  return deps.ctx.store.tx(async (r) => {
    const s = await ownSession(r, p, sessionId);
    if (s.status !== 'open') return sessionView(s);
    const closed = await release(deps, r, s, 'closed', deps.ctx.clock.now());
    if (!closed) throw concurrent(s.id);
    return sessionView(closed);
  });
}

/**
 * The buyer's workspace ends its session early: no voucher is good from now on (`expiresAt` moves
 * to now), and the seller's claims are still taken for one claim window from now, so a call it
 * served before the end is paid; then the expiry sweeper releases the rest (`session.expired`).
 * Nothing is released at once: the gateway cannot know which vouchers the seller holds unclaimed.
 * Ending an ended, closed or expired session answers it as it is.
 */
export async function endSession(deps: PaymentDeps, p: Principal, sessionId: string): Promise<SessionView> {
  if (p.tenantKind !== 'workspace') {
    throw wrongKeyKind(['workspace'], "the buyer's workspace ends its sessions early; the seller closes them with POST /v1/sessions/:id/close");
  }
  return deps.ctx.store.tx(async (r) => {
    const s = await r.sessions.getForUpdate(sessionId);
    if (!s || s.workspaceId !== p.tenantId) throw sessionNotFound(sessionId);
    const now = deps.ctx.clock.now();
    if (s.status !== 'open' || s.expiresAt <= now) return sessionView(s);
    const patch = { expiresAt: now, claimWindowEndsAt: Math.min(s.claimWindowEndsAt, now + CLAIM_WINDOW_MS), updatedAt: now };
    if (!(await r.sessions.advance(s.id, s.claimedMinor, patch))) throw concurrent(s.id);
    return sessionView({ ...s, ...patch });
  });
}

/**
 * The sandbox's shortcut (POST /v1/sandbox/sessions/:id/expire): the seller's own open session
 * expires now, exactly as the sweeper expires it at the end of its claim window: the rest
 * released, `session.expired`. An ended one answers as it is.
 */
export async function expireSessionNow(deps: PaymentDeps, p: Principal, sessionId: string): Promise<SessionView> {
  requireProvider(p);
  return deps.ctx.store.tx(async (r) => {
    const s = await ownSession(r, p, sessionId);
    if (s.status !== 'open') return sessionView(s);
    const expired = await release(deps, r, s, 'expired', deps.ctx.clock.now());
    if (!expired) throw concurrent(s.id);
    return sessionView(expired);
  });
}

/** Per database transaction, so a backlog never holds the store for long. */
const BATCH = 100;

/** Releases the rest of every open session whose claim window ended; returns how many. */
export async function sweepSessions(deps: PaymentDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deps.ctx.store.tx(async (r) => {
      const now = deps.ctx.clock.now();
      const due = await r.sessions.listDue(now, BATCH);
      let released = 0;
      for (const listed of due) {
        const s = await r.sessions.getForUpdate(listed.id);
        if (s && s.status === 'open' && (await release(deps, r, s, 'expired', now))) released++;
      }
      return { listed: due.length, released };
    });
    total += n.released;
    if (n.listed < BATCH) break;
  }
  return total;
}
