/** The payment sessions behind the /v1/sessions routes, built once per gateway (docs/protocol.md § Payment sessions). */
import { AppError } from '../../../core/errors.js';
import type { Principal } from '../../tenancy/api-keys.js';
import type { SessionOwner, SessionStatus } from '../../../store/repos/sessions.js';
import type { PaymentDeps } from '../deps.js';
import { VerificationKeys } from '../verification-keys.js';
import { openSession, type OpenSessionInput } from './open.js';
import { topUpSession } from './top-up.js';
import { claimSession, closeSession, endSession, expireSessionNow, sweepSessions, type ClaimInput } from './claim.js';
import { sessionNotFound, sessionView, type SessionView } from './view.js';
import { iso } from '../../../core/clock.js';
import { SESSION_PAGE_MAX, type OpenedSession, type SessionClaimList, type SessionClaimResult, type SessionPage, type SessionTopUp } from 'agentpay-sdk/contract';

export type { ClaimInput, OpenSessionInput };

/** Whose sessions a key sees: a seller its sales' sessions, a workspace those of its wallets. */
function ownerOf(p: Principal): SessionOwner {
  return p.tenantKind === 'provider' ? { providerId: p.tenantId } : { workspaceId: p.tenantId };
}

function owns(p: Principal, s: { providerId: string; workspaceId: string }): boolean {
  return p.tenantKind === 'provider' ? s.providerId === p.tenantId : s.workspaceId === p.tenantId;
}

export class SessionService {
  private keys: VerificationKeys;

  constructor(private deps: PaymentDeps) {
    this.keys = new VerificationKeys(deps.ctx.store);
  }

  open(p: Principal, input: OpenSessionInput): Promise<OpenedSession> {
    return openSession(this.deps, this.keys, p, input);
  }

  topUp(p: Principal, sessionId: string, topUp: SessionTopUp): Promise<OpenedSession> {
    return topUpSession(this.deps, this.keys, p, sessionId, topUp);
  }

  claim(p: Principal, input: ClaimInput): Promise<SessionClaimResult> {
    return claimSession(this.deps, p, input);
  }

  close(p: Principal, sessionId: string): Promise<SessionView> {
    return closeSession(this.deps, p, sessionId);
  }

  /** The buyer's workspace ends its session early: claims are taken for one more claim window, then the rest is released. */
  end(p: Principal, sessionId: string): Promise<SessionView> {
    return endSession(this.deps, p, sessionId);
  }

  /** Every claim of a session that moved money, oldest first (the seller's, or the buyer's workspace's). */
  async claims(p: Principal, id: string): Promise<SessionClaimList> {
    const claims = await this.deps.ctx.store.read(async (r) => {
      const s = await r.sessions.get(id);
      if (!s || !owns(p, s)) throw sessionNotFound(id);
      return r.sessions.claims(id);
    });
    return {
      sessionId: id,
      claims: claims.map((c) => ({
        cumulativeMinor: c.cumulativeMinor.toString(), sequence: c.sequence, amountMinor: c.amountMinor.toString(), feeMinor: c.feeMinor.toString(), createdAt: iso(c.createdAt),
      })),
    };
  }

  /** The sandbox: the seller's open session expires now, as at the end of its claim window. */
  expireNow(p: Principal, sessionId: string): Promise<SessionView> {
    return expireSessionNow(this.deps, p, sessionId);
  }

  /** Releases the rest of the sessions whose claim window ended (the expiry sweeper calls it). */
  sweep(): Promise<number> {
    return sweepSessions(this.deps);
  }

  async get(p: Principal, id: string): Promise<SessionView> {
    const s = await this.deps.ctx.store.read((r) => r.sessions.get(id));
    if (!s || !owns(p, s)) throw sessionNotFound(id);
    return sessionView(s);
  }

  /** Newest first, a page at a time; `nextCursor` only on a full page. */
  async list(p: Principal, q: { status?: SessionStatus; walletId?: string; sellerId?: string; limit?: number; after?: string }): Promise<SessionPage> {
    const limit = Math.min(q.limit ?? 50, SESSION_PAGE_MAX);
    // a filter narrows what the caller sees, never widens it: a seller asking for another seller's sees none
    const owner = { ...(q.sellerId !== undefined ? { providerId: q.sellerId } : {}), ...ownerOf(p) };
    const rows = await this.deps.ctx.store.read(async (r) => {
      let before: { createdAt: number; id: string } | undefined;
      if (q.after !== undefined) {
        const cursor = await r.sessions.get(q.after);
        if (!cursor || !owns(p, cursor)) {
          throw new AppError('INVALID_CURSOR', `after: ${q.after} is not a session in this list; pass the nextCursor of the previous page, or leave it out to start from the newest`, { field: 'after' });
        }
        before = { createdAt: cursor.createdAt, id: cursor.id };
      }
      if (p.tenantKind === 'provider' && q.sellerId !== undefined && q.sellerId !== p.tenantId) return [];
      return r.sessions.list(owner, {
        limit, ...(q.status !== undefined ? { status: q.status } : {}), ...(q.walletId !== undefined ? { walletId: q.walletId } : {}), ...(before ? { before } : {}),
      });
    });
    return { sessions: rows.map(sessionView), nextCursor: rows.length === limit ? rows[rows.length - 1]!.id : null };
  }
}
