/**
 * What complete, fail and the sweeper share. Each resolves a transaction at most
 * once: the status is read inside the same database transaction that changes it, so
 * whichever commits first wins and the others see a resolved transaction.
 */
import { AppError, notFound } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { Transaction } from '../../store/repos/payments.js';
import type { Principal } from '../tenancy/api-keys.js';
import { post } from '../wallets/ledger.js';
import { writeReceipt, type ReceiptView } from './receipts.js';
import type { PaymentDeps } from './deps.js';
import { recordPaymentEvent } from './events.js';

type ResolveDeps = Pick<PaymentDeps, 'ctx' | 'signingKeys'>;

/** The caller's own transaction; another seller's is not found, so its existence is not disclosed. */
export async function ownTransaction(r: Repos, p: Principal, transactionId: string): Promise<Transaction> {
  const txn = await r.transactions.get(transactionId);
  if (!txn || txn.providerId !== p.tenantId) throw notFound('NOT_FOUND', 'transaction', transactionId);
  return txn;
}

export function alreadyResolved(txn: Pick<Transaction, 'id' | 'status'>, why = `is already ${txn.status}`): AppError {
  return new AppError('CONFLICT', `transaction ${txn.id} ${why}; a transaction resolves exactly once`, { transactionId: txn.id, status: txn.status });
}

/**
 * Gives the held amount back to the buyer with a `refund` entry, gives back the approval the
 * purchase used (it bought nothing: the approval covers the next purchase) and writes the
 * failed receipt. Called once per transaction, as it resolves.
 */
export async function refundHold(
  r: Repos,
  deps: ResolveDeps,
  txn: Transaction,
  outcome: { status: 'failed' | 'expired'; reason: string; responseHash: string | null; memo: string; statusCode?: number },
): Promise<ReceiptView> {
  const refund = await post(r, deps.ctx, {
    walletId: txn.walletId,
    type: 'refund',
    amountMinor: 0n,
    holdMinor: -txn.amountMinor,
    currency: txn.currency,
    transactionId: txn.id,
    reference: txn.capabilityId,
    memo: outcome.memo,
  });
  await r.transactions.update(txn.id, { status: outcome.status, failureReason: outcome.reason, resolvedAt: deps.ctx.clock.now() });
  await r.approvals.giveBack(txn.id);
  // nothing was bought: the buyer's idempotency key is free for another attempt
  await r.paymentIdempotency.removeByTransaction(txn.id);
  const receipt = await writeReceipt(r, deps, { ...txn, status: outcome.status }, 'failed', outcome.responseHash, [refund]);
  // payment.failed (the seller reported it) or payment.refunded (it expired), in this transaction
  await recordPaymentEvent(r, deps.ctx, outcome.status === 'failed' ? 'payment.failed' : 'payment.refunded', txn, receipt, {
    reason: outcome.reason, refundedMinor: txn.amountMinor.toString(), ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
  });
  return receipt;
}

/** No complete or fail arrived in time: refunded, never counted toward the breaker. */
export function expireTransaction(r: Repos, deps: ResolveDeps, txn: Transaction): Promise<ReceiptView> {
  return refundHold(r, deps, txn, { status: 'expired', reason: 'expired', responseHash: null, memo: 'refund: no complete or fail before the in-flight time ran out' });
}

/** Expires one wallet's transactions that are past their in-flight time at `now`, as the sweeper would; returns how many. */
export async function expireOverdueOf(r: Repos, deps: ResolveDeps, walletId: string, now: number): Promise<number> {
  let n = 0;
  for (const txn of await r.transactions.listExpired(now, Number.MAX_SAFE_INTEGER, walletId)) {
    await expireTransaction(r, deps, txn);
    n++;
  }
  return n;
}

/**
 * A transaction past its in-flight time is expired whether or not the sweeper got
 * to it yet, so the 15 minutes are exact however often the sweeper runs.
 */
export function isOverdue(txn: Transaction, now: number): boolean {
  return txn.status === 'authorized' && now >= txn.expiresAt;
}
