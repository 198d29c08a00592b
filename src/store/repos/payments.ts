import type { transactions, receipts, breakers, paymentIdempotency } from '../schema/index.js';
import type { Wallet } from './wallets.js';
import type { Capability } from './market.js';
import type { Tenant } from './tenancy.js';

export type Transaction = typeof transactions.$inferSelect;
export type Receipt = typeof receipts.$inferSelect;
export type Breaker = typeof breakers.$inferSelect;
export type PaymentIdempotency = typeof paymentIdempotency.$inferSelect;

/** What an authorization checks before it writes: read at once (PurchaseFacts). */
export interface PurchaseFacts {
  /** a transaction holds the nonce already */
  nonceUsed: boolean;
  wallet: Wallet | undefined;
  /** the breaker of (wallet, provider) is paused */
  paused: boolean;
  capability: Capability | undefined;
  seller: Tenant | undefined;
}
