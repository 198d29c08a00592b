import { and, asc, desc, eq, gt, inArray, lt, lte, or } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { transactions, receipts, breakers, paymentIdempotency, wallets, capabilities, tenants } from '../schema-pg/index.js';
import type { Transaction, TransactionRepo, Receipt, ReceiptRepo, Breaker, BreakerRepo, PaymentIdempotency, PaymentIdempotencyRepo, PurchaseFactsRepo } from '../repos/payments.js';
import type { Wallet } from '../repos/wallets.js';
import type { Capability } from '../repos/market.js';
import type { Tenant } from '../repos/tenancy.js';
import { forWrite, run, send, TableSql, type Session } from './sql.js';

type Db = NodePgDatabase;

const T = new TableSql<Transaction>(transactions);
const R = new TableSql<Receipt>(receipts);
const B = new TableSql<Breaker>(breakers);
const I = new TableSql<PaymentIdempotency>(paymentIdempotency);
const TX_GET = `SELECT ${T.columns} FROM transactions WHERE id = $1`;
// in a write transaction: complete, fail and the sweeper read a transaction's status and resolve
// it; the lock makes a second resolver wait and then read the status the first one wrote
const TX_GET_LOCKED = `${TX_GET} FOR NO KEY UPDATE`;
const TX_BY_NONCE = `SELECT ${T.columns} FROM transactions WHERE nonce = $1`;
const TX_RESOLVE = 'SELECT transaction_resolve($1, $2, $3, $4, $5)';
const RECEIPTS_OF = `SELECT ${R.columns} FROM receipts WHERE transaction_id = $1 ORDER BY "timestamp", id`;
const BREAKER_GET = `SELECT ${B.columns} FROM breakers WHERE wallet_id = $1 AND provider_id = $2`;
const BREAKER_PUT = `${B.insertText} ON CONFLICT (wallet_id, provider_id) DO UPDATE SET consecutive_failures = EXCLUDED.consecutive_failures, paused = EXCLUDED.paused, updated_at = EXCLUDED.updated_at`;
const IDEM_GET = `SELECT ${I.columns} FROM payment_idempotency WHERE wallet_id = $1 AND capability_id = $2 AND key = $3`;
const IDEM_OF = `SELECT ${I.columns} FROM payment_idempotency WHERE transaction_id = $1`;
const W = new TableSql<Wallet>(wallets);
const C = new TableSql<Capability>(capabilities);
const TN = new TableSql<Tenant>(tenants);
// an authorization's checks in one statement: one row whatever exists, each table's columns in turn,
// then whether the wallet, capability and seller exist, the breaker's pause and whether the nonce is used
const FACTS = `SELECT ${W.columnsOf('w')}, ${C.columnsOf('c')}, ${TN.columnsOf('t')},
  w.id IS NOT NULL, c.id IS NOT NULL, t.id IS NOT NULL, coalesce(b.paused, false), n.id IS NOT NULL
  FROM (SELECT 1) AS one
  LEFT JOIN wallets w ON w.id = $1
  LEFT JOIN capabilities c ON c.id = $2
  LEFT JOIN tenants t ON t.id = $3
  LEFT JOIN breakers b ON b.wallet_id = $1 AND b.provider_id = $3
  LEFT JOIN transactions n ON n.nonce = $4`;
const FACTS_FLAGS = W.width + C.width + TN.width;

export class PgTransactions implements TransactionRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(t: Transaction) {
    const v = T.insertValues(t);
    if (v) await send(this.s, 'tx_insert', T.insertText, v);
    else await this.db.insert(transactions).values(t);
  }
  async get(id: string) {
    return this.s.writable ? T.first(await run(this.s, 'tx_get_locked', TX_GET_LOCKED, [id])) : T.first(await run(this.s, 'tx_get', TX_GET, [id]));
  }
  async byNonce(nonce: string) { return T.first(await run(this.s, 'tx_by_nonce', TX_BY_NONCE, [nonce])); }
  async update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>) {
    const set = T.set(patch, 2);
    if (set.values.length === 0) return;
    await send(this.s, `tx_update:${set.keys}`, `UPDATE transactions SET ${set.text} WHERE id = $1`, [id, ...set.values]);
  }
  async resolve(id: string, patch: Pick<Transaction, 'status' | 'resolvedAt'> & Partial<Pick<Transaction, 'failureReason' | 'feeMinor'>>) {
    // drizzle-pg/0007: a conditional update that raises when the row is not authorized; sent, not waited for
    await send(this.s, 'tx_resolve', TX_RESOLVE, [id, patch.status, patch.feeMinor?.toString() ?? null, patch.failureReason ?? null, patch.resolvedAt]);
  }
  async page(opts: { afterId?: string; limit: number }) {
    return this.db.select().from(transactions).where(opts.afterId === undefined ? undefined : gt(transactions.id, opts.afterId)).orderBy(asc(transactions.id)).limit(opts.limit);
  }
  async listExpired(now: number, limit: number, walletId?: string) {
    const overdue = and(eq(transactions.status, 'authorized'), lte(transactions.expiresAt, now));
    const q = this.db.select().from(transactions).where(walletId === undefined ? overdue : and(overdue, eq(transactions.walletId, walletId)))
      .orderBy(asc(transactions.expiresAt), asc(transactions.id)).limit(limit);
    // locked as get() locks: a complete that won the race is re-read (and no longer listed) under READ COMMITTED
    return forWrite(this.s, q);
  }
}

export class PgReceipts implements ReceiptRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(r: Receipt) {
    const v = R.insertValues(r);
    if (v) await send(this.s, 'receipt_insert', R.insertText, v);
    else await this.db.insert(receipts).values(r);
  }
  async get(id: string) { return (await this.db.select().from(receipts).where(eq(receipts.id, id)))[0]; }
  async byTransaction(transactionId: string) { return R.all(await run(this.s, 'receipts_of', RECEIPTS_OF, [transactionId])); }
  async list(owner: { workspaceId: string } | { providerId: string }, opts: { limit: number; before?: { timestamp: number; id: string } }) {
    const ownerCond = 'workspaceId' in owner ? eq(receipts.workspaceId, owner.workspaceId) : eq(receipts.providerId, owner.providerId);
    const b = opts.before;
    const where = b
      ? and(ownerCond, or(lt(receipts.timestamp, b.timestamp), and(eq(receipts.timestamp, b.timestamp), lt(receipts.id, b.id))))
      : ownerCond;
    return this.db.select().from(receipts).where(where).orderBy(desc(receipts.timestamp), desc(receipts.id)).limit(opts.limit);
  }
}

export class PgBreakers implements BreakerRepo {
  constructor(private db: Db, private s: Session) {}
  async get(walletId: string, providerId: string) { return B.first(await run(this.s, 'breaker_get', BREAKER_GET, [walletId, providerId])); }
  async put(b: Breaker) {
    const v = B.insertValues(b);
    if (v) {
      await send(this.s, 'breaker_put', BREAKER_PUT, v);
      return;
    }
    await this.db.insert(breakers).values(b).onConflictDoUpdate({
      target: [breakers.walletId, breakers.providerId],
      set: { consecutiveFailures: b.consecutiveFailures, paused: b.paused, updatedAt: b.updatedAt },
    });
  }
  async clearFailures(walletId: string, providerId: string, at: number) {
    // a success writes without reading the breaker first (inside a tx: sent, not waited for)
    const set = B.set({ consecutiveFailures: 0, updatedAt: at }, 3);
    await send(this.s, 'breaker_clear', `UPDATE breakers SET ${set.text} WHERE wallet_id = $1 AND provider_id = $2 AND consecutive_failures <> 0`, [walletId, providerId, ...set.values]);
  }
}

/** a function, not a method: pg-store wraps every repository method into an async one */
const keyIs = (walletId: string, capabilityId: string, key: string) =>
  and(eq(paymentIdempotency.walletId, walletId), eq(paymentIdempotency.capabilityId, capabilityId), eq(paymentIdempotency.key, key));

export class PgPaymentIdempotency implements PaymentIdempotencyRepo {
  constructor(private db: Db, private s: Session) {}
  async get(walletId: string, capabilityId: string, key: string) {
    return I.first(await run(this.s, 'idem_get', IDEM_GET, [walletId, capabilityId, key]));
  }
  async insert(row: PaymentIdempotency) { await this.db.insert(paymentIdempotency).values(row); }
  async byTransaction(transactionId: string) { return I.first(await run(this.s, 'idem_of', IDEM_OF, [transactionId])); }
  async complete(transactionId: string, response: { status: number; contentType: string | null; body: string } | null) {
    await this.db.update(paymentIdempotency).set({
      state: 'completed',
      responseStatus: response?.status ?? null,
      responseContentType: response?.contentType ?? null,
      responseBody: response?.body ?? null,
    }).where(eq(paymentIdempotency.transactionId, transactionId));
  }
  async remove(walletId: string, capabilityId: string, key: string) {
    await this.db.delete(paymentIdempotency).where(keyIs(walletId, capabilityId, key));
  }
  async removeByTransaction(transactionId: string) {
    await this.db.delete(paymentIdempotency).where(eq(paymentIdempotency.transactionId, transactionId));
  }
  async removeExpired(now: number, limit: number) {
    const ids = (await this.db.select({ t: paymentIdempotency.transactionId }).from(paymentIdempotency)
      .where(lte(paymentIdempotency.expiresAt, now)).orderBy(asc(paymentIdempotency.expiresAt)).limit(limit)).map((r) => r.t);
    if (ids.length === 0) return 0;
    return (await this.db.delete(paymentIdempotency).where(inArray(paymentIdempotency.transactionId, ids)).returning({ t: paymentIdempotency.transactionId })).length;
  }
}

export class PgPurchaseFacts implements PurchaseFactsRepo {
  constructor(private s: Session) {}
  async read(q: { nonce: string; walletId: string; capabilityId: string; providerId: string }) {
    const row = (await run(this.s, 'purchase_facts', FACTS, [q.walletId, q.capabilityId, q.providerId, q.nonce])).rows[0]!;
    const at = FACTS_FLAGS;
    return {
      wallet: row[at] ? W.row(row, 0) : undefined,
      capability: row[at + 1] ? C.row(row, W.width) : undefined,
      seller: row[at + 2] ? TN.row(row, W.width + C.width) : undefined,
      paused: row[at + 3] === true,
      nonceUsed: row[at + 4] === true,
    };
  }
}
