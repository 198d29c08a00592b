/**
 * Payments: transactions, receipts, breakers, payment idempotency and an authorization's checks.
 * On the paid call's hot path: a write whose result the domain does not read is sent (`sent`,
 * `Sql.send`: on PostgreSQL inside a `tx` it leaves with the COMMIT, not waited for).
 */
import type { Transaction, Receipt, Breaker, PaymentIdempotency } from '../repos/payments.js';
import { AlreadyResolved } from '../errors.js';
import type { Sql } from './sql.js';

/** (currency, count, amount) rows: SQLite answers bigints (safe integers), PostgreSQL int8 and numeric as text; both exact */
export function outstanding(rows: unknown[][]): { count: number; amounts: { currency: string; amountMinor: bigint }[] } {
  return {
    count: rows.reduce((n, r) => n + Number(r[1] as bigint | string), 0),
    amounts: rows.map((r) => ({ currency: r[0] as string, amountMinor: BigInt(r[2] as bigint | string) })),
  };
}

type Resolution = Pick<Transaction, 'status' | 'resolvedAt'> & Partial<Pick<Transaction, 'failureReason' | 'feeMinor' | 'chargedMinor'>>;

export class Transactions {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('transactions'); }
  /** a reused nonce: UniqueViolation, which the domain tells apart as a replay */
  insert(t: Transaction) { return this.t.insert(t, true); }
  /** in a `tx`, locked (Sql.lock): complete, fail and the sweeper read a status and resolve it; a second resolver waits, then reads the first one's */
  get(id: string) { return this.t.first({ id }, '', true); }
  byNonce(nonce: string) { return this.t.first({ nonce }); }
  update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>) { return this.t.updateSent(patch, { id }); }
  /**
   * Resolves a transaction that is authorized, reading nothing first: when it is not authorized
   * any more (resolved first elsewhere), refused with AlreadyResolved, and the database
   * transaction fails with it (on PostgreSQL at its COMMIT: the update is not waited for).
   *
   * Dialect switch, resolution: PostgreSQL's transaction_resolve (drizzle-pg/0007) updates the row
   * while it is authorized and raises otherwise, sent, not waited for (its refusal fails the COMMIT);
   * SQLite's one writer updates it where it is authorized and counts. A metered call's charged
   * amount goes with it (drizzle-pg/0019's six-argument transaction_resolve).
   */
  async resolve(id: string, patch: Resolution) {
    if (this.c.dialect === 'pg') {
      const args = [id, patch.status, patch.feeMinor ?? null, patch.failureReason ?? null, patch.resolvedAt];
      if (patch.chargedMinor == null) return this.c.send('SELECT transaction_resolve(?, ?, ?, ?, ?)', args);
      return this.c.send('SELECT transaction_resolve(?, ?, ?, ?, ?, ?)', [...args, patch.chargedMinor]);
    }
    if ((await this.t.update({ id, status: 'authorized' }, patch)) === 0) throw new AlreadyResolved(`transaction ${id} is not authorized any more: it was resolved first`);
  }
  /** Every transaction by id, a page at a time (`afterId` pages on): the ledger's verification reads them all. */
  page(opts: { afterId?: string; limit: number }) {
    return opts.afterId === undefined ? this.t.all({}, 'ORDER BY id LIMIT ?', [opts.limit]) : this.t.select('WHERE id > ? ORDER BY id LIMIT ?', [opts.afterId, opts.limit]);
  }
  /**
   * Resolved transactions counted per bucket of resolution time, currency and outcome, over
   * [from, to) in buckets of `bucketMs` from `from` (the operator's activity): `bucket` is the
   * bucket's index, `amountMinor` and `feeMinor` the sums (a fee is null, counted 0, where none
   * was taken; a metered call counts what it was charged, not what was held). Computed by the database on either backend (integer division of bigint or
   * INTEGER times the same); transactions_resolved bounds the scan to the range.
   */
  async activity(q: { from: number; to: number; bucketMs: number }) {
    // the times go as bigints: a JavaScript number binds as REAL on SQLite, and the division would not be whole
    const rows = await this.c.rows(`SELECT (resolved_at - ?) / ?, currency, status, count(*), sum(coalesce(charged_minor, amount_minor)), sum(coalesce(fee_minor, 0))
      FROM transactions WHERE resolved_at >= ? AND resolved_at < ?
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, [BigInt(q.from), BigInt(q.bucketMs), BigInt(q.from), BigInt(q.to)]);
    // SQLite answers bigints (safe integers), PostgreSQL int8 and numeric as text: both exact
    return rows.map((r) => ({
      bucket: Number(r[0] as bigint | string),
      currency: r[1] as string,
      status: r[2] as Transaction['status'],
      count: Number(r[3] as bigint | string),
      amountMinor: BigInt(r[4] as bigint | string),
      feeMinor: BigInt(r[5] as bigint | string),
    }));
  }
  /** authorized transactions not yet resolved, and what they hold by currency (the metrics' holds gauges) */
  async holdsOutstanding() {
    return outstanding(await this.c.rows("SELECT currency, count(*), coalesce(sum(amount_minor), 0) FROM transactions WHERE status = 'authorized' GROUP BY currency ORDER BY currency"));
  }
  /** authorized transactions whose in-flight time ran out by `now`, oldest expiry first; of one wallet if given */
  listExpired(now: number, limit: number, walletId?: string) {
    // transactions_open (status, expires_at) bounds the scan to what is overdue; the wallet is a filter on that.
    // Locked as get() is: a completion that won the race is read again (and no longer listed) on PostgreSQL
    const wallet = walletId === undefined ? '' : ' AND wallet_id = ?';
    return this.t.select(`WHERE status = 'authorized' AND expires_at <= ?${wallet} ORDER BY expires_at, id LIMIT ?${this.c.lock}`,
      walletId === undefined ? [now, limit] : [now, walletId, limit]);
  }
}

export class Receipts {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('receipts'); }
  insert(r: Receipt) { return this.t.insert(r, true); }
  get(id: string) { return this.t.first({ id }); }
  byTransaction(transactionId: string) { return this.t.all({ transactionId }, 'ORDER BY "timestamp", id'); }
  /** newest first; `before` is the (timestamp, id) of the last receipt of the previous page */
  list(owner: { workspaceId: string } | { providerId: string }, opts: { limit: number; before?: { timestamp: number; id: string } }) {
    const [col, id] = 'workspaceId' in owner ? ['workspace_id', owner.workspaceId] : ['provider_id', owner.providerId];
    const b = opts.before;
    return this.t.select(`WHERE ${col} = ?${b ? ' AND ("timestamp" < ? OR ("timestamp" = ? AND id < ?))' : ''} ORDER BY "timestamp" DESC, id DESC LIMIT ?`,
      b ? [id, b.timestamp, b.timestamp, b.id, opts.limit] : [id, opts.limit]);
  }
}

export class Breakers {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('breakers'); }
  get(walletId: string, providerId: string) { return this.t.first({ walletId, providerId }); }
  put(b: Breaker) { return this.t.upsert(b, ['walletId', 'providerId'], true); }
  /**
   * a success: the pair's count of failures in a row back to 0 (`updatedAt` = at) where it is not;
   * no row, nothing. Written without reading the breaker first.
   */
  clearFailures(walletId: string, providerId: string, at: number) {
    return this.t.updateSent({ consecutiveFailures: 0, updatedAt: at }, { walletId, providerId }, 'consecutive_failures <> 0');
  }
}

/** Idempotency keys of paid calls, per (wallet, capability, key); see the table's comment. */
export class PaymentIdempotencies {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('paymentIdempotency'); }
  get(walletId: string, capabilityId: string, key: string) { return this.t.first({ walletId, capabilityId, key }); }
  /** throws UniqueViolation when the (wallet, capability, key) is taken: a concurrent first use */
  insert(row: PaymentIdempotency) { return this.t.insert(row); }
  byTransaction(transactionId: string) { return this.t.first({ transactionId }); }
  /** the call succeeded: `completed`, with the first answer when the seller sent it */
  async complete(transactionId: string, response: { status: number; contentType: string | null; body: string } | null) {
    await this.t.update({ transactionId }, {
      state: 'completed',
      responseStatus: response?.status ?? null,
      responseContentType: response?.contentType ?? null,
      responseBody: response?.body ?? null,
    });
  }
  /** frees a key (its call failed, expired, or the row outlived its time) */
  async remove(walletId: string, capabilityId: string, key: string) { await this.t.delete({ walletId, capabilityId, key }); }
  async removeByTransaction(transactionId: string) { await this.t.delete({ transactionId }); }
  /** deletes up to `limit` rows whose time ran out by `now`; returns how many */
  removeExpired(now: number, limit: number) {
    return this.c.run(`DELETE FROM payment_idempotency WHERE transaction_id IN
      (SELECT transaction_id FROM payment_idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`, [now, limit]);
  }
}

/**
 * The reads of an authorization's checks, together, in one statement (the nonce's transaction, the
 * wallet, the breaker, the capability and the seller): one row whatever exists, each table's
 * columns in turn, then whether the wallet, capability and seller exist, the breaker's pause and
 * whether the nonce is used. Unlocked, as a transaction under READ COMMITTED reads them.
 */
export class PurchaseFacts {
  private readonly w;
  private readonly cap;
  private readonly tn;
  private readonly text: string;
  constructor(private readonly c: Sql) {
    this.w = c.table('wallets');
    this.cap = c.table('capabilities');
    this.tn = c.table('tenants');
    this.text = `SELECT ${this.w.columns('w')}, ${this.cap.columns('c')}, ${this.tn.columns('t')},
      w.id IS NOT NULL, c.id IS NOT NULL, t.id IS NOT NULL, coalesce(b.paused, false), n.id IS NOT NULL
      FROM (SELECT 1) AS one
      LEFT JOIN wallets w ON w.id = ?
      LEFT JOIN capabilities c ON c.id = ?
      LEFT JOIN tenants t ON t.id = ?
      LEFT JOIN breakers b ON b.wallet_id = ? AND b.provider_id = ?
      LEFT JOIN transactions n ON n.nonce = ?`;
  }
  async read(q: { nonce: string; walletId: string; capabilityId: string; providerId: string }) {
    const row = (await this.c.one(this.text, [q.walletId, q.capabilityId, q.providerId, q.walletId, q.providerId, q.nonce]))!;
    const ww = this.w.width;
    const cw = this.cap.width;
    const at = ww + cw + this.tn.width;
    // true on PostgreSQL, 1 on SQLite
    const yes = (v: unknown) => v === true || v === 1n || v === 1;
    return {
      wallet: yes(row[at]) ? this.w.row(row, 0) : undefined,
      capability: yes(row[at + 1]) ? this.cap.row(row, ww) : undefined,
      seller: yes(row[at + 2]) ? this.tn.row(row, ww + cw) : undefined,
      paused: yes(row[at + 3]),
      nonceUsed: yes(row[at + 4]),
    };
  }
}
