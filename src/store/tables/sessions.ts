import { index, int, minor, primaryKey, table, text, uniqueIndex } from './kit.js';

/**
 * Payment sessions (docs/protocol.md § Payment sessions): one open of a buyer's wallet for one
 * seller (and one capability, or all of the seller's), with a cap held on the buyer's wallet.
 * Claims move the increase of the highest voucher from the hold to the seller; close or the
 * expiry sweep (after the claim window) releases the rest. `claimedMinor` only grows; the
 * ledger entries of a session carry its id as their `transaction_id`.
 *
 * States: open -> closed (the seller closed it; the rest released) | expired (the claim window
 * ran out; the rest released). The unique open nonce makes a signed open request open once.
 */
export const sessions = table('sessions', {
  id: text('id').primaryKey(),
  walletId: text('wallet_id').notNull(),
  workspaceId: text('workspace_id').notNull(),
  providerId: text('provider_id').notNull(),
  /** null: every capability of the seller */
  capabilityId: text('capability_id'),
  /** the seller's settlement wallet, paid by claims */
  payTo: text('pay_to').notNull(),
  capMinor: minor('cap_minor').notNull(),
  /** the cumulative amount of the highest voucher claimed so far */
  claimedMinor: minor('claimed_minor').notNull(),
  /** the platform's fees taken by the claims so far: feeFor(claimedMinor) */
  feeMinor: minor('fee_minor').notNull(),
  currency: text('currency').notNull(),
  /** the sequence of the highest voucher claimed (0: none) */
  lastSequence: int('last_sequence').notNull(),
  /** SPKI PEM of the ephemeral key that signs vouchers */
  sessionPublicKey: text('session_public_key').notNull(),
  /** SPKI PEM of the seller's key that signs per-call session receipts */
  sellerPublicKey: text('seller_public_key').notNull(),
  openNonce: text('open_nonce').notNull(),
  status: text('status', { enum: ['open', 'closed', 'expired'] }).notNull(),
  expiresAt: int('expires_at').notNull(),
  /** after expiry, claims are taken until then; the sweeper releases the rest at this time */
  claimWindowEndsAt: int('claim_window_ends_at').notNull(),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  closedAt: int('closed_at'),
}, (t) => [
  uniqueIndex('sessions_open_nonce').on(t.openNonce),
  index('sessions_provider').on(t.providerId, t.createdAt),
  index('sessions_workspace').on(t.workspaceId, t.createdAt),
  // the sweeper's query
  index('sessions_due').on(t.status, t.claimWindowEndsAt),
]);

/**
 * One row per claim that moved money: the primary key (session, cumulative) makes a claim of
 * one voucher pay once, whichever instance takes it.
 */
export const sessionClaims = table('session_claims', {
  sessionId: text('session_id').notNull(),
  cumulativeMinor: minor('cumulative_minor').notNull(),
  sequence: int('sequence').notNull(),
  /** the increase this claim moved (cumulative less the claimed amount before it) */
  amountMinor: minor('amount_minor').notNull(),
  feeMinor: minor('fee_minor').notNull(),
  createdAt: int('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.sessionId, t.cumulativeMinor] })]);
