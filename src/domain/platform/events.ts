/**
 * Events a tenant reads at GET /v1/events: alerts about money movement on its account, and
 * about spending that waits for a person.
 * Types:
 *   payout_destination.changed  a payout destination changed; payouts on its rails wait
 *   payout.confirmed            a payout's rail paid it (or the operator resolved it as paid)
 *   payout.failed               a payout never left (its submission was refused, or the operator resolved it as failed) and was re-credited
 *   payout.returned             a payout came back and was re-credited
 *   payout.resolved             (the provider, and the operator) the operator closed out a stuck payout
 *   topup.confirmed             the processor confirmed a top-up: the wallet credited (the `topup` entry)
 *   topup.declined              the processor declined a top-up: nothing credited
 *   deposit.held                a USDC deposit is held until the price is back in band
 *   deposit.credited            a USDC deposit was credited to a wallet (in USD, with its ledger entry)
 *   reconciliation.shortfall    (operator) obligations exceed what the rails hold; payouts paused
 *   reconciliation.recovered    (operator) covered again; payouts resumed
 *   approval.requested          (the workspace) a policy rule held a purchase for a person
 *   wallet_provider.paused      (the workspace) the breaker paused a seller for one of its wallets
 *   payment.succeeded           (the seller and the buyer's workspace) a paid call completed: the receipt, the money moved
 *   payment.failed              (the seller and the buyer's workspace) the seller reported the call failed: the buyer refunded
 *   payment.refunded            (the seller and the buyer's workspace) no complete or fail in time (or the sandbox expired the call now): the hold expired and was refunded
 *   session.opened              (the seller and the buyer's workspace) a payment session opened: its cap held
 *   session.claimed             (the seller and the buyer's workspace) a session's claim moved money from the hold to the seller and the fee
 *   session.closed              (the seller and the buyer's workspace) the seller closed a session: the rest released
 *   session.expired             (the seller and the buyer's workspace) a session's claim window ended: the rest released
 *   x402.settlement_failed      (the seller, and the operator) an x402 `exact` payment could not be settled on chain after
 *                               the handler ran (stage settle / retry), or a settled one is not on chain as recorded (reconcile, operator only)
 * Recorded in the same transaction as the change they announce, with a delivery queued for each
 * webhook endpoint of the tenant that wants the type (src/domain/platform/webhooks), and an alert mail for
 * the types a person should hear of (src/domain/platform/alert-mail.ts).
 */
import { EVENT_TYPES, type EventType } from 'agentpay-sdk/contract';
import { AppError } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { RailEvent } from '../../store/repos/rails.js';
import type { DomainContext } from './context.js';
import type { Principal } from '../tenancy/api-keys.js';
import { enqueueDeliveries, MAX_PENDING_PER_ENDPOINT, QUEUE_FULL_ERROR } from './webhooks/endpoints.js';
import { enqueueAlertMail } from './alert-mail.js';

// the types are the wire's (agentpay-sdk/contract, webhooks.ts)
export { EVENT_TYPES, type EventType };

export async function recordEvent(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids' | 'observer'>, tenantId: string, type: EventType, data: Record<string, unknown>): Promise<RailEvent> {
  const e: RailEvent = { id: ctx.ids.next('railEvent'), tenantId, type, data, createdAt: ctx.clock.now() };
  await r.railEvents.insert(e);
  ctx.observer?.event?.(type);
  // queued for the tenant's webhook endpoints in the same transaction (docs/api/webhooks.md)
  await enqueueDeliveries(r, ctx, e);
  // and, for the types a person should hear of, an alert mail to the tenant's accounts (alert-mail.ts)
  await enqueueAlertMail(r, ctx, e);
  return e;
}

/**
 * An event recorded as recordEvent does, for the paths of money that read nothing they need not:
 * the event and its deliveries are written by one statement the store sends without waiting
 * (RailEvents.insertQueued), so it can ride with the transaction's other writes and its
 * COMMIT. For types that send no alert mail (the payment events).
 */
export async function recordPlacedEvent(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids' | 'observer'>, tenantId: string, type: EventType, data: Record<string, unknown>): Promise<RailEvent> {
  const e: RailEvent = { id: ctx.ids.next('railEvent'), tenantId, type, data, createdAt: ctx.clock.now() };
  await r.railEvents.insertQueued(e, { deliveryId: ctx.ids.next('webhookDelivery'), maxPending: MAX_PENDING_PER_ENDPOINT, fullError: QUEUE_FULL_ERROR });
  ctx.observer?.event?.(type);
  return e;
}

export const eventView = (e: RailEvent) => ({ id: e.id, type: e.type, createdAt: iso(e.createdAt), data: e.data });

export class EventService {
  constructor(private ctx: DomainContext) {}

  /** The caller's events, newest first; `nextCursor` only when the page came back full. */
  async list(p: Principal, q: { type?: EventType; limit?: number; after?: string }) {
    const limit = q.limit ?? 50;
    return this.ctx.store.read(async (r) => {
      if (q.after !== undefined) {
        const at = await r.railEvents.get(q.after);
        if (!at || at.tenantId !== p.tenantId) throw new AppError('INVALID_CURSOR', `after: ${q.after} is not an event of yours; pass a nextCursor you were given`, { field: 'after' });
      }
      const events = await r.railEvents.list(p.tenantId, { ...(q.type ? { type: q.type } : {}), ...(q.after ? { before: q.after } : {}), limit });
      return { events: events.map(eventView), ...(events.length === limit ? { nextCursor: events.at(-1)!.id } : {}) };
    });
  }
}
