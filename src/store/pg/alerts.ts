import { and, asc, eq, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { alertMails } from '../schema-pg/index.js';
import type { AlertMail, AlertMailPatch, AlertMailRepo } from '../repos/alerts.js';

export class PgAlertMails implements AlertMailRepo {
  constructor(private db: NodePgDatabase) {}
  async insert(m: AlertMail) { await this.db.insert(alertMails).values(m); }
  async byEvent(eventId: string) { return (await this.db.select().from(alertMails).where(eq(alertMails.eventId, eventId)))[0]; }
  async due(now: number, limit: number) {
    return this.db.select().from(alertMails).where(and(
      eq(alertMails.state, 'pending'),
      sql`${alertMails.nextAttemptAt} <= ${now}`,
      sql`(${alertMails.lockedUntil} IS NULL OR ${alertMails.lockedUntil} <= ${now})`,
    )).orderBy(asc(alertMails.nextAttemptAt), asc(alertMails.id)).limit(limit);
  }
  async claim(id: string, now: number, until: number) {
    const rows = await this.db.update(alertMails).set({ lockedUntil: until }).where(and(
      eq(alertMails.id, id),
      eq(alertMails.state, 'pending'),
      sql`(${alertMails.lockedUntil} IS NULL OR ${alertMails.lockedUntil} <= ${now})`,
    )).returning({ id: alertMails.id });
    return rows.length === 1;
  }
  async update(id: string, patch: AlertMailPatch) { await this.db.update(alertMails).set(patch).where(eq(alertMails.id, id)); }
  async removeFinished(before: number, limit: number) {
    return (await this.db.execute(sql`DELETE FROM alert_mails WHERE id IN (SELECT id FROM alert_mails WHERE finished_at < ${before} AND state <> 'pending' ORDER BY finished_at LIMIT ${limit})`)).rowCount ?? 0;
  }
}
