import { index, int, json, minor, primaryKey, table, text, uniqueIndex } from './kit.js';

/**
 * Every movement of money across a rail, as the platform sees it: top-ups (in, through a
 * processor), USDC deposits (in, observed on a chain) and payouts (out, to a bank or an
 * address). The money itself is in the ledger; this row is the rail's side: its state,
 * the amount on the rail, the USD credited or debited, and the adapter's reference.
 *
 * States: top-up pending -> confirmed | declined; deposit pending -> held -> confirmed;
 * payout submitted -> confirmed | returned, or failed when the rail refused the submission.
 */
export const railTransactions = table('rail_transactions', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['topup', 'deposit', 'payout'] }).notNull(),
  tenantId: text('tenant_id').notNull(),
  walletId: text('wallet_id').notNull(),
  /** the rail adapter (GET /v1/rail/providers id) */
  treasuryProviderId: text('treasury_provider_id').notNull(),
  /** bank_transfer | ach | usdc_base; null for a top-up (the processor's page picks card or bank) */
  rail: text('rail'),
  state: text('state', { enum: ['pending', 'held', 'submitted', 'confirmed', 'returned', 'declined', 'failed'] }).notNull(),
  /** minor units of railCurrency: USD cents, or USDC base units (6 decimals) */
  railAmountMinor: minor('rail_amount_minor').notNull(),
  railCurrency: text('rail_currency', { enum: ['USD', 'USDC'] }).notNull(),
  /**
   * USD minor units: a top-up's amount, a deposit's credit (null until priced), a payout's
   * debit. Whether it moved (and is still moved) follows from the state.
   */
  usdAmountMinor: minor('usd_amount_minor'),
  /** the adapter's reference: processor intent, chain transfer, payout reference */
  externalRef: text('external_ref'),
  /** deposit address, or payout destination */
  counterparty: text('counterparty'),
  /** USDC price in micro-USD used for the conversion, when there was one */
  priceMicros: minor('price_micros'),
  /** decline, hold, return or failure reason */
  reason: text('reason'),
  idempotencyKey: text('idempotency_key'),
  requestHash: text('request_hash'),
  hostedUrl: text('hosted_url'),
  /** when a submitted payout is expected to arrive */
  expectedBy: int('expected_by'),
  /**
   * A payout whose first submission had an unknown outcome: when the rail job first handed it
   * to the rail again. From then on the rail may hold it, so the first submission's refusal
   * no longer reverses it (src/domain/rails/payouts/).
   */
  resubmittedAt: int('resubmitted_at'),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  settledAt: int('settled_at'),
}, (t) => [
  uniqueIndex('rail_tx_external_ref').on(t.treasuryProviderId, t.externalRef),
  uniqueIndex('rail_tx_idempotency').on(t.tenantId, t.idempotencyKey),
  index('rail_tx_tenant').on(t.tenantId, t.createdAt),
  index('rail_tx_state').on(t.kind, t.state),
]);

/** A wallet's deposit address on a chain; the address is stored in lower case. */
export const depositAddresses = table('deposit_addresses', {
  address: text('address').primaryKey(),
  walletId: text('wallet_id').notNull(),
  tenantId: text('tenant_id').notNull(),
  chain: text('chain').notNull(),
  asset: text('asset').notNull(),
  treasuryProviderId: text('treasury_provider_id').notNull(),
  createdAt: int('created_at').notNull(),
}, (t) => [uniqueIndex('deposit_addresses_wallet').on(t.walletId, t.chain, t.asset, t.treasuryProviderId)]);

/**
 * Payout destinations, one row per registration that changed something (history kept):
 * the current one per (provider, asset, chain) is the newest. `chain` is '' for bank
 * destinations. `usableAt` is when payouts on that asset's rails may use it.
 */
export const payoutDestinations = table('payout_destinations', {
  id: text('id').primaryKey(),
  providerId: text('provider_id').notNull(),
  asset: text('asset', { enum: ['USD', 'USDC'] }).notNull(),
  chain: text('chain').notNull(),
  destination: text('destination').notNull(),
  /** lower case: the same address in another letter case is the same destination */
  normalized: text('normalized').notNull(),
  createdAt: int('created_at').notNull(),
  usableAt: int('usable_at').notNull(),
}, (t) => [index('payout_destinations_provider').on(t.providerId, t.asset, t.chain, t.createdAt)]);

/** Alerts and notices a tenant reads at GET /v1/events. */
export const railEvents = table('rail_events', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  type: text('type').notNull(),
  data: json<Record<string, unknown>>()('data').notNull(),
  createdAt: int('created_at').notNull(),
}, (t) => [index('rail_events_tenant').on(t.tenantId, t.createdAt), index('rail_events_created').on(t.createdAt)]);

/**
 * Reconciliation results that changed the verdict (ok <-> shortfall): the newest says
 * whether payouts are paused. Reports with an unchanged verdict are not stored.
 */
export const reconciliations = table('reconciliations', {
  id: text('id').primaryKey(),
  status: text('status', { enum: ['ok', 'shortfall'] }).notNull(),
  obligationsMinor: minor('obligations_minor').notNull(),
  holdingsMinor: minor('holdings_minor').notNull(),
  report: json<Record<string, unknown>>()('report').notNull(),
  createdAt: int('created_at').notNull(),
});

/**
 * The simulated outside world of the sandbox adapters (processor intents, chain
 * transfers, bank payouts, settings): documents by kind and id. Not the platform's
 * records; a real adapter keeps these at the processor, the chain or the bank.
 */
export const sandboxObjects = table('sandbox_objects', {
  kind: text('kind').notNull(),
  id: text('id').notNull(),
  seq: int('seq').notNull(),
  data: json<Record<string, unknown>>()('data').notNull(),
  updatedAt: int('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.kind, t.id] }), index('sandbox_objects_seq').on(t.kind, t.seq)]);
