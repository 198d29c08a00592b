import type { sessions, sessionClaims } from '../schema/index.js';

export type Session = typeof sessions.$inferSelect;
export type SessionStatus = Session['status'];
export type SessionClaim = typeof sessionClaims.$inferSelect;
export type SessionPatch = Partial<Pick<Session, 'capMinor' | 'claimedMinor' | 'feeMinor' | 'lastSequence' | 'status' | 'updatedAt' | 'closedAt' | 'expiresAt' | 'claimWindowEndsAt'>>;

/** Whose sessions a listing shows: a seller's, or those of a workspace's wallets. */
export interface SessionOwner {
  providerId?: string;
  workspaceId?: string;
}

export interface SessionRepo {
  /** throws a unique violation when the open nonce was used */
  insert(s: Session): Promise<void>;
  get(id: string): Promise<Session | undefined>;
  /** the session, locked until the transaction ends (PostgreSQL; SQLite's writer is alone anyway): what decides a claim or a close */
  getForUpdate(id: string): Promise<Session | undefined>;
  /**
   * Changes the session only while it is open with `claimedMinor` as read (compare and set);
   * false when another transaction changed it first.
   */
  advance(id: string, claimedMinor: bigint, patch: SessionPatch): Promise<boolean>;
  /** newest first; `before`: the (createdAt, id) of the last row of the previous page */
  list(owner: SessionOwner, opts: { status?: SessionStatus; limit: number; before?: { createdAt: number; id: string } }): Promise<Session[]>;
  /** open sessions whose claim window ended at `now`: the sweeper releases them */
  listDue(now: number, limit: number): Promise<Session[]>;
  /** every open session, a page at a time by id (ledger verify: what they hold) */
  pageOpen(opts: { afterId?: string; limit: number }): Promise<Session[]>;
  /** throws a unique violation when the session already has a claim of this cumulative amount */
  insertClaim(c: SessionClaim): Promise<void>;
  /** a session's claims, oldest first */
  claims(sessionId: string): Promise<SessionClaim[]>;
}
