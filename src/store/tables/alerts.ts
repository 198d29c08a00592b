import { index, int, table, text, uniqueIndex } from './kit.js';

/**
 * Alert mail to send: one row per event that a person should hear of (src/domain/platform/alert-mail.ts),
 * written in the transaction that records the event, so a mail exists exactly when its event does.
 * The recipients (the tenant's accounts) are read when it is sent. A gateway without SMTP writes
 * the messages to DATA_DIR/outbox.jsonl instead.
 *
 * States: pending -> sent | failed (given up after the last retry).
 */
export const alertMails = table('alert_mails', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  state: text('state', { enum: ['pending', 'sent', 'failed'] }).notNull(),
  /** attempts made so far */
  attempts: int('attempts').notNull(),
  /** when the next attempt is due (epoch ms) */
  nextAttemptAt: int('next_attempt_at').notNull(),
  /** an instance sending it holds it until then, so no other sends it at the same time */
  lockedUntil: int('locked_until'),
  /** the last failure, without secrets */
  lastError: text('last_error'),
  /** how many addresses it went to (0: the tenant has no account with an address) */
  recipients: int('recipients'),
  createdAt: int('created_at').notNull(),
  /** when it was sent or given up */
  finishedAt: int('finished_at'),
}, (t) => [
  uniqueIndex('alert_mails_event').on(t.eventId),
  index('alert_mails_pending').on(t.state, t.nextAttemptAt),
  index('alert_mails_finished').on(t.finishedAt),
]);
