/**
 * The events of a paid call (docs/api/webhooks.md § Payment events), recorded in the database
 * transaction that resolves it, once for the seller and once for the buyer's workspace:
 *   payment.succeeded  completed: the price captured, the sale and the fee credited
 *   payment.failed     the seller reported a failure: the hold refunded to the buyer
 *   payment.refunded   no complete or fail in time: the hold expired and was refunded
 * Written by recordPlacedEvent: nothing read, nothing waited for.
 */
import type { Repos } from '../../store/store.js';
import type { Transaction } from '../../store/repos/payments.js';
import type { DomainContext } from '../platform/context.js';
import { recordPlacedEvent } from '../platform/events.js';
import type { ReceiptView } from './receipts.js';

export type PaymentEventType = 'payment.succeeded' | 'payment.failed' | 'payment.refunded';

/** The facts of every payment event: ids, amounts as strings, and the signed receipt. */
export function paymentEventData(txn: Transaction, receipt: ReceiptView, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    transactionId: txn.id,
    receiptId: receipt.id,
    capabilityId: txn.capabilityId,
    providerId: txn.providerId,
    workspaceId: txn.workspaceId,
    walletId: txn.walletId,
    amountMinor: txn.amountMinor.toString(),
    currency: txn.currency,
    ...extra,
    receipt,
  };
}

/** Records the event for the seller and for the buyer's workspace. */
export async function recordPaymentEvent(
  r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids' | 'observer'>, type: PaymentEventType, txn: Transaction, receipt: ReceiptView, extra: Record<string, unknown>,
): Promise<void> {
  const data = paymentEventData(txn, receipt, extra);
  await recordPlacedEvent(r, ctx, txn.providerId, type, data);
  if (txn.workspaceId !== txn.providerId) await recordPlacedEvent(r, ctx, txn.workspaceId, type, data);
}
