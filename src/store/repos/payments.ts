import type { transactions, receipts, breakers } from '../schema/index.js';

export type Transaction = typeof transactions.$inferSelect;
export type Receipt = typeof receipts.$inferSelect;
export type Breaker = typeof breakers.$inferSelect;

export interface TransactionRepo {
  insert(t: Transaction): Promise<void>;
  get(id: string): Promise<Transaction | undefined>;
  byNonce(nonce: string): Promise<Transaction | undefined>;
  update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>): Promise<void>;
  /** authorized transactions whose in-flight time ran out */
  /** authorized transactions whose in-flight time ran out by `now`, oldest expiry first; of one wallet if given */
  listExpired(now: number, limit: number, walletId?: string): Promise<Transaction[]>;
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
}
