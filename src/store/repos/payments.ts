import type { transactions, receipts, breakers, paymentIdempotency } from '../schema/index.js';
import type { Wallet } from './wallets.js';
import type { Capability } from './market.js';
import type { Tenant } from './tenancy.js';

export type Transaction = typeof transactions.$inferSelect;
export type Receipt = typeof receipts.$inferSelect;
export type Breaker = typeof breakers.$inferSelect;
export type PaymentIdempotency = typeof paymentIdempotency.$inferSelect;

export interface TransactionRepo {
  insert(t: Transaction): Promise<void>;
  get(id: string): Promise<Transaction | undefined>;
  byNonce(nonce: string): Promise<Transaction | undefined>;
  update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>): Promise<void>;
  /**
   * Resolves a transaction that is authorized, reading nothing first: when it is not authorized
   * any more (resolved first elsewhere), refused with AlreadyResolved, and the database
   * transaction fails with it (on PostgreSQL at its COMMIT: the update is not waited for).
   */
  resolve(id: string, patch: Pick<Transaction, 'status' | 'resolvedAt'> & Partial<Pick<Transaction, 'failureReason' | 'feeMinor'>>): Promise<void>;
  /** authorized transactions whose in-flight time ran out by `now`, oldest expiry first; of one wallet if given */
  listExpired(now: number, limit: number, walletId?: string): Promise<Transaction[]>;
  /** Every transaction by id, a page at a time (`afterId` pages on): the ledger's verification reads them all. */
  page(opts: { afterId?: string; limit: number }): Promise<Transaction[]>;
}

export interface ReceiptRepo {
  insert(r: Receipt): Promise<void>;
  get(id: string): Promise<Receipt | undefined>;
  byTransaction(transactionId: string): Promise<Receipt[]>;
  /** newest first; `before` is the (timestamp, id) of the last receipt of the previous page */
  list(owner: { workspaceId: string } | { providerId: string }, opts: { limit: number; before?: { timestamp: number; id: string } }): Promise<Receipt[]>;
}

export interface BreakerRepo {
  get(walletId: string, providerId: string): Promise<Breaker | undefined>;
  put(b: Breaker): Promise<void>;
  /** a success: the pair's count of failures in a row back to 0 (`updatedAt` = at) where it is not; no row, nothing */
  clearFailures(walletId: string, providerId: string, at: number): Promise<void>;
}

/** Idempotency keys of paid calls, per (wallet, capability, key); see the table's comment. */
export interface PaymentIdempotencyRepo {
  get(walletId: string, capabilityId: string, key: string): Promise<PaymentIdempotency | undefined>;
  /** throws UniqueViolation when the (wallet, capability, key) is taken: a concurrent first use */
  insert(row: PaymentIdempotency): Promise<void>;
  byTransaction(transactionId: string): Promise<PaymentIdempotency | undefined>;
  /** the call succeeded: `completed`, with the first answer when the seller sent it */
  complete(transactionId: string, response: { status: number; contentType: string | null; body: string } | null): Promise<void>;
  /** frees a key (its call failed, expired, or the row outlived its time) */
  remove(walletId: string, capabilityId: string, key: string): Promise<void>;
  removeByTransaction(transactionId: string): Promise<void>;
  /** deletes up to `limit` rows whose time ran out by `now`; returns how many */
  removeExpired(now: number, limit: number): Promise<number>;
}

/** What an authorization checks before it writes: read at once (PurchaseFactsRepo). */
export interface PurchaseFacts {
  /** a transaction holds the nonce already */
  nonceUsed: boolean;
  wallet: Wallet | undefined;
  /** the breaker of (wallet, provider) is paused */
  paused: boolean;
  capability: Capability | undefined;
  seller: Tenant | undefined;
}

/**
 * The reads of an authorization's checks, together: on PostgreSQL one statement (the nonce's
 * transaction, the wallet, the breaker, the capability and the seller), elsewhere the repositories'
 * own reads. Unlocked, as a transaction under READ COMMITTED reads them.
 */
export interface PurchaseFactsRepo {
  read(q: { nonce: string; walletId: string; capabilityId: string; providerId: string }): Promise<PurchaseFacts>;
}
