import { and, asc, eq, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { alertMails } from '../schema/index.js';
import type { AlertMail, AlertMailPatch, AlertMailRepo } from '../repos/alerts.js';

export class SqliteAlertMails implements AlertMailRepo {
  constructor(private db: BetterSQLite3Database) {}
  async insert(m: AlertMail) { this.db.insert(alertMails).values(m).run(); }
  async byEvent(eventId: string) { return this.db.select().from(alertMails).where(eq(alertMails.eventId, eventId)).get(); }
  async due(now: number, limit: number) {
    return this.db.select().from(alertMails).where(and(
      eq(alertMails.state, 'pending'),
      sql`${alertMails.nextAttemptAt} <= ${now}`,
      sql`(${alertMails.lockedUntil} IS NULL OR ${alertMails.lockedUntil} <= ${now})`,
    )).orderBy(asc(alertMails.nextAttemptAt), asc(alertMails.id)).limit(limit).all();
  }
  async claim(id: string, now: number, until: number) {
    const res = this.db.update(alertMails).set({ lockedUntil: until }).where(and(
      eq(alertMails.id, id),
      eq(alertMails.state, 'pending'),
      sql`(${alertMails.lockedUntil} IS NULL OR ${alertMails.lockedUntil} <= ${now})`,
    )).run();
    return res.changes === 1;
  }
  async update(id: string, patch: AlertMailPatch) { this.db.update(alertMails).set(patch).where(eq(alertMails.id, id)).run(); }
  async removeFinished(before: number, limit: number) {
    return this.db.run(sql`DELETE FROM alert_mails WHERE id IN (SELECT id FROM alert_mails WHERE finished_at < ${before} AND state <> 'pending' ORDER BY finished_at LIMIT ${limit})`).changes;
  }
}
