import type { Session, SessionClaim, SessionOwner, SessionPatch, SessionStatus } from '../repos/sessions.js';
import { outstanding } from './payments.js';
import type { Sql } from './sql.js';

export class Sessions {
  private readonly t;
  private readonly claimsOf;
  constructor(private readonly c: Sql) {
    this.t = c.table('sessions');
    this.claimsOf = c.table('sessionClaims');
  }
  /** throws a unique violation when the open nonce was used */
  insert(s: Session) { return this.t.insert(s); }
  get(id: string) { return this.t.first({ id }); }
  /** the session, locked until the transaction ends (PostgreSQL; SQLite's writer is alone anyway): what decides a claim or a close */
  getForUpdate(id: string) { return this.t.first({ id }, '', true); }
  /**
   * Changes the session only while it is open with `claimedMinor` as read (compare and set);
   * false when another transaction changed it first.
   */
  async advance(id: string, claimedMinor: bigint, patch: SessionPatch) {
    return (await this.t.update({ id, status: 'open', claimedMinor }, patch)) === 1;
  }
  /** newest first; `before`: the (createdAt, id) of the last row of the previous page */
  list(owner: SessionOwner, opts: { status?: SessionStatus; walletId?: string; limit: number; before?: { createdAt: number; id: string } }) {
    const match = {
      ...(opts.walletId !== undefined ? { walletId: opts.walletId } : {}),
      ...(owner.providerId !== undefined ? { providerId: owner.providerId } : {}),
      ...(owner.workspaceId !== undefined ? { workspaceId: owner.workspaceId } : {}),
      ...(opts.status !== undefined ? { status: opts.status } : {}),
    };
    if (opts.before) {
      return this.t.all(match, 'AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?',
        [opts.before.createdAt, opts.before.createdAt, opts.before.id, opts.limit]);
    }
    return this.t.all(match, 'ORDER BY created_at DESC, id DESC LIMIT ?', [opts.limit]);
  }
  /** open sessions whose claim window ended at `now`: the sweeper releases them */
  listDue(now: number, limit: number) {
    return this.t.all({ status: 'open' }, 'AND claim_window_ends_at <= ? ORDER BY claim_window_ends_at, id LIMIT ?', [now, limit]);
  }
  /** every open session, a page at a time by id (ledger verify: what they hold) */
  pageOpen(opts: { afterId?: string; limit: number }) {
    return opts.afterId === undefined
      ? this.t.all({ status: 'open' }, 'ORDER BY id LIMIT ?', [opts.limit])
      : this.t.all({ status: 'open' }, 'AND id > ? ORDER BY id LIMIT ?', [opts.afterId, opts.limit]);
  }
  /** open sessions, and what they hold (cap less claimed) by currency (the metrics' session gauges) */
  async holdsOutstanding() {
    return outstanding(await this.c.rows("SELECT currency, count(*), coalesce(sum(cap_minor - claimed_minor), 0) FROM sessions WHERE status = 'open' GROUP BY currency ORDER BY currency"));
  }
  /** throws a unique violation when the session already has a claim of this cumulative amount */
  insertClaim(c: SessionClaim) { return this.claimsOf.insert(c); }
  /** a session's claims, oldest first */
  claims(sessionId: string) { return this.claimsOf.all({ sessionId }, 'ORDER BY cumulative_minor'); }
}
