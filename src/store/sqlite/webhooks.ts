import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { webhookEndpoints, webhookDeliveries } from '../schema/index.js';
import type { WebhookDelivery, WebhookDeliveryPatch, WebhookDeliveryRepo, WebhookEndpoint, WebhookEndpointRepo } from '../repos/webhooks.js';

type Db = BetterSQLite3Database;

export class SqliteWebhookEndpoints implements WebhookEndpointRepo {
  constructor(private db: Db) {}
  async insert(e: WebhookEndpoint) { this.db.insert(webhookEndpoints).values(e).run(); }
  async get(id: string) { return this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get(); }
  async listByTenant(tenantId: string) {
    return this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.tenantId, tenantId)).orderBy(asc(webhookEndpoints.createdAt), asc(sql`rowid`)).all();
  }
  async nextSeq(id: string) {
    const row = this.db.update(webhookEndpoints).set({ lastSeq: sql`${webhookEndpoints.lastSeq} + 1` }).where(eq(webhookEndpoints.id, id)).returning({ seq: webhookEndpoints.lastSeq }).get();
    if (!row) throw new Error(`webhook endpoint ${id} does not exist`);
    return row.seq;
  }
  async setSecrets(id: string, patch: Pick<WebhookEndpoint, 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretUntil'>) {
    this.db.update(webhookEndpoints).set(patch).where(eq(webhookEndpoints.id, id)).run();
  }
  async delete(id: string) {
    this.db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, id)).run();
    this.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).run();
  }
}

export class SqliteWebhookDeliveries implements WebhookDeliveryRepo {
  constructor(private db: Db) {}
  async insert(d: WebhookDelivery) { this.db.insert(webhookDeliveries).values(d).run(); }
  async get(id: string) { return this.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get(); }
  async listByEndpoint(endpointId: string, opts: { before?: string; limit: number }) {
    const conds = [eq(webhookDeliveries.endpointId, endpointId)];
    if (opts.before) conds.push(sql`${webhookDeliveries.seq} < (SELECT seq FROM webhook_deliveries WHERE id = ${opts.before})`);
    return this.db.select().from(webhookDeliveries).where(and(...conds)).orderBy(desc(webhookDeliveries.seq)).limit(opts.limit).all();
  }
  async due(now: number, limit: number) {
    return this.db.select().from(webhookDeliveries).where(and(
      eq(webhookDeliveries.state, 'pending'),
      sql`${webhookDeliveries.nextAttemptAt} <= ${now}`,
      sql`(${webhookDeliveries.lockedUntil} IS NULL OR ${webhookDeliveries.lockedUntil} <= ${now})`,
      sql`${webhookDeliveries.seq} = (SELECT min(h.seq) FROM webhook_deliveries h WHERE h.endpoint_id = ${webhookDeliveries.endpointId} AND h.state = 'pending')`,
    )).orderBy(asc(webhookDeliveries.nextAttemptAt)).limit(limit).all();
  }
  async claim(id: string, now: number, until: number) {
    const res = this.db.update(webhookDeliveries).set({ lockedUntil: until }).where(and(
      eq(webhookDeliveries.id, id),
      eq(webhookDeliveries.state, 'pending'),
      sql`(${webhookDeliveries.lockedUntil} IS NULL OR ${webhookDeliveries.lockedUntil} <= ${now})`,
    )).run();
    return res.changes === 1;
  }
  async update(id: string, patch: WebhookDeliveryPatch) {
    this.db.update(webhookDeliveries).set(patch).where(eq(webhookDeliveries.id, id)).run();
  }

  async countPending(endpointId: string) {
    return Number(this.db.select({ n: sql<number>`count(*)` }).from(webhookDeliveries).where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.state, 'pending'))).get()?.n ?? 0);
  }
  async countForEvent(endpointId: string, eventId: string) {
    return Number(this.db.select({ n: sql<number>`count(*)` }).from(webhookDeliveries).where(and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.endpointId, endpointId))).get()?.n ?? 0);
  }
  async removeFinished(before: number, limit: number) {
    return this.db.run(sql`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE finished_at < ${before} AND state <> 'pending' ORDER BY finished_at LIMIT ${limit})`).changes;
  }
}
