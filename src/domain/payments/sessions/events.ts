/**
 * The events of a payment session (docs/api/webhooks.md § Session events), recorded in the database
 * transaction that changes it, once for the seller and once for the buyer's workspace:
 *   session.opened   the cap held on the buyer's wallet
 *   session.claimed  a claim moved money from the hold to the seller and the platform fee
 *   session.closed   the seller closed it: the rest released to the buyer
 *   session.expired  its claim window ended: the rest released to the buyer
 * Written by recordPlacedEvent, as the payment events: nothing read, nothing waited for.
 */
import type { Repos } from '../../../store/store.js';
import type { Session } from '../../../store/repos/sessions.js';
import type { DomainContext } from '../../platform/context.js';
import { recordPlacedEvent } from '../../platform/events.js';
import { sessionView } from './view.js';
import type { SessionEventData } from 'agentpay-sdk/contract';

export type SessionEventType = 'session.opened' | 'session.claimed' | 'session.closed' | 'session.expired';

type Extra = Pick<SessionEventData, 'cumulativeMinor' | 'sequence' | 'amountMinor' | 'feeMinor' | 'saleMinor' | 'releasedMinor'>;

/** The facts of every session event: ids, amounts as strings, and the session as it is after the change. */
export function sessionEventData(s: Session, extra: Extra): SessionEventData {
  return {
    sessionId: s.id,
    walletId: s.walletId,
    workspaceId: s.workspaceId,
    providerId: s.providerId,
    capabilityId: s.capabilityId,
    currency: s.currency,
    capMinor: s.capMinor.toString(),
    claimedMinor: s.claimedMinor.toString(),
    ...extra,
    session: sessionView(s),
  };
}

/** Records the event for the seller and for the buyer's workspace. */
export async function recordSessionEvent(
  r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids' | 'observer'>, type: SessionEventType, s: Session, extra: Extra = {},
): Promise<void> {
  const data = sessionEventData(s, extra) as unknown as Record<string, unknown>;
  await recordPlacedEvent(r, ctx, s.providerId, type, data);
  if (s.workspaceId !== s.providerId) await recordPlacedEvent(r, ctx, s.workspaceId, type, data);
}
