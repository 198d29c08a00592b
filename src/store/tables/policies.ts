import { sql } from 'drizzle-orm';
import { bool, index, int, json, minor, table, text, uniqueIndex } from './kit.js';

/**
 * A workspace's spending policy: one section of a policy document. The section text
 * is kept as written and parsed again when applied, so what is enforced is exactly
 * what the workspace reads back; `rules` are the rule texts, for listing.
 */
export const policies = table('policies', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  policyType: text('policy_type', { enum: ['approval', 'deny', 'allow', 'budget'] }).notNull(),
  name: text('name'),
  enabled: bool('enabled').notNull(),
  source: text('source').notNull(),
  rules: json<string[]>()('rules').notNull(),
  /** place of the section in its document (policies apply in (createdAt, rowid) order: src/store/sqlite/policies.ts) */
  ordinal: int('ordinal').notNull(),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
}, (t) => [index('policies_workspace').on(t.workspaceId, t.createdAt, t.ordinal)]);

/**
 * A purchase held for a person. `pending` until approved or denied; an approved one
 * pays for exactly one later purchase (by the wallet, of the capability, up to the
 * amount), which sets `usedAt` and `usedByTransactionId`. If that purchase is refunded
 * (failed or expired) it bought nothing: the refund clears both, and the approval
 * covers the next purchase. Approvals used before the link existed have `usedAt` only
 * and stay used.
 */
export const approvals = table('approvals', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  walletId: text('wallet_id').notNull(),
  /** the wallet's ownerId when the purchase was held */
  agentId: text('agent_id').notNull(),
  capabilityId: text('capability_id').notNull(),
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  policyId: text('policy_id').notNull(),
  rule: text('rule').notNull(),
  status: text('status', { enum: ['pending', 'approved', 'denied'] }).notNull(),
  createdAt: int('created_at').notNull(),
  resolvedBy: text('resolved_by'),
  resolvedAt: int('resolved_at'),
  usedAt: int('used_at'),
  /** the transaction of the purchase that used it; a transaction uses at most one approval */
  usedByTransactionId: text('used_by_transaction_id'),
}, (t) => [
  index('approvals_workspace').on(t.workspaceId, t.createdAt),
  index('approvals_purchase').on(t.walletId, t.capabilityId, t.status),
  // partial: a refund gives its approval back with one lookup here, and the rows of unused
  // (and pre-link) approvals cost the index nothing
  uniqueIndex('approvals_used_by').on(t.usedByTransactionId).where(sql`used_by_transaction_id IS NOT NULL`),
]);
