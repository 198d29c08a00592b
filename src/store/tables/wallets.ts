import { sql } from 'drizzle-orm';
import { bool, index, int, minor, table, text, uniqueIndex } from './kit.js';

export const wallets = table('wallets', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  /** agent | workspace (the API's two) | settlement (a provider's) | platform (fee revenue) */
  ownerType: text('owner_type', { enum: ['agent', 'workspace', 'settlement', 'platform'] }).notNull(),
  ownerId: text('owner_id').notNull(),
  publicKeyPem: text('public_key_pem'),
  status: text('status', { enum: ['active', 'closed'] }).notNull(),
  frozen: bool('frozen').notNull(),
  /** who froze a frozen wallet: an operator's freeze is lifted only by an operator; null when not frozen */
  frozenBy: text('frozen_by', { enum: ['owner', 'operator'] }),
  currency: text('currency').notNull(),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
}, (t) => [index('wallets_tenant').on(t.tenantId)]);

/**
 * The append-only ledger. A row never changes (triggers in the migration refuse
 * UPDATE and DELETE). `amountMinor` moves the balance, `holdMinor` moves the held
 * amount; `balanceAfter`/`heldAfter` are the running sums up to and including this
 * row, so a balance read is one indexed lookup of the wallet's last row however long
 * the ledger grows. `seq` is gap-free per wallet and unique, so two writers can never
 * both extend the same running sum.
 */
export const ledgerEntries = table('ledger_entries', {
  id: text('id').primaryKey(),
  walletId: text('wallet_id').notNull().references(() => wallets, 'id'),
  seq: int('seq').notNull(),
  type: text('type').notNull(),
  amountMinor: minor('amount_minor').notNull(),
  holdMinor: minor('hold_minor').notNull(),
  balanceAfter: minor('balance_after').notNull(),
  heldAfter: minor('held_after').notNull(),
  currency: text('currency').notNull(),
  transactionId: text('transaction_id'),
  reference: text('reference'),
  memo: text('memo'),
  createdAt: int('created_at').notNull(),
  /**
   * The entry's link in its wallet's hash chain: SHA-256 over its fields and the previous entry's
   * hash (src/store/ledger-chain.ts, docs/ledger.md); null only on an entry written before the
   * chain existed, until the store's first start seals it.
   */
  hash: text('hash'),
}, (t) => [
  uniqueIndex('ledger_wallet_seq').on(t.walletId, t.seq),
  index('ledger_transaction').on(t.transactionId),
  // a budget policy sums a wallet's holds of one day on every authorization: without this the
  // sum walked the wallet's whole history (38 ms at 200,000 entries, inside the write transaction)
  index('ledger_holds').on(t.walletId, t.createdAt).where(sql`type = 'hold'`),
]);

/**
 * The heads of every wallet's chain at one time, signed by the platform (docs/ledger.md): a later
 * change to an entry at or before a head, or the deletion of one, no longer matches. `heads`: the
 * canonical JSON of [{walletId, seq, hash}] by wallet id; the signed object is the checkpoint's
 * wire form without `signature` and `signingKeyId` (src/domain/wallets/checkpoints.ts).
 */
export const ledgerCheckpoints = table('ledger_checkpoints', {
  id: text('id').primaryKey(),
  createdAt: int('created_at').notNull(),
  heads: text('heads').notNull(),
  signature: text('signature').notNull(),
  signingKeyId: text('signing_key_id').notNull(),
}, (t) => [index('ledger_checkpoints_time').on(t.createdAt)]);
