import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { webhookEndpoints, webhookDeliveries } from '../schema-pg/index.js';
import type { WebhookDelivery, WebhookDeliveryPatch, WebhookDeliveryRepo, WebhookEndpoint, WebhookEndpointRepo } from '../repos/webhooks.js';

type Db = NodePgDatabase;

export class PgWebhookEndpoints implements WebhookEndpointRepo {
  constructor(private db: Db) {}
  async insert(e: WebhookEndpoint) { await this.db.insert(webhookEndpoints).values(e); }
  async get(id: string) { return (await this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]; }
  async listByTenant(tenantId: string) {
    // ids are random: an endpoint made in the same millisecond as another may list before it
    return this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.tenantId, tenantId)).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  }
  async nextSeq(id: string) {
    const [row] = await this.db.update(webhookEndpoints).set({ lastSeq: sql`${webhookEndpoints.lastSeq} + 1` }).where(eq(webhookEndpoints.id, id)).returning({ seq: webhookEndpoints.lastSeq });
    if (!row) throw new Error(`webhook endpoint ${id} does not exist`);
    return row.seq;
  }
  async setSecrets(id: string, patch: Pick<WebhookEndpoint, 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretUntil'>) {
    await this.db.update(webhookEndpoints).set(patch).where(eq(webhookEndpoints.id, id));
  }
  async delete(id: string) {
    await this.db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, id));
    await this.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  }
}

export class PgWebhookDeliveries implements WebhookDeliveryRepo {
  constructor(private db: Db) {}
  async insert(d: WebhookDelivery) { await this.db.insert(webhookDeliveries).values(d); }
  async get(id: string) { return (await this.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)))[0]; }
  async listByEndpoint(endpointId: string, opts: { before?: string; limit: number }) {
    const conds = [eq(webhookDeliveries.endpointId, endpointId)];
    if (opts.before) conds.push(sql`${webhookDeliveries.seq} < (SELECT seq FROM webhook_deliveries WHERE id = ${opts.before})`);
    return this.db.select().from(webhookDeliveries).where(and(...conds)).orderBy(desc(webhookDeliveries.seq)).limit(opts.limit);
  }
  async due(now: number, limit: number) {
    return this.db.select().from(webhookDeliveries).where(and(
      eq(webhookDeliveries.state, 'pending'),
      sql`${webhookDeliveries.nextAttemptAt} <= ${now}`,
      sql`(${webhookDeliveries.lockedUntil} IS NULL OR ${webhookDeliveries.lockedUntil} <= ${now})`,
      sql`${webhookDeliveries.seq} = (SELECT min(h.seq) FROM webhook_deliveries h WHERE h.endpoint_id = ${webhookDeliveries.endpointId} AND h.state = 'pending')`,
    )).orderBy(asc(webhookDeliveries.nextAttemptAt)).limit(limit);
  }
  async claim(id: string, now: number, until: number) {
    const rows = await this.db.update(webhookDeliveries).set({ lockedUntil: until }).where(and(
      eq(webhookDeliveries.id, id),
      eq(webhookDeliveries.state, 'pending'),
      sql`(${webhookDeliveries.lockedUntil} IS NULL OR ${webhookDeliveries.lockedUntil} <= ${now})`,
    )).returning({ id: webhookDeliveries.id });
    return rows.length === 1;
  }
  async update(id: string, patch: WebhookDeliveryPatch) {
    await this.db.update(webhookDeliveries).set(patch).where(eq(webhookDeliveries.id, id));
  }

  async countPending(endpointId: string) {
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries).where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.state, 'pending')));
    return row?.n ?? 0;
  }
  async countForEvent(endpointId: string, eventId: string) {
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries).where(and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.endpointId, endpointId)));
    return row?.n ?? 0;
  }
  async removeFinished(before: number, limit: number) {
    const res = await this.db.execute(sql`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE finished_at < ${before} AND state <> 'pending' ORDER BY finished_at LIMIT ${limit})`);
    return res.rowCount ?? 0;
  }
}
