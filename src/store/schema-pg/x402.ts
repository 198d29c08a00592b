import { pgTable, text, index, uniqueIndex } from 'drizzle-orm/pg-core';
import { int, minor } from './columns.js';

/** x402 `exact` authorizations: the SQLite table's twin (../schema/x402.ts says what each column is). */
export const x402Authorizations = pgTable('x402_authorizations', {
  id: text('id').primaryKey(),
  network: text('network').notNull(),
  asset: text('asset').notNull(),
  nonce: text('nonce').notNull(),
  payer: text('payer').notNull(),
  payTo: text('pay_to').notNull(),
  value: text('value').notNull(),
  validAfter: int('valid_after').notNull(),
  validBefore: int('valid_before').notNull(),
  signature: text('signature').notNull(),
  capabilityId: text('capability_id').notNull(),
  providerId: text('provider_id').notNull(),
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  state: text('state', { enum: ['reserved', 'settling', 'settled', 'released', 'failed'] }).notNull(),
  txHash: text('tx_hash'),
  transactionId: text('transaction_id'),
  attempts: int('attempts').notNull(),
  lastError: text('last_error'),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  settledAt: int('settled_at'),
}, (t) => [
  uniqueIndex('x402_authorizations_nonce').on(t.network, t.asset, t.nonce),
  index('x402_authorizations_state').on(t.state, t.updatedAt),
]);
