import { and, asc, desc, eq, gt, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { railTransactions, depositAddresses, payoutDestinations, railEvents, reconciliations, sandboxObjects, webhookEndpoints, webhookDeliveries } from '../schema/index.js';
import type {
  DepositAddress, DepositAddressRepo, LedgerTotals, PayoutDestination, PayoutDestinationRepo, RailEvent, RailEventRepo, RailTransaction,
  PayoutListQuery, RailTransactionKind, RailTransactionPatch, RailTransactionRepo, Reconciliation, ReconciliationRepo, SandboxObjectRepo,
} from '../repos/rails.js';

type Db = BetterSQLite3Database;

/** rows inserted before the row with this id (insertion order = newest first paging) */
const beforeRow = (table: string, id: string) => sql`rowid < (SELECT rowid FROM ${sql.identifier(table)} WHERE id = ${id})`;

export class SqliteRailTransactions implements RailTransactionRepo {
  constructor(private db: Db) {}
  async insert(t: RailTransaction) { this.db.insert(railTransactions).values(t).run(); }
  async get(id: string) { return this.db.select().from(railTransactions).where(eq(railTransactions.id, id)).get(); }
  async byExternalRef(treasuryProviderId: string, externalRef: string) {
    return this.db.select().from(railTransactions)
      .where(and(eq(railTransactions.treasuryProviderId, treasuryProviderId), eq(railTransactions.externalRef, externalRef))).get();
  }
  async byIdempotencyKey(tenantId: string, key: string) {
    return this.db.select().from(railTransactions).where(and(eq(railTransactions.tenantId, tenantId), eq(railTransactions.idempotencyKey, key))).get();
  }
  async transition(id: string, fromStates: readonly RailTransaction['state'][], patch: RailTransactionPatch) {
    return this.db.update(railTransactions).set(patch).where(and(eq(railTransactions.id, id), inArray(railTransactions.state, [...fromStates]))).run().changes > 0;
  }
  async recordReference(id: string, patch: RailTransactionPatch) {
    return this.db.update(railTransactions).set(patch).where(and(eq(railTransactions.id, id), eq(railTransactions.state, 'submitted'), isNull(railTransactions.externalRef))).run().changes > 0;
  }
  async update(id: string, patch: RailTransactionPatch) { this.db.update(railTransactions).set(patch).where(eq(railTransactions.id, id)).run(); }
  async listByTenant(tenantId: string, opts: { kind?: RailTransactionKind; walletId?: string; before?: string; limit: number }) {
    const conds: SQL[] = [eq(railTransactions.tenantId, tenantId)];
    if (opts.kind) conds.push(eq(railTransactions.kind, opts.kind));
    if (opts.walletId) conds.push(eq(railTransactions.walletId, opts.walletId));
    if (opts.before) conds.push(beforeRow('rail_transactions', opts.before));
    return this.db.select().from(railTransactions).where(and(...conds)).orderBy(desc(sql`rowid`)).limit(opts.limit).all();
  }
  /** by id: ids are time-ordered, so oldest first, and `afterId` pages on from a row */
  async listByState(kind: RailTransactionKind, states: readonly RailTransaction['state'][], limit: number, afterId?: string) {
    return this.db.select().from(railTransactions)
      .where(and(eq(railTransactions.kind, kind), inArray(railTransactions.state, [...states]), afterId === undefined ? undefined : gt(railTransactions.id, afterId)))
      .orderBy(asc(railTransactions.id)).limit(limit).all();
  }
  async listByKind(kind: RailTransactionKind) {
    return this.db.select().from(railTransactions).where(eq(railTransactions.kind, kind)).orderBy(asc(sql`rowid`)).all();
  }
  /**
   * One tenant's: one query through rail_tx_tenant (or rail_tx_state with a state), sorting
   * only that tenant's payouts. Every tenant's: one query per state through rail_tx_state,
   * (kind, state, rowid), which yields each state's newest first without a sort and stops at
   * the limit; the pages are merged here. A single query over every state would sort every
   * payout (an IN list on state cannot keep the index's rowid order).
   */
  async listPayouts(q: PayoutListQuery) {
    const conds = (state?: RailTransaction['state']): SQL | undefined => and(
      eq(railTransactions.kind, 'payout'),
      q.tenantId === undefined ? undefined : eq(railTransactions.tenantId, q.tenantId),
      state === undefined ? undefined : eq(railTransactions.state, state),
      q.createdBefore === undefined ? undefined : lt(railTransactions.createdAt, q.createdBefore),
      q.before === undefined ? undefined : beforeRow('rail_transactions', q.before),
    );
    // rowid comes back as a bigint (safe integers)
    const page = (state?: RailTransaction['state']) => this.db.select({ row: railTransactions, seq: sql<bigint>`rowid` })
      .from(railTransactions).where(conds(state)).orderBy(desc(sql`rowid`)).limit(q.limit).all();
    if (q.tenantId !== undefined || q.state !== undefined) return page(q.state).map((r) => r.row);
    return railTransactions.state.enumValues.flatMap((state) => page(state))
      .sort((a, b) => (BigInt(b.seq) > BigInt(a.seq) ? 1 : -1)).slice(0, q.limit).map((r) => r.row);
  }
}

export class SqliteDepositAddresses implements DepositAddressRepo {
  constructor(private db: Db) {}
  async insert(a: DepositAddress) { this.db.insert(depositAddresses).values(a).run(); }
  async get(address: string) { return this.db.select().from(depositAddresses).where(eq(depositAddresses.address, address)).get(); }
  async find(walletId: string, chain: string, asset: string, treasuryProviderId: string) {
    return this.db.select().from(depositAddresses).where(and(
      eq(depositAddresses.walletId, walletId), eq(depositAddresses.chain, chain), eq(depositAddresses.asset, asset),
      eq(depositAddresses.treasuryProviderId, treasuryProviderId),
    )).get();
  }
  async listByWallet(walletId: string) {
    return this.db.select().from(depositAddresses).where(eq(depositAddresses.walletId, walletId)).orderBy(asc(sql`rowid`)).all();
  }
}

export class SqlitePayoutDestinations implements PayoutDestinationRepo {
  constructor(private db: Db) {}
  async insert(d: PayoutDestination) { this.db.insert(payoutDestinations).values(d).run(); }
  async current(providerId: string, asset: PayoutDestination['asset'], chain: string) {
    return this.db.select().from(payoutDestinations)
      .where(and(eq(payoutDestinations.providerId, providerId), eq(payoutDestinations.asset, asset), eq(payoutDestinations.chain, chain)))
      .orderBy(desc(sql`rowid`)).limit(1).get();
  }
  async listCurrent(providerId: string) {
    const all = this.db.select().from(payoutDestinations).where(eq(payoutDestinations.providerId, providerId)).orderBy(desc(sql`rowid`)).all();
    const seen = new Set<string>();
    return all.filter((d) => {
      const k = `${d.asset}:${d.chain}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    }).reverse();
  }
}

export class SqliteRailEvents implements RailEventRepo {
  constructor(private db: Db) {}
  async insert(e: RailEvent) { this.db.insert(railEvents).values(e).run(); }
  async insertQueued(e: RailEvent, q: { deliveryId: string; maxPending: number; fullError: string }) {
    this.db.insert(railEvents).values(e).run();
    const endpoints = this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.tenantId, e.tenantId))
      .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id)).all()
      .filter((ep) => ep.eventTypes === null || ep.eventTypes.includes(e.type));
    endpoints.forEach((ep, n) => {
      const seq = this.db.update(webhookEndpoints).set({ lastSeq: sql`${webhookEndpoints.lastSeq} + 1` }).where(eq(webhookEndpoints.id, ep.id))
        .returning({ seq: webhookEndpoints.lastSeq }).get()!.seq;
      const pending = this.db.select({ n: sql<number>`count(*)` }).from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.endpointId, ep.id), eq(webhookDeliveries.state, 'pending'))).get()?.n ?? 0;
      const full = pending >= q.maxPending;
      this.db.insert(webhookDeliveries).values({
        id: q.deliveryId.slice(0, -2) + n.toString(16).padStart(2, '0'),
        endpointId: ep.id, tenantId: ep.tenantId, eventId: e.id, eventType: e.type, seq,
        state: full ? 'failed' : 'pending', nextAttemptAt: e.createdAt, lockedUntil: null,
        attempts: full ? [{ at: e.createdAt, durationMs: 0, error: q.fullError }] : [],
        replayOf: null, createdAt: e.createdAt, finishedAt: full ? e.createdAt : null,
      }).run();
    });
  }
  async get(id: string) { return this.db.select().from(railEvents).where(eq(railEvents.id, id)).get(); }
  async list(tenantId: string, opts: { type?: string; before?: string; limit: number }) {
    const conds: SQL[] = [eq(railEvents.tenantId, tenantId)];
    if (opts.type) conds.push(eq(railEvents.type, opts.type));
    if (opts.before) conds.push(beforeRow('rail_events', opts.before));
    return this.db.select().from(railEvents).where(and(...conds)).orderBy(desc(sql`rowid`)).limit(opts.limit).all();
  }
  async removeOlderThan(before: number, limit: number) {
    return this.db.run(sql`DELETE FROM rail_events WHERE id IN (SELECT e.id FROM rail_events e WHERE e.created_at < ${before} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending') AND NOT EXISTS (SELECT 1 FROM alert_mails m WHERE m.event_id = e.id AND m.state = 'pending') ORDER BY e.created_at LIMIT ${limit})`).changes;
  }
}

export class SqliteReconciliations implements ReconciliationRepo {
  constructor(private db: Db) {}
  async insert(r: Reconciliation) { this.db.insert(reconciliations).values(r).run(); }
  async latest() { return this.db.select().from(reconciliations).orderBy(desc(sql`rowid`)).limit(1).get(); }
  async ledgerTotals(): Promise<LedgerTotals> {
    // every wallet's balance is its newest entry's running sum (ledger_wallet_seq)
    const bal = this.db.get<{ s: bigint | number | null }>(sql`
      SELECT sum(e.balance_after) AS s FROM ledger_entries e
      WHERE e.seq = (SELECT max(seq) FROM ledger_entries x WHERE x.wallet_id = e.wallet_id)`);
    const rows = this.db.all<{ type: string; s: bigint | number }>(sql`SELECT type, sum(amount_minor) AS s FROM ledger_entries GROUP BY type`);
    return { balancesMinor: BigInt(bal?.s ?? 0), byType: Object.fromEntries(rows.map((r) => [r.type, BigInt(r.s)])) };
  }
}

export class SqliteSandboxObjects implements SandboxObjectRepo {
  constructor(private db: Db) {}
  async get(kind: string, id: string) {
    return this.db.select().from(sandboxObjects).where(and(eq(sandboxObjects.kind, kind), eq(sandboxObjects.id, id))).get();
  }
  async put(kind: string, id: string, data: Record<string, unknown>, updatedAt: number) {
    const existing = await this.get(kind, id);
    if (existing) {
      this.db.update(sandboxObjects).set({ data, updatedAt }).where(and(eq(sandboxObjects.kind, kind), eq(sandboxObjects.id, id))).run();
      return { ...existing, data, updatedAt };
    }
    const last = this.db.get<{ s: bigint | number | null }>(sql`SELECT max(seq) AS s FROM sandbox_objects WHERE kind = ${kind}`);
    const row = { kind, id, seq: Number(last?.s ?? 0) + 1, data, updatedAt };
    this.db.insert(sandboxObjects).values(row).run();
    return row;
  }
  async list(kind: string, afterSeq = 0) {
    return this.db.select().from(sandboxObjects).where(and(eq(sandboxObjects.kind, kind), gt(sandboxObjects.seq, afterSeq))).orderBy(asc(sandboxObjects.seq)).all();
  }
}
