import type { alertMails } from '../schema/index.js';

export type AlertMail = typeof alertMails.$inferSelect;
export type AlertMailPatch = Partial<Pick<AlertMail, 'state' | 'attempts' | 'nextAttemptAt' | 'lockedUntil' | 'lastError' | 'recipients' | 'finishedAt'>>;

export interface AlertMailRepo {
  insert(m: AlertMail): Promise<void>;
  byEvent(eventId: string): Promise<AlertMail | undefined>;
  /** pending mails due at `now` and not held by a sender, oldest due first */
  due(now: number, limit: number): Promise<AlertMail[]>;
  /** holds a pending mail until `until` for this sender; false when another holds it or it is done */
  claim(id: string, now: number, until: number): Promise<boolean>;
  update(id: string, patch: AlertMailPatch): Promise<void>;
  /** deletes up to `limit` sent or failed mails finished before `before`; returns how many */
  removeFinished(before: number, limit: number): Promise<number>;
}
