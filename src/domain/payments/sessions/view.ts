/** The wire form of a session, and its errors: one place for open, claim, close and the reads. */
import { AppError } from '../../../core/errors.js';
import { iso } from '../../../core/clock.js';
import type { Session } from '../../../store/repos/sessions.js';
import type { Session as SessionView } from 'agentpay-sdk/contract';

export type { SessionView };

/** How long after a session's expiry the seller may still claim its vouchers (then the rest is released). */
export const CLAIM_WINDOW_MS = 60 * 60 * 1000;

export function sessionView(s: Session): SessionView {
  return {
    id: s.id,
    status: s.status,
    walletId: s.walletId,
    workspaceId: s.workspaceId,
    providerId: s.providerId,
    capabilityId: s.capabilityId,
    payTo: s.payTo,
    capMinor: s.capMinor.toString(),
    claimedMinor: s.claimedMinor.toString(),
    feeMinor: s.feeMinor.toString(),
    heldMinor: (s.status === 'open' ? s.capMinor - s.claimedMinor : 0n).toString(),
    currency: s.currency,
    lastSequence: s.lastSequence,
    expiresAt: iso(s.expiresAt),
    claimWindowEndsAt: iso(s.claimWindowEndsAt),
    createdAt: iso(s.createdAt),
    closedAt: s.closedAt === null ? null : iso(s.closedAt),
  };
}

/** Another seller's session, or another workspace's, is not found: its existence is not disclosed. */
export function sessionNotFound(id: string): AppError {
  return new AppError('SESSION_NOT_FOUND', `no session ${id} of yours; check the id (sessions are listed with GET /v1/sessions)`, { sessionId: id });
}
