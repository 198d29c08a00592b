import { index, int, json, measure, minor, table, text, uniqueIndex } from './kit.js';

export type CapabilityAddress =
  | { kind: 'url'; url: string }
  | { kind: 'package'; command: string; args: string[]; version: string };

/**
 * A metered price, as the wire has it (strings): charged per unit used, up to `maxUnits` a call;
 * the capability's `price_minor` is then `unitPriceMinor` × `maxUnits`, the most one call can cost.
 */
export interface CapabilityMetering { unit: string; unitPriceMinor: string; maxUnits: string }

/** A priced capability. Price and wording change in place; schema changes publish a new version. */
export const capabilities = table('capabilities', {
  id: text('id').primaryKey(),
  providerId: text('provider_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull(),
  protocol: text('protocol', { enum: ['rest', 'mcp'] }).notNull(),
  priceMinor: minor('price_minor').notNull(),
  currency: text('currency').notNull(),
  category: text('category').notNull(),
  tags: json<string[]>()('tags').notNull(),
  schema: json<Record<string, unknown> | null>()('schema'),
  latencyP50Ms: measure('latency_p50_ms'),
  toolName: text('tool_name'),
  /** null: a flat price per call */
  metering: json<CapabilityMetering | null>()('metering'),
  status: text('status', { enum: ['active', 'deprecated'] }).notNull(),
  currentVersionId: text('current_version_id').notNull(),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  deprecatedAt: int('deprecated_at'),
}, (t) => [index('capabilities_provider').on(t.providerId), index('capabilities_status').on(t.status)]);

/** Versions are immutable rows: the address never changes, the hash covers the schema. */
export const capabilityVersions = table('capability_versions', {
  id: text('id').primaryKey(),
  capabilityId: text('capability_id').notNull().references(() => capabilities, 'id'),
  version: text('version').notNull(),
  endpoint: text('endpoint'),
  address: json<CapabilityAddress>()('address').notNull(),
  schema: json<Record<string, unknown> | null>()('schema'),
  hash: text('hash').notNull(),
  createdAt: int('created_at').notNull(),
}, (t) => [index('capability_versions_capability').on(t.capabilityId)]);

/** A provider's request to be verified; an operator decides. One open request per provider. */
export const verificationRequests = table('verification_requests', {
  id: text('id').primaryKey(),
  providerId: text('provider_id').notNull(),
  status: text('status', { enum: ['requested', 'approved', 'denied'] }).notNull(),
  note: text('note'),
  contact: text('contact'),
  reason: text('reason'),
  /** the queue place: kept when a pending request is updated */
  requestedAt: int('requested_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  decidedAt: int('decided_at'),
}, (t) => [index('verification_requests_provider').on(t.providerId)]);

/** One rating per paid transaction, by the wallet that paid. */
export const ratings = table('ratings', {
  id: text('id').primaryKey(),
  providerId: text('provider_id').notNull(),
  transactionId: text('transaction_id').notNull(),
  walletId: text('wallet_id').notNull(),
  workspaceId: text('workspace_id').notNull(),
  agentId: text('agent_id'),
  rating: int('rating').notNull(),
  createdAt: int('created_at').notNull(),
}, (t) => [uniqueIndex('ratings_transaction').on(t.transactionId), index('ratings_provider').on(t.providerId)]);
