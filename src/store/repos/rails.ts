import type { railTransactions, depositAddresses, payoutDestinations, railEvents, reconciliations, sandboxObjects } from '../schema/index.js';

export type RailTransaction = typeof railTransactions.$inferSelect;
export type RailTransactionKind = RailTransaction['kind'];
export type RailTransactionState = RailTransaction['state'];
export type DepositAddress = typeof depositAddresses.$inferSelect;
export type PayoutDestination = typeof payoutDestinations.$inferSelect;
export type RailEvent = typeof railEvents.$inferSelect;
export type Reconciliation = typeof reconciliations.$inferSelect;
export type SandboxObject = typeof sandboxObjects.$inferSelect;

/** Lists are newest first (insertion order); `before` is the id of the previous page's last item. */

export type RailTransactionPatch = Partial<Pick<RailTransaction,
  'state' | 'usdAmountMinor' | 'externalRef' | 'priceMicros' | 'reason' | 'idempotencyKey' | 'expectedBy' | 'resubmittedAt' | 'updatedAt' | 'settledAt'>>;

export interface RailTransactionRepo {
  insert(t: RailTransaction): Promise<void>;
  get(id: string): Promise<RailTransaction | undefined>;
  byExternalRef(treasuryProviderId: string, externalRef: string): Promise<RailTransaction | undefined>;
  byIdempotencyKey(tenantId: string, key: string): Promise<RailTransaction | undefined>;
  /**
   * Applies the patch only while the row is in one of `fromStates`; false if it was not
   * (a concurrent writer moved it first), so a state change happens once.
   */
  transition(id: string, fromStates: readonly RailTransaction['state'][], patch: RailTransactionPatch): Promise<boolean>;
  /**
   * Records a submitted payout's rail reference once: applies the patch only while the row is
   * `submitted` with no reference (checked by the UPDATE itself, so of two submissions of one
   * payout racing on two instances, the second changes nothing); false if it did not apply.
   */
  recordReference(id: string, patch: RailTransactionPatch): Promise<boolean>;
  update(id: string, patch: RailTransactionPatch): Promise<void>;
  /** a tenant's, newest first */
  listByTenant(tenantId: string, opts: { kind?: RailTransactionKind; walletId?: string; before?: string; limit: number }): Promise<RailTransaction[]>;
  /** every row of a kind in these states, oldest first */
  listByState(kind: RailTransactionKind, states: readonly RailTransaction['state'][], limit: number, afterId?: string): Promise<RailTransaction[]>;
  /** every row of a kind, oldest first (reconciliation) */
  listByKind(kind: RailTransactionKind): Promise<RailTransaction[]>;
  /**
   * Payouts, newest first: one tenant's or (without `tenantId`) every tenant's, optionally in
   * one state and created (submitted) before `createdBefore` (epoch ms). Read through the
   * indexes (rail_tx_state, rail_tx_tenant), never by scanning every payout.
   */
  listPayouts(opts: PayoutListQuery): Promise<RailTransaction[]>;
}

export interface PayoutListQuery {
  tenantId?: string;
  state?: RailTransactionState;
  createdBefore?: number;
  /** the id of the previous page's last item */
  before?: string;
  limit: number;
}

export interface DepositAddressRepo {
  insert(a: DepositAddress): Promise<void>;
  /** by address in lower case */
  get(address: string): Promise<DepositAddress | undefined>;
  find(walletId: string, chain: string, asset: string, treasuryProviderId: string): Promise<DepositAddress | undefined>;
  /** oldest first */
  listByWallet(walletId: string): Promise<DepositAddress[]>;
}

export interface PayoutDestinationRepo {
  insert(d: PayoutDestination): Promise<void>;
  /** the newest registration of this asset and chain */
  current(providerId: string, asset: PayoutDestination['asset'], chain: string): Promise<PayoutDestination | undefined>;
  /** the current one of each asset and chain */
  listCurrent(providerId: string): Promise<PayoutDestination[]>;
}

export interface RailEventRepo {
  insert(e: RailEvent): Promise<void>;
  /**
   * Records the event and queues a delivery for each webhook endpoint of its tenant that wants its
   * type, reading nothing first: on PostgreSQL one statement, sent and not waited for, so the
   * payment paths that use it gain no round trip. Delivery ids are `q.deliveryId` with its last two
   * characters replaced by the endpoint's place (00, 01, …, in the tenant's endpoint order); an
   * endpoint with `q.maxPending` deliveries waiting gets its delivery failed with `q.fullError`.
   */
  insertQueued(e: RailEvent, q: { deliveryId: string; maxPending: number; fullError: string }): Promise<void>;
  /** a tenant's, newest first */
  list(tenantId: string, opts: { type?: string; before?: string; limit: number }): Promise<RailEvent[]>;
  get(id: string): Promise<RailEvent | undefined>;
  /**
   * deletes up to `limit` events recorded before `before` that no pending webhook delivery or
   * alert mail still has to send; returns how many
   */
  removeOlderThan(before: number, limit: number): Promise<number>;
}

/** What the ledger says the platform owes, for reconciliation. */
export interface LedgerTotals {
  /** the sum of every wallet's balance */
  balancesMinor: bigint;
  /** the sum of the entries' amounts of each type */
  byType: Record<string, bigint>;
}

export interface ReconciliationRepo {
  insert(r: Reconciliation): Promise<void>;
  latest(): Promise<Reconciliation | undefined>;
  ledgerTotals(): Promise<LedgerTotals>;
}

export interface SandboxObjectRepo {
  get(kind: string, id: string): Promise<SandboxObject | undefined>;
  /** inserts or replaces; a new object gets the next seq of its kind */
  put(kind: string, id: string, data: Record<string, unknown>, updatedAt: number): Promise<SandboxObject>;
  /** a kind's objects with seq above `afterSeq`, in seq order */
  list(kind: string, afterSeq?: number): Promise<SandboxObject[]>;
}
