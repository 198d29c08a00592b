import type { WebhookDelivery, WebhookDeliveryPatch, WebhookEndpoint } from '../repos/webhooks.js';
import type { Sql } from './sql.js';

export class WebhookEndpoints {
  private readonly t;
  private readonly deliveries;
  constructor(private readonly c: Sql) {
    this.t = c.table('webhookEndpoints');
    this.deliveries = c.table('webhookDeliveries');
  }
  insert(e: WebhookEndpoint) { return this.t.insert(e); }
  get(id: string) { return this.t.first({ id }); }
  /** a tenant's, oldest first (ids are random: an endpoint made in the same millisecond as another may list before it) */
  listByTenant(tenantId: string) { return this.t.all({ tenantId }, 'ORDER BY created_at, id'); }
  /** takes the endpoint's next delivery `seq` (1 for the first), holding the endpoint's row until the transaction ends */
  async nextSeq(id: string) {
    const row = await this.c.one('UPDATE webhook_endpoints SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq', [id]);
    if (!row) throw new Error(`webhook endpoint ${id} does not exist`);
    return Number(row[0]);
  }
  async setSecrets(id: string, patch: Pick<WebhookEndpoint, 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretUntil'>) {
    await this.t.update({ id }, patch);
  }
  /** removes the endpoint and every delivery of it */
  async delete(id: string) {
    await this.deliveries.delete({ endpointId: id });
    await this.t.delete({ id });
  }
}

export class WebhookDeliveries {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('webhookDeliveries'); }
  insert(d: WebhookDelivery) { return this.t.insert(d); }
  get(id: string) { return this.t.first({ id }); }
  /** an endpoint's, newest first; `before` is the id of the previous page's last item */
  listByEndpoint(endpointId: string, opts: { before?: string; limit: number }) {
    return opts.before === undefined
      ? this.t.all({ endpointId }, 'ORDER BY seq DESC LIMIT ?', [opts.limit])
      : this.t.all({ endpointId }, 'AND seq < (SELECT b.seq FROM webhook_deliveries b WHERE b.id = ?) ORDER BY seq DESC LIMIT ?', [opts.before, opts.limit]);
  }
  /**
   * What is due at `now`: of each endpoint, its oldest pending delivery, when its next attempt
   * is due and no instance holds it. Soonest due first.
   */
  due(now: number, limit: number) {
    return this.t.all({ state: 'pending' }, `AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until <= ?)
      AND seq = (SELECT min(h.seq) FROM webhook_deliveries h WHERE h.endpoint_id = webhook_deliveries.endpoint_id AND h.state = 'pending')
      ORDER BY next_attempt_at LIMIT ?`, [now, now, limit]);
  }
  /** Holds a pending delivery until `until`; false when it is not pending or another holds it. */
  async claim(id: string, now: number, until: number) {
    return (await this.t.updateWhere({ lockedUntil: until }, { id, state: 'pending' }, '(locked_until IS NULL OR locked_until <= ?)', [now])) === 1;
  }
  async update(id: string, patch: WebhookDeliveryPatch) { await this.t.update({ id }, patch); }
  /** how many of the endpoint's deliveries are pending */
  async countPending(endpointId: string) {
    return Number((await this.c.one(`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`, [endpointId]))?.[0] ?? 0);
  }
  /** how many deliveries of the event the endpoint has (the first and its replays) */
  async countForEvent(endpointId: string, eventId: string) {
    return Number((await this.c.one('SELECT count(*) FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?', [eventId, endpointId]))?.[0] ?? 0);
  }
  /** deletes up to `limit` delivered or failed deliveries finished before `before`; returns how many */
  removeFinished(before: number, limit: number) {
    return this.c.run(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE finished_at < ? AND state <> 'pending' ORDER BY finished_at LIMIT ?)`, [before, limit]);
  }
}
