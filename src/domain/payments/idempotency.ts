/**
 * Idempotent retries of paid calls (docs/protocol.md § Idempotent retries). A buyer that sends
 * the same idempotency key again for the same request is charged once and gets the first
 * answer and its receipt; the same key for another request is refused.
 *
 * The key is scoped to (buyer wallet, capability, key); the seller sends its fingerprint of the
 * request (method, path and query, body: never the proof, which a retry after a fresh 402
 * signs anew). The row is written in the authorization's own database transaction, under its
 * primary key, so two concurrent first uses place one hold: the other sees the row (in
 * progress, or completed) or collides on the key.
 */
import { AppError } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { PaymentIdempotency } from '../../store/repos/payments.js';
import { receiptView, type ReceiptView } from './receipts.js';

/** The largest first answer the gateway keeps for a replay, bytes (a bigger one replays as its receipt only). */
export const MAX_KEPT_RESPONSE_BYTES = 256 * 1024;

export interface IdempotencyInput {
  /** the buyer's key (Idempotency-Key header, x402 payment-identifier id) */
  idempotencyKey: string;
  /** the seller's fingerprint of the request */
  requestHash: string;
}

/** What authorize answers for a key whose call already succeeded: nothing is charged. */
export interface Replay {
  transactionId: string;
  status: 'replayed';
  walletId: string;
  capabilityId: string;
  amountMinor: string;
  currency: string;
  receipt: ReceiptView;
  /** the first answer (body in base64), or null when the seller did not keep it with the gateway */
  response: { status: number; contentType: string | null; body: string } | null;
}

export function keyReused(key: string): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'this idempotency key was already used for another request (another method, path, query or body) to this capability; use a new key for a new request', {
    field: 'idempotencyKey', idempotencyKey: key,
  });
}

export function inProgress(key: string, transactionId?: string): AppError {
  return new AppError('IDEMPOTENCY_IN_PROGRESS', 'the first request with this idempotency key is still running; retry in a moment to get its answer (nothing was charged for this one)', {
    idempotencyKey: key, ...(transactionId ? { transactionId } : {}), retryAfterSeconds: 1,
  });
}

/**
 * The key's live row (an expired one is deleted and treated as absent). Throws for a reuse with
 * another request and for a first use still in progress; returns the replay of a completed one.
 */
export async function checkKey(
  r: Repos, walletId: string, capabilityId: string, input: IdempotencyInput, now: number,
): Promise<Replay | undefined> {
  const row = await r.paymentIdempotency.get(walletId, capabilityId, input.idempotencyKey);
  if (!row) return undefined;
  if (row.expiresAt <= now) {
    await r.paymentIdempotency.remove(walletId, capabilityId, input.idempotencyKey);
    return undefined;
  }
  if (row.requestHash !== input.requestHash) throw keyReused(input.idempotencyKey);
  if (row.state !== 'completed') throw inProgress(input.idempotencyKey, row.transactionId);
  return replayOf(r, row);
}

async function replayOf(r: Repos, row: PaymentIdempotency): Promise<Replay> {
  const txn = await r.transactions.get(row.transactionId);
  const receipt = (await r.receipts.byTransaction(row.transactionId)).find((x) => x.status === 'success');
  if (!txn || !receipt) throw new AppError('INTERNAL', `idempotency key of ${row.transactionId} is completed but its transaction or receipt is missing`);
  return {
    transactionId: txn.id,
    status: 'replayed',
    walletId: txn.walletId,
    capabilityId: txn.capabilityId,
    amountMinor: txn.amountMinor.toString(),
    currency: txn.currency,
    receipt: receiptView(receipt),
    response: row.responseStatus !== null && row.responseBody !== null
      ? { status: row.responseStatus, contentType: row.responseContentType, body: row.responseBody }
      : null,
  };
}
