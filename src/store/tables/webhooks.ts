import { index, int, json, table, text, uniqueIndex } from './kit.js';

/**
 * A tenant's webhook endpoints: where its events (GET /v1/events) are POSTed, signed with the
 * endpoint's secret. The secret is kept encrypted (AES-256-GCM under the gateway's webhook key,
 * src/domain/platform/webhooks/secrets.ts): it must be usable to sign, so it cannot be hashed like an API key.
 */
export const webhookEndpoints = table('webhook_endpoints', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  url: text('url').notNull(),
  description: text('description'),
  /** the event types delivered; null: every type */
  eventTypes: json<string[]>()('event_types'),
  /** `v1.<iv>.<ciphertext>.<tag>`, base64url */
  secretCiphertext: text('secret_ciphertext').notNull(),
  /** after a rotation, the secret before it, still signing (beside the new one) until `previousSecretUntil` */
  previousSecretCiphertext: text('previous_secret_ciphertext'),
  previousSecretUntil: int('previous_secret_until'),
  /**
   * the `seq` of the endpoint's newest delivery: taken by an UPDATE … RETURNING, whose row lock
   * orders two transactions queueing for one endpoint at once (PostgreSQL), where max(seq)+1 would collide
   */
  lastSeq: int('last_seq').notNull().default(0),
  createdAt: int('created_at').notNull(),
}, (t) => [index('webhook_endpoints_tenant').on(t.tenantId, t.createdAt)]);

/**
 * One event to send to one endpoint, with every attempt made. Written in the transaction that
 * records the event. An endpoint's deliveries go out in `seq` order: the oldest pending one
 * blocks the next until it is delivered or given up (`failed`).
 *
 * States: pending -> delivered | failed. A replay is a new row (`replayOf` the original).
 */
export const webhookDeliveries = table('webhook_deliveries', {
  id: text('id').primaryKey(),
  endpointId: text('endpoint_id').notNull(),
  tenantId: text('tenant_id').notNull(),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  /** the endpoint's order: increasing with insertion */
  seq: int('seq').notNull(),
  state: text('state', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
  /** when the next attempt is due (epoch ms) */
  nextAttemptAt: int('next_attempt_at').notNull(),
  /** an instance sending it holds it until then, so no other sends it at the same time */
  lockedUntil: int('locked_until'),
  /** every attempt: [{at, status?, error?, durationMs}] */
  attempts: json<WebhookAttempt[]>()('attempts').notNull(),
  replayOf: text('replay_of'),
  createdAt: int('created_at').notNull(),
  /** when it was delivered or given up */
  finishedAt: int('finished_at'),
}, (t) => [
  uniqueIndex('webhook_deliveries_endpoint').on(t.endpointId, t.seq),
  // an endpoint's oldest pending delivery is one probe, however many were delivered before it
  index('webhook_deliveries_queue').on(t.endpointId, t.state, t.seq),
  index('webhook_deliveries_pending').on(t.state, t.nextAttemptAt),
  // the replay cap counts an endpoint's deliveries of an event; retention keeps events a pending delivery needs
  index('webhook_deliveries_event').on(t.eventId, t.endpointId),
  // retention deletes the oldest finished first
  index('webhook_deliveries_finished').on(t.finishedAt),
]);

export interface WebhookAttempt {
  /** epoch ms */
  at: number;
  /** the endpoint's HTTP status, when it answered */
  status?: number;
  /** why it failed, when it did (no answer, timeout, a non-2xx status) */
  error?: string;
  durationMs: number;
}
