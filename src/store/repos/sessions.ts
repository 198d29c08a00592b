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
