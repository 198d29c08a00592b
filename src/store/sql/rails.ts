import type {
  DepositAddress, LedgerTotals, PayoutDestination, RailEvent, RailTransaction, PayoutListQuery, RailTransactionKind, RailTransactionPatch, Reconciliation,
} from '../repos/rails.js';
import { railTransactions } from '../schema/index.js';
import type { Sql } from './sql.js';

/**
 * Newest first paging: the lists that take `before` are newest first (insertion order), `before`
 * the id of the previous page's last item: the rows inserted before the row with this id.
 * Insertion order is `rowid` (SQLite's own, PostgreSQL's identity column of drizzle-pg/0001).
 */
const beforeRow = (table: string) => `rowid < (SELECT b.rowid FROM ${table} b WHERE b.id = ?)`;

/** `WHERE` over the conditions given (each with its values), `TRUE` for none */
function where(conds: [string, ...unknown[]][]): { text: string; values: unknown[] } {
  return { text: `WHERE ${conds.map((c) => c[0]).join(' AND ') || 'TRUE'}`, values: conds.flatMap((c) => c.slice(1)) };
}

export class RailTransactions {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('railTransactions'); }
  insert(t: RailTransaction) { return this.t.insert(t); }
  get(id: string) { return this.t.first({ id }); }
  byExternalRef(treasuryProviderId: string, externalRef: string) { return this.t.first({ treasuryProviderId, externalRef }); }
  byIdempotencyKey(tenantId: string, key: string) { return this.t.first({ tenantId, idempotencyKey: key }); }
  /**
   * Applies the patch only while the row is in one of `fromStates`; false if it was not
   * (a concurrent writer moved it first), so a state change happens once.
   */
  async transition(id: string, fromStates: readonly RailTransaction['state'][], patch: RailTransactionPatch) {
    return (await this.t.update({ id, state: fromStates }, patch)) > 0;
  }
  /**
   * Records a submitted payout's rail reference once: applies the patch only while the row is
   * `submitted` with no reference (checked by the UPDATE itself, so of two submissions of one
   * payout racing on two instances, the second changes nothing); false if it did not apply.
   */
  async recordReference(id: string, patch: RailTransactionPatch) {
    return (await this.t.update({ id, state: 'submitted', externalRef: null }, patch)) > 0;
  }
  async update(id: string, patch: RailTransactionPatch) { await this.t.update({ id }, patch); }
  /** a tenant's, newest first */
  listByTenant(tenantId: string, opts: { kind?: RailTransactionKind; walletId?: string; before?: string; limit: number }) {
    const w = where([
      ['tenant_id = ?', tenantId],
      ...(opts.kind ? [['kind = ?', opts.kind] as [string, unknown]] : []),
      ...(opts.walletId ? [['wallet_id = ?', opts.walletId] as [string, unknown]] : []),
      ...(opts.before ? [[beforeRow('rail_transactions'), opts.before] as [string, unknown]] : []),
    ]);
    return this.t.select(`${w.text} ORDER BY rowid DESC LIMIT ?`, [...w.values, opts.limit]);
  }
  /** every row of a kind in these states, oldest first: by id (ids are time-ordered), and `afterId` pages on from a row */
  listByState(kind: RailTransactionKind, states: readonly RailTransaction['state'][], limit: number, afterId?: string) {
    const w = where([['kind = ?', kind], [this.c.anyOf('state'), this.c.list(states)], ...(afterId === undefined ? [] : [['id > ?', afterId] as [string, unknown]])]);
    return this.t.select(`${w.text} ORDER BY id LIMIT ?`, [...w.values, limit]);
  }
  /** every row of a kind, oldest first (reconciliation) */
  listByKind(kind: RailTransactionKind) { return this.t.all({ kind }, 'ORDER BY rowid'); }
  /**
   * Payouts, newest first: one tenant's or (without `tenantId`) every tenant's, optionally in
   * one state and created (submitted) before `createdBefore` (epoch ms). Read through the
   * indexes (rail_tx_state, rail_tx_tenant), never by scanning every payout.
   *
   * One tenant's: one query through rail_tx_tenant (or rail_tx_state with a state), sorting
   * only that tenant's payouts. Every tenant's: one query per state through rail_tx_state
   * (SQLite; rail_tx_state_order on PostgreSQL), (kind, state, rowid), which yields each state's
   * newest first without a sort and stops at the limit; the pages are merged here. A single query
   * over every state would sort every payout (an IN list on state cannot keep the index's order).
   */
  async listPayouts(q: PayoutListQuery) {
    const page = async (state?: RailTransaction['state']) => {
      const w = where([
        [`kind = 'payout'`],
        ...(q.tenantId === undefined ? [] : [['tenant_id = ?', q.tenantId] as [string, unknown]]),
        ...(state === undefined ? [] : [['state = ?', state] as [string, unknown]]),
        ...(q.createdBefore === undefined ? [] : [['created_at < ?', q.createdBefore] as [string, unknown]]),
        ...(q.before === undefined ? [] : [[beforeRow('rail_transactions'), q.before] as [string, unknown]]),
      ]);
      const rows = await this.c.rows(`SELECT ${this.t.columns()}, rowid FROM rail_transactions ${w.text} ORDER BY rowid DESC LIMIT ?`, [...w.values, q.limit]);
      return rows.map((r) => ({ row: this.t.row(r), seq: BigInt(r[r.length - 1] as bigint | string) }));
    };
    if (q.tenantId !== undefined || q.state !== undefined) return (await page(q.state)).map((r) => r.row);
    const pages = await Promise.all(railTransactions.state.enumValues.map((state) => page(state)));
    return pages.flat().sort((a, b) => (b.seq > a.seq ? 1 : -1)).slice(0, q.limit).map((r) => r.row);
  }
}

export class DepositAddresses {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('depositAddresses'); }
  insert(a: DepositAddress) { return this.t.insert(a); }
  /** by address in lower case */
  get(address: string) { return this.t.first({ address }); }
  find(walletId: string, chain: string, asset: string, treasuryProviderId: string) { return this.t.first({ walletId, chain, asset, treasuryProviderId }); }
  /** oldest first */
  listByWallet(walletId: string) { return this.t.all({ walletId }, 'ORDER BY rowid'); }
}

export class PayoutDestinations {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('payoutDestinations'); }
  insert(d: PayoutDestination) { return this.t.insert(d); }
  /** the newest registration of this asset and chain */
  current(providerId: string, asset: PayoutDestination['asset'], chain: string) {
    return this.t.first({ providerId, asset, chain }, 'ORDER BY rowid DESC');
  }
  /** the current one of each asset and chain */
  async listCurrent(providerId: string) {
    const all = await this.t.all({ providerId }, 'ORDER BY rowid DESC');
    const seen = new Set<string>();
    return all.filter((d) => {
      const k = `${d.asset}:${d.chain}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    }).reverse();
  }
}

// PostgreSQL: the event, then a delivery for each endpoint of its tenant that wants its type (UPDATE …
// RETURNING takes the endpoint's next seq and its row lock, as nextSeq does), failed at once when the
// endpoint's queue is full (enqueueDeliveries in src/domain/platform/webhooks/endpoints.ts)
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

export class RailEvents {
  private readonly t;
  private readonly endpoints;
  private readonly deliveries;
  constructor(private readonly c: Sql) {
    this.t = c.table('railEvents');
    this.endpoints = c.table('webhookEndpoints');
    this.deliveries = c.table('webhookDeliveries');
  }
  insert(e: RailEvent) { return this.t.insert(e); }
  /**
   * Records the event and queues a delivery for each webhook endpoint of its tenant that wants its
   * type, reading nothing first: on PostgreSQL one statement, sent and not waited for, so the
   * payment paths that use it gain no round trip. Delivery ids are `q.deliveryId` with its last two
   * characters replaced by the endpoint's place (00, 01, …, in the tenant's endpoint order); an
   * endpoint with `q.maxPending` deliveries waiting gets its delivery failed with `q.fullError`.
   *
   * Dialect switch, one round trip: PostgreSQL writes the event and its deliveries in one statement
   * (data-modifying WITH, sent inside a `tx` without waiting); SQLite, which has no writable WITH,
   * in a few statements that cost microseconds each.
   */
  async insertQueued(e: RailEvent, q: { deliveryId: string; maxPending: number; fullError: string }) {
    if (this.c.dialect === 'pg') {
      // $n already: no `?` in this text
      return this.c.send(EVENT_QUEUED, [e.id, e.tenantId, e.type, JSON.stringify(e.data), e.createdAt, q.deliveryId, q.maxPending, q.fullError]);
    }
    await this.t.insert(e);
    const endpoints = (await this.endpoints.all({ tenantId: e.tenantId }, 'ORDER BY created_at, id'))
      .filter((ep) => ep.eventTypes === null || ep.eventTypes.includes(e.type));
    for (const [n, ep] of endpoints.entries()) {
      const seq = Number((await this.c.one('UPDATE webhook_endpoints SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq', [ep.id]))![0]);
      const pending = Number((await this.c.one(`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`, [ep.id]))![0]);
      const full = pending >= q.maxPending;
      await this.deliveries.insert({
        id: q.deliveryId.slice(0, -2) + n.toString(16).padStart(2, '0'),
        endpointId: ep.id, tenantId: ep.tenantId, eventId: e.id, eventType: e.type, seq,
        state: full ? 'failed' : 'pending', nextAttemptAt: e.createdAt, lockedUntil: null,
        attempts: full ? [{ at: e.createdAt, durationMs: 0, error: q.fullError }] : [],
        replayOf: null, createdAt: e.createdAt, finishedAt: full ? e.createdAt : null,
      });
    }
  }
  get(id: string) { return this.t.first({ id }); }
  /** a tenant's, newest first */
  list(tenantId: string, opts: { type?: string; before?: string; limit: number }) {
    const w = where([
      ['tenant_id = ?', tenantId],
      ...(opts.type ? [['type = ?', opts.type] as [string, unknown]] : []),
      ...(opts.before ? [[beforeRow('rail_events'), opts.before] as [string, unknown]] : []),
    ]);
    return this.t.select(`${w.text} ORDER BY rowid DESC LIMIT ?`, [...w.values, opts.limit]);
  }
  /**
   * deletes up to `limit` events recorded before `before` that no pending webhook delivery or
   * alert mail still has to send; returns how many
   */
  removeOlderThan(before: number, limit: number) {
    return this.c.run(`DELETE FROM rail_events WHERE id IN (SELECT e.id FROM rail_events e WHERE e.created_at < ?
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending')
      AND NOT EXISTS (SELECT 1 FROM alert_mails m WHERE m.event_id = e.id AND m.state = 'pending') ORDER BY e.created_at LIMIT ?)`, [before, limit]);
  }
}

export class Reconciliations {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('reconciliations'); }
  insert(r: Reconciliation) { return this.t.insert(r); }
  latest() { return this.t.first({}, 'ORDER BY rowid DESC'); }
  async ledgerTotals(): Promise<LedgerTotals> {
    // every wallet's balance is its newest entry's running sum (ledger_wallet_seq); sums exact (bigint, or numeric's text)
    const bal = await this.c.one(`SELECT sum(e.balance_after) FROM ledger_entries e
      WHERE e.seq = (SELECT max(seq) FROM ledger_entries x WHERE x.wallet_id = e.wallet_id)`);
    const rows = await this.c.rows('SELECT type, sum(amount_minor) FROM ledger_entries GROUP BY type');
    return {
      balancesMinor: BigInt((bal?.[0] ?? 0) as bigint | string),
      byType: Object.fromEntries(rows.map((r) => [r[0] as string, BigInt(r[1] as bigint | string)])),
    };
  }
}

export class SandboxObjects {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('sandboxObjects'); }
  /**
   * Locked inside a write transaction (Sql.lock): adapters keep read-modify-write state here
   * (the USDC sender's lease and nonce), and under PostgreSQL's READ COMMITTED two instances would
   * otherwise both read the old value and one write would be lost. A row not there yet cannot be
   * locked: two inserts of it collide on the primary key and the later transaction runs again.
   */
  get(kind: string, id: string) { return this.t.first({ kind, id }, '', true); }
  /** inserts or replaces; a new object gets the next seq of its kind */
  async put(kind: string, id: string, data: Record<string, unknown>, updatedAt: number) {
    const existing = await this.get(kind, id);
    if (existing) {
      await this.t.update({ kind, id }, { data, updatedAt });
      return { ...existing, data, updatedAt };
    }
    const last = await this.c.one('SELECT max(seq) FROM sandbox_objects WHERE kind = ?', [kind]);
    const row = { kind, id, seq: Number(last?.[0] ?? 0) + 1, data, updatedAt };
    await this.t.insert(row);
    return row;
  }
  /** a kind's objects with seq above `afterSeq`, in seq order */
  list(kind: string, afterSeq = 0) { return this.t.all({ kind }, 'AND seq > ? ORDER BY seq', [afterSeq]); }
}
