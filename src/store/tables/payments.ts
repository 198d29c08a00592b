import { bool, index, int, json, minor, primaryKey, table, text, uniqueIndex } from './kit.js';

/** A metered call's price as it was authorized (strings, as the wire has them). */
export interface TransactionMetering { unit: string; unitPriceMinor: string }
/** What a metered call's success receipt signs as its `usage`. */
export interface ReceiptUsage { unit: string; units: string; unitPriceMinor: string; authorizedMinor: string }

/**
 * A paid call from authorization to its one resolution. The unique nonce is the
 * replay guard: a challenge pays for at most one transaction.
 */
export const transactions = table('transactions', {
  id: text('id').primaryKey(),
  nonce: text('nonce').notNull(),
  capabilityId: text('capability_id').notNull(),
  providerId: text('provider_id').notNull(),
  walletId: text('wallet_id').notNull(),
  workspaceId: text('workspace_id').notNull(),
  amountMinor: minor('amount_minor').notNull(),
  feeMinor: minor('fee_minor'),
  /** a metered call that succeeded: what was charged (units × unit price, at most amount_minor, the hold); null: the whole amount */
  chargedMinor: minor('charged_minor'),
  /** a metered capability's unit and unit price as the call was authorized; null: a flat price */
  metering: json<TransactionMetering | null>()('metering'),
  currency: text('currency').notNull(),
  status: text('status', { enum: ['authorized', 'succeeded', 'failed', 'expired'] }).notNull(),
  failureReason: text('failure_reason'),
  authorizedAt: int('authorized_at').notNull(),
  expiresAt: int('expires_at').notNull(),
  resolvedAt: int('resolved_at'),
}, (t) => [
  uniqueIndex('transactions_nonce').on(t.nonce),
  // the sweeper's query; no index on wallet_id: no query selects transactions by wallet
  index('transactions_open').on(t.status, t.expiresAt),
  // the operator's activity per hour or day (Transactions.activity): a range of resolution times
  index('transactions_resolved').on(t.resolvedAt),
]);

export const receipts = table('receipts', {
  id: text('id').primaryKey(),
  transactionId: text('transaction_id').notNull(),
  providerId: text('provider_id').notNull(),
  consumerId: text('consumer_id').notNull(),
  workspaceId: text('workspace_id').notNull(),
  capabilityId: text('capability_id').notNull(),
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  responseHash: text('response_hash'),
  /** a metered call's success: the usage the receipt signs; null otherwise */
  usage: json<ReceiptUsage | null>()('usage'),
  status: text('status', { enum: ['success', 'failed'] }).notNull(),
  timestamp: int('timestamp').notNull(),
  signature: text('signature').notNull(),
  signingKeyId: text('signing_key_id').notNull(),
  /** the canonical JSON of the entries the resolution appended, [{walletId, seq, hash}]; signed as the receipt's `ledger`; null on receipts from before the chain */
  ledgerHeads: text('ledger_heads'),
}, (t) => [
  index('receipts_transaction').on(t.transactionId),
  index('receipts_workspace').on(t.workspaceId, t.timestamp),
  index('receipts_provider').on(t.providerId, t.timestamp),
]);

/** Seller-for-wallet breaker: consecutive provider failures, paused at three. */
export const breakers = table('breakers', {
  walletId: text('wallet_id').notNull(),
  providerId: text('provider_id').notNull(),
  consecutiveFailures: int('consecutive_failures').notNull(),
  paused: bool('paused').notNull(),
  updatedAt: int('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.walletId, t.providerId] })]);

/**
 * Idempotent retries of paid calls (docs/protocol.md § Idempotent retries): one row per
 * (buyer wallet, capability, idempotency key), from the authorization that placed the hold
 * (`in_progress`) to its success (`completed`, with the answer to replay). The primary key is
 * what makes concurrent retries charge once. A failed or expired call deletes its row (the key
 * is free again); rows live until `expiresAt` (24 hours after the first use at least).
 */
export const paymentIdempotency = table('payment_idempotency', {
  walletId: text('wallet_id').notNull(),
  capabilityId: text('capability_id').notNull(),
  key: text('key').notNull(),
  /** the seller's fingerprint of the request (method, path and query, body): a reuse for another request is refused */
  requestHash: text('request_hash').notNull(),
  transactionId: text('transaction_id').notNull(),
  state: text('state', { enum: ['in_progress', 'completed'] }).notNull(),
  /** the first answer, when the seller sent it with complete: status, content type, body (base64) */
  responseStatus: int('response_status'),
  responseContentType: text('response_content_type'),
  responseBody: text('response_body'),
  createdAt: int('created_at').notNull(),
  expiresAt: int('expires_at').notNull(),
}, (t) => [
  primaryKey({ columns: [t.walletId, t.capabilityId, t.key] }),
  uniqueIndex('payment_idempotency_transaction').on(t.transactionId),
  index('payment_idempotency_expiry').on(t.expiresAt),
]);
