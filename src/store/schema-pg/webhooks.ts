import { pgTable, text, index, uniqueIndex } from 'drizzle-orm/pg-core';
import { int, json } from './columns.js';
import type { WebhookAttempt } from '../schema/webhooks.js';

/** A tenant's webhook endpoints: the SQLite table's twin (../schema/webhooks.ts says what each column is). */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  url: text('url').notNull(),
  description: text('description'),
  eventTypes: json<string[]>()('event_types'),
  secretCiphertext: text('secret_ciphertext').notNull(),
  previousSecretCiphertext: text('previous_secret_ciphertext'),
  previousSecretUntil: int('previous_secret_until'),
  /** taken by UPDATE … RETURNING: the row lock orders two transactions queueing for one endpoint */
  lastSeq: int('last_seq').notNull().default(0),
  createdAt: int('created_at').notNull(),
}, (t) => [index('webhook_endpoints_tenant').on(t.tenantId, t.createdAt)]);

/** One event to send to one endpoint, with every attempt made (../schema/webhooks.ts). */
export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  endpointId: text('endpoint_id').notNull(),
  tenantId: text('tenant_id').notNull(),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  seq: int('seq').notNull(),
  state: text('state', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
  nextAttemptAt: int('next_attempt_at').notNull(),
  lockedUntil: int('locked_until'),
  attempts: json<WebhookAttempt[]>()('attempts').notNull(),
  replayOf: text('replay_of'),
  createdAt: int('created_at').notNull(),
  finishedAt: int('finished_at'),
}, (t) => [
  uniqueIndex('webhook_deliveries_endpoint').on(t.endpointId, t.seq),
  index('webhook_deliveries_queue').on(t.endpointId, t.state, t.seq),
  index('webhook_deliveries_pending').on(t.state, t.nextAttemptAt),
  index('webhook_deliveries_event').on(t.eventId, t.endpointId),
  index('webhook_deliveries_finished').on(t.finishedAt),
]);
