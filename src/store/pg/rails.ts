import { and, asc, desc, eq, gt, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { railTransactions, depositAddresses, payoutDestinations, railEvents, reconciliations, sandboxObjects } from '../schema-pg/index.js';
import type {
  DepositAddress, DepositAddressRepo, LedgerTotals, PayoutDestination, PayoutDestinationRepo, RailEvent, RailEventRepo, RailTransaction,
  PayoutListQuery, RailTransactionKind, RailTransactionPatch, RailTransactionRepo, Reconciliation, ReconciliationRepo, SandboxObjectRepo,
} from '../repos/rails.js';
import { forWrite, send, type Session } from './sql.js';

type Db = NodePgDatabase;

/** rows inserted before the row with this id (the rowid identity column: insertion order) */
const beforeRow = (table: string, id: string) =>
  sql`${sql.identifier(table)}.rowid < (SELECT b.rowid FROM ${sql.identifier(table)} b WHERE b.id = ${id})`;
const rowid = (table: string) => sql`${sql.identifier(table)}.rowid`;

export class PgRailTransactions implements RailTransactionRepo {
  constructor(private db: Db) {}
  async insert(t: RailTransaction) { await this.db.insert(railTransactions).values(t); }
  async get(id: string) { return (await this.db.select().from(railTransactions).where(eq(railTransactions.id, id)))[0]; }
  async byExternalRef(treasuryProviderId: string, externalRef: string) {
    return (await this.db.select().from(railTransactions)
      .where(and(eq(railTransactions.treasuryProviderId, treasuryProviderId), eq(railTransactions.externalRef, externalRef))))[0];
  }
  async byIdempotencyKey(tenantId: string, key: string) {
    return (await this.db.select().from(railTransactions).where(and(eq(railTransactions.tenantId, tenantId), eq(railTransactions.idempotencyKey, key))))[0];
  }
  async transition(id: string, fromStates: readonly RailTransaction['state'][], patch: RailTransactionPatch) {
    const r = await this.db.update(railTransactions).set(patch).where(and(eq(railTransactions.id, id), inArray(railTransactions.state, [...fromStates])));
    return (r.rowCount ?? 0) > 0;
  }
  async recordReference(id: string, patch: RailTransactionPatch) {
    const r = await this.db.update(railTransactions).set(patch).where(and(eq(railTransactions.id, id), eq(railTransactions.state, 'submitted'), isNull(railTransactions.externalRef)));
    return (r.rowCount ?? 0) > 0;
  }
  async update(id: string, patch: RailTransactionPatch) {
    if (Object.values(patch).every((v) => v === undefined)) return;
    await this.db.update(railTransactions).set(patch).where(eq(railTransactions.id, id));
  }
  async listByTenant(tenantId: string, opts: { kind?: RailTransactionKind; walletId?: string; before?: string; limit: number }) {
    const conds: SQL[] = [eq(railTransactions.tenantId, tenantId)];
    if (opts.kind) conds.push(eq(railTransactions.kind, opts.kind));
    if (opts.walletId) conds.push(eq(railTransactions.walletId, opts.walletId));
    if (opts.before) conds.push(beforeRow('rail_transactions', opts.before));
    return this.db.select().from(railTransactions).where(and(...conds)).orderBy(desc(rowid('rail_transactions'))).limit(opts.limit);
  }
  async listByState(kind: RailTransactionKind, states: readonly RailTransaction['state'][], limit: number, afterId?: string) {
    return this.db.select().from(railTransactions)
      .where(and(eq(railTransactions.kind, kind), inArray(railTransactions.state, [...states]), afterId === undefined ? undefined : gt(railTransactions.id, afterId)))
      .orderBy(asc(railTransactions.id)).limit(limit);
  }
  async listByKind(kind: RailTransactionKind) {
    return this.db.select().from(railTransactions).where(eq(railTransactions.kind, kind)).orderBy(asc(rowid('rail_transactions')));
  }
  async listPayouts(q: PayoutListQuery) {
    const where = and(
      eq(railTransactions.kind, 'payout'),
      q.tenantId === undefined ? undefined : eq(railTransactions.tenantId, q.tenantId),
      q.state === undefined ? undefined : eq(railTransactions.state, q.state),
      q.createdBefore === undefined ? undefined : lt(railTransactions.createdAt, q.createdBefore),
      q.before === undefined ? undefined : beforeRow('rail_transactions', q.before),
    );
    return this.db.select().from(railTransactions).where(where).orderBy(desc(rowid('rail_transactions'))).limit(q.limit);
  }
}

export class PgDepositAddresses implements DepositAddressRepo {
  constructor(private db: Db) {}
  async insert(a: DepositAddress) { await this.db.insert(depositAddresses).values(a); }
  async get(address: string) { return (await this.db.select().from(depositAddresses).where(eq(depositAddresses.address, address)))[0]; }
  async find(walletId: string, chain: string, asset: string, treasuryProviderId: string) {
    return (await this.db.select().from(depositAddresses).where(and(
      eq(depositAddresses.walletId, walletId), eq(depositAddresses.chain, chain), eq(depositAddresses.asset, asset),
      eq(depositAddresses.treasuryProviderId, treasuryProviderId),
    )))[0];
  }
  async listByWallet(walletId: string) {
    return this.db.select().from(depositAddresses).where(eq(depositAddresses.walletId, walletId)).orderBy(asc(rowid('deposit_addresses')));
  }
}

export class PgPayoutDestinations implements PayoutDestinationRepo {
  constructor(private db: Db) {}
  async insert(d: PayoutDestination) { await this.db.insert(payoutDestinations).values(d); }
  async current(providerId: string, asset: PayoutDestination['asset'], chain: string) {
    return (await this.db.select().from(payoutDestinations)
      .where(and(eq(payoutDestinations.providerId, providerId), eq(payoutDestinations.asset, asset), eq(payoutDestinations.chain, chain)))
      .orderBy(desc(rowid('payout_destinations'))).limit(1))[0];
  }
  async listCurrent(providerId: string) {
    const all = await this.db.select().from(payoutDestinations).where(eq(payoutDestinations.providerId, providerId)).orderBy(desc(rowid('payout_destinations')));
    const seen = new Set<string>();
    return all.filter((d) => {
      const k = `${d.asset}:${d.chain}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    }).reverse();
  }
}

// the event, then a delivery for each endpoint of its tenant that wants its type (UPDATE … RETURNING
// takes the endpoint's next seq and its row lock, as nextSeq does), failed at once when the endpoint's
// queue is full (enqueueDeliveries in src/domain/platform/webhooks/endpoints.ts)
const EVENT_QUEUED = `WITH ev AS (
    INSERT INTO rail_events (id, tenant_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)
  ), ep AS (
    UPDATE webhook_endpoints SET last_seq = last_seq + 1
    WHERE tenant_id = $2 AND (event_types IS NULL OR jsonb_exists(event_types::jsonb, $3::text))
    RETURNING id, tenant_id, last_seq, created_at
  ), q AS (
    SELECT ep.id, ep.tenant_id, ep.last_seq, row_number() OVER (ORDER BY ep.created_at, ep.id) AS n,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = ep.id AND d.state = 'pending') >= $7::bigint AS is_full
    FROM ep
  )
  INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_id, event_type, seq, state, next_attempt_at, locked_until, attempts, replay_of, created_at, finished_at)
  SELECT left($6::text, length($6::text) - 2) || lpad(to_hex(q.n - 1), 2, '0'), q.id, q.tenant_id, $1, $3, q.last_seq,
    CASE WHEN q.is_full THEN 'failed' ELSE 'pending' END, $5, NULL,
    CASE WHEN q.is_full THEN json_build_array(json_build_object('at', $5::bigint, 'durationMs', 0, 'error', $8::text))::text ELSE '[]' END,
    NULL, $5, CASE WHEN q.is_full THEN $5::bigint END
  FROM q`;

export class PgRailEvents implements RailEventRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(e: RailEvent) { await this.db.insert(railEvents).values(e); }
  async insertQueued(e: RailEvent, q: { deliveryId: string; maxPending: number; fullError: string }) {
    await send(this.s, 'event_queued', EVENT_QUEUED, [e.id, e.tenantId, e.type, JSON.stringify(e.data), e.createdAt, q.deliveryId, q.maxPending, q.fullError]);
  }
  async get(id: string) { return (await this.db.select().from(railEvents).where(eq(railEvents.id, id)))[0]; }
  async list(tenantId: string, opts: { type?: string; before?: string; limit: number }) {
    const conds: SQL[] = [eq(railEvents.tenantId, tenantId)];
    if (opts.type) conds.push(eq(railEvents.type, opts.type));
    if (opts.before) conds.push(beforeRow('rail_events', opts.before));
    return this.db.select().from(railEvents).where(and(...conds)).orderBy(desc(rowid('rail_events'))).limit(opts.limit);
  }
  async removeOlderThan(before: number, limit: number) {
    return (await this.db.execute(sql`DELETE FROM rail_events WHERE id IN (SELECT e.id FROM rail_events e WHERE e.created_at < ${before} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending') AND NOT EXISTS (SELECT 1 FROM alert_mails m WHERE m.event_id = e.id AND m.state = 'pending') ORDER BY e.created_at LIMIT ${limit})`)).rowCount ?? 0;
  }
}

export class PgReconciliations implements ReconciliationRepo {
  constructor(private db: Db) {}
  async insert(r: Reconciliation) { await this.db.insert(reconciliations).values(r); }
  async latest() { return (await this.db.select().from(reconciliations).orderBy(desc(rowid('reconciliations'))).limit(1))[0]; }
  async ledgerTotals(): Promise<LedgerTotals> {
    // every wallet's balance is its newest entry's running sum (ledger_wallet_seq); sums as text: exact
    const bal = await this.db.execute<{ s: string | null }>(sql`
      SELECT sum(e.balance_after)::text AS s FROM ledger_entries e
      WHERE e.seq = (SELECT max(seq) FROM ledger_entries x WHERE x.wallet_id = e.wallet_id)`);
    const rows = await this.db.execute<{ type: string; s: string }>(sql`SELECT type, sum(amount_minor)::text AS s FROM ledger_entries GROUP BY type`);
    return { balancesMinor: BigInt(bal.rows[0]?.s ?? 0), byType: Object.fromEntries(rows.rows.map((r) => [r.type, BigInt(r.s)])) };
  }
}

export class PgSandboxObjects implements SandboxObjectRepo {
  constructor(private db: Db, private s: Session) {}
  /**
   * Inside a write transaction the row is locked: adapters keep read-modify-write state here
   * (the USDC sender's lease and nonce), and under READ COMMITTED two instances would otherwise
   * both read the old value and one write would be lost. A row not there yet cannot be locked:
   * two inserts of it collide on the primary key and the later transaction runs again.
   */
  async get(kind: string, id: string) {
    const q = this.db.select().from(sandboxObjects).where(and(eq(sandboxObjects.kind, kind), eq(sandboxObjects.id, id)));
    return (await forWrite(this.s, q))[0];
  }
  async put(kind: string, id: string, data: Record<string, unknown>, updatedAt: number) {
    const existing = await this.get(kind, id);
    if (existing) {
      await this.db.update(sandboxObjects).set({ data, updatedAt }).where(and(eq(sandboxObjects.kind, kind), eq(sandboxObjects.id, id)));
      return { ...existing, data, updatedAt };
    }
    const last = await this.db.execute<{ s: string | null }>(sql`SELECT max(seq)::text AS s FROM sandbox_objects WHERE kind = ${kind}`);
    const row = { kind, id, seq: Number(last.rows[0]?.s ?? 0) + 1, data, updatedAt };
    await this.db.insert(sandboxObjects).values(row);
    return row;
  }
  async list(kind: string, afterSeq = 0) {
    return this.db.select().from(sandboxObjects).where(and(eq(sandboxObjects.kind, kind), gt(sandboxObjects.seq, afterSeq))).orderBy(asc(sandboxObjects.seq));
  }
}
