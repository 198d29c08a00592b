import type { AlertMail, AlertMailPatch } from '../repos/alerts.js';
import type { Sql } from './sql.js';

export class AlertMails {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('alertMails'); }
  insert(m: AlertMail) { return this.t.insert(m); }
  byEvent(eventId: string) { return this.t.first({ eventId }); }
  /** pending mails due at `now` and not held by a sender, oldest due first */
  due(now: number, limit: number) {
    return this.t.all({ state: 'pending' }, 'AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until <= ?) ORDER BY next_attempt_at, id LIMIT ?', [now, now, limit]);
  }
  /** holds a pending mail until `until` for this sender; false when another holds it or it is done */
  async claim(id: string, now: number, until: number) {
    return (await this.t.updateWhere({ lockedUntil: until }, { id, state: 'pending' }, '(locked_until IS NULL OR locked_until <= ?)', [now])) === 1;
  }
  async update(id: string, patch: AlertMailPatch) { await this.t.update({ id }, patch); }
  /** deletes up to `limit` sent or failed mails finished before `before`; returns how many */
  removeFinished(before: number, limit: number) {
    return this.c.run(`DELETE FROM alert_mails WHERE id IN (SELECT id FROM alert_mails WHERE finished_at < ? AND state <> 'pending' ORDER BY finished_at LIMIT ?)`, [before, limit]);
  }
}
