import type { railTransactions, depositAddresses, payoutDestinations, railEvents, reconciliations, sandboxObjects } from '../schema/index.js';

export type RailTransaction = typeof railTransactions.$inferSelect;
export type RailTransactionKind = RailTransaction['kind'];
export type RailTransactionState = RailTransaction['state'];
export type DepositAddress = typeof depositAddresses.$inferSelect;
export type PayoutDestination = typeof payoutDestinations.$inferSelect;
export type RailEvent = typeof railEvents.$inferSelect;
export type Reconciliation = typeof reconciliations.$inferSelect;
export type SandboxObject = typeof sandboxObjects.$inferSelect;

export type RailTransactionPatch = Partial<Pick<RailTransaction,
  'state' | 'usdAmountMinor' | 'externalRef' | 'priceMicros' | 'reason' | 'idempotencyKey' | 'expectedBy' | 'resubmittedAt' | 'updatedAt' | 'settledAt'>>;

export interface PayoutListQuery {
  tenantId?: string;
  state?: RailTransactionState;
  createdBefore?: number;
  /** the id of the previous page's last item */
  before?: string;
  limit: number;
}

/** What the ledger says the platform owes, for reconciliation. */
export interface LedgerTotals {
  /** the sum of every wallet's balance */
  balancesMinor: bigint;
  /** the sum of the entries' amounts of each type */
  byType: Record<string, bigint>;
}
