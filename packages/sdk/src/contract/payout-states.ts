/**
 * A payout's states and the rules about them that the gateway, the SDK, the CLI and the dashboard
 * share: plain values (no TypeBox), so the dashboard imports this file without the schema builder.
 * The payout schemas that use them are in rails.ts.
 */

/** A payout's `status`, and the `status` filter of GET /v1/payouts. */
export const PAYOUT_STATUSES = ['submitted', 'confirmed', 'returned', 'failed'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** What the operator found out from the rail (POST /v1/payouts/:id/resolve): the money left (`paid`) or it did not (`failed`). */
export const RESOLVE_OUTCOMES = ['paid', 'failed'] as const;
export type ResolveOutcome = (typeof RESOLVE_OUTCOMES)[number];

/**
 * A payout still `submitted` this long after it was submitted is stuck: its rail has not answered
 * and the operator should ask it (`agentpay payouts list --stuck`, the dashboard's operator view:
 * `status=submitted`, `submittedBefore` the gateway's time minus this). 24 hours.
 */
export const PAYOUT_STUCK_AFTER_MS = 24 * 60 * 60 * 1000;
