/**
 * A paid call whose handler failed: the hold goes back to the buyer as a new
 * `refund` entry and a failed receipt is stored. A provider error counts toward the
 * breaker; a client error (the buyer's request was refused) never does.
 */
import type { Principal } from '../tenancy/api-keys.js';
import { receiptView, type ReceiptView } from './receipts.js';
import { recordProviderFailure } from './breaker.js';
import { requireProvider, type PaymentDeps } from './deps.js';
import { alreadyResolved, expireTransaction, isOverdue, ownTransaction, refundHold } from './resolution.js';

export type FailureReason = 'client_error' | 'provider_error';

export interface FailInput {
  transactionId: string;
  reason: FailureReason;
  responseHash?: string;
  /** the HTTP status the handler answered, if it answered */
  statusCode?: number;
}

export async function failTransaction(deps: PaymentDeps, p: Principal, input: FailInput): Promise<ReceiptView> {
  requireProvider(p);
  const { ctx } = deps;
  const out = await ctx.store.tx(async (r) => {
    const txn = await ownTransaction(r, p, input.transactionId);
    if (txn.status === 'failed' && txn.failureReason === input.reason) {
      // a retried report: the same answer, and no second refund or breaker count
      const receipts = (await r.receipts.byTransaction(txn.id)).filter((x) => x.status === 'failed');
      const last = receipts[receipts.length - 1];
      if (last) return { receipt: receiptView(last) };
    }
    if (txn.status !== 'authorized') return { conflict: alreadyResolved(txn) };
    const now = ctx.clock.now();
    if (isOverdue(txn, now)) {
      await expireTransaction(r, deps, txn);
      return { conflict: alreadyResolved({ ...txn, status: 'expired' }, 'expired before the failure was reported and the buyer was refunded') };
    }
    const status = input.statusCode !== undefined ? ` (HTTP ${input.statusCode})` : '';
    const receipt = await refundHold(r, deps, txn, {
      status: 'failed',
      reason: input.reason,
      responseHash: input.responseHash ?? null,
      memo: `refund: the seller reported ${input.reason}${status}`,
      ...(input.statusCode !== undefined ? { statusCode: input.statusCode } : {}),
    });
    if (input.reason === 'provider_error') await recordProviderFailure(r, ctx, txn.walletId, txn.providerId);
    return { receipt };
  });
  if ('conflict' in out) throw out.conflict;
  return out.receipt;
}
