import { pgTable, text, index, uniqueIndex } from 'drizzle-orm/pg-core';
import { int } from './columns.js';

/** Alert mail to send: the SQLite table's twin (../schema/alerts.ts says what each column is). */
export const alertMails = pgTable('alert_mails', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  state: text('state', { enum: ['pending', 'sent', 'failed'] }).notNull(),
  attempts: int('attempts').notNull(),
  nextAttemptAt: int('next_attempt_at').notNull(),
  lockedUntil: int('locked_until'),
  lastError: text('last_error'),
  recipients: int('recipients'),
  createdAt: int('created_at').notNull(),
  finishedAt: int('finished_at'),
}, (t) => [
  uniqueIndex('alert_mails_event').on(t.eventId),
  index('alert_mails_pending').on(t.state, t.nextAttemptAt),
  index('alert_mails_finished').on(t.finishedAt),
]);
