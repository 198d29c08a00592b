import { and, asc, desc, eq, gt, inArray, lt, lte, or } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { transactions, receipts, breakers, paymentIdempotency } from '../schema/index.js';
import type { Transaction, TransactionRepo, Receipt, ReceiptRepo, Breaker, BreakerRepo, PaymentIdempotency, PaymentIdempotencyRepo, PurchaseFactsRepo } from '../repos/payments.js';
import type { Repos } from '../store.js';
import { AlreadyResolved, storeError } from '../errors.js';
import { statementsFor, type TableStatements } from './statements.js';

type Db = BetterSQLite3Database;

export class SqliteTransactions implements TransactionRepo {
  private readonly s: TableStatements<typeof transactions>;
  constructor(private db: Db) { this.s = statementsFor(db, transactions); }
  async insert(t: Transaction) {
    try {
      this.s.insert(t);
    } catch (e) {
      // a reused nonce: the domain tells it apart as a replay (src/store/errors.ts)
      throw storeError(e);
    }
  }
  async get(id: string) { return this.s.first({ id }); }
  async byNonce(nonce: string) { return this.s.first({ nonce }); }
  async update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>) {
    this.s.update({ id }, patch);
  }
  async resolve(id: string, patch: Pick<Transaction, 'status' | 'resolvedAt'> & Partial<Pick<Transaction, 'failureReason' | 'feeMinor'>>) {
    // the store's transactions are serialised: a read and an update are one step
    if (this.s.first({ id })?.status !== 'authorized') throw new AlreadyResolved(`transaction ${id} is not authorized any more: it was resolved first`);
    this.s.update({ id }, patch);
  }
  async page(opts: { afterId?: string; limit: number }) {
    return this.db.select().from(transactions).where(opts.afterId === undefined ? undefined : gt(transactions.id, opts.afterId)).orderBy(asc(transactions.id)).limit(opts.limit).all();
  }
  async listExpired(now: number, limit: number, walletId?: string) {
    // transactions_open (status, expires_at) bounds the scan to what is overdue; the wallet is a filter on that
    const overdue = and(eq(transactions.status, 'authorized'), lte(transactions.expiresAt, now));
    return this.db.select().from(transactions).where(walletId === undefined ? overdue : and(overdue, eq(transactions.walletId, walletId)))
      .orderBy(asc(transactions.expiresAt)).limit(limit).all();
  }
}

export class SqliteReceipts implements ReceiptRepo {
  private readonly s: TableStatements<typeof receipts>;
  constructor(private db: Db) { this.s = statementsFor(db, receipts); }
  async insert(r: Receipt) { this.s.insert(r); }
  async get(id: string) { return this.s.first({ id }); }
  async byTransaction(transactionId: string) {
    return this.db.select().from(receipts).where(eq(receipts.transactionId, transactionId)).orderBy(asc(receipts.timestamp), asc(receipts.id)).all();
  }
  async list(owner: { workspaceId: string } | { providerId: string }, opts: { limit: number; before?: { timestamp: number; id: string } }) {
    const ownerCond = 'workspaceId' in owner ? eq(receipts.workspaceId, owner.workspaceId) : eq(receipts.providerId, owner.providerId);
    const b = opts.before;
    const where = b
      ? and(ownerCond, or(lt(receipts.timestamp, b.timestamp), and(eq(receipts.timestamp, b.timestamp), lt(receipts.id, b.id))))
      : ownerCond;
    return this.db.select().from(receipts).where(where).orderBy(desc(receipts.timestamp), desc(receipts.id)).limit(opts.limit).all();
  }
}

export class SqliteBreakers implements BreakerRepo {
  private readonly s: TableStatements<typeof breakers>;
  constructor(private db: Db) { this.s = statementsFor(db, breakers); }
  async get(walletId: string, providerId: string) { return this.s.first({ walletId, providerId }); }
  async put(b: Breaker) {
    this.db.insert(breakers).values(b).onConflictDoUpdate({
      target: [breakers.walletId, breakers.providerId],
      set: { consecutiveFailures: b.consecutiveFailures, paused: b.paused, updatedAt: b.updatedAt },
    }).run();
  }
  async clearFailures(walletId: string, providerId: string, at: number) {
    // in process, a read is cheaper than an UPDATE that finds nothing to change (the common case)
    const b = this.s.first({ walletId, providerId });
    if (b && b.consecutiveFailures !== 0) this.s.update({ walletId, providerId }, { consecutiveFailures: 0, updatedAt: at });
  }
}

export class SqlitePaymentIdempotency implements PaymentIdempotencyRepo {
  private readonly s: TableStatements<typeof paymentIdempotency>;
  constructor(private db: Db) { this.s = statementsFor(db, paymentIdempotency); }
  async get(walletId: string, capabilityId: string, key: string) { return this.s.first({ walletId, capabilityId, key }); }
  async insert(row: PaymentIdempotency) {
    try {
      this.s.insert(row);
    } catch (e) {
      throw storeError(e);
    }
  }
  async byTransaction(transactionId: string) { return this.s.first({ transactionId }); }
  async complete(transactionId: string, response: { status: number; contentType: string | null; body: string } | null) {
    this.s.update({ transactionId }, {
      state: 'completed',
      responseStatus: response?.status ?? null,
      responseContentType: response?.contentType ?? null,
      responseBody: response?.body ?? null,
    });
  }
  async remove(walletId: string, capabilityId: string, key: string) {
    this.db.delete(paymentIdempotency).where(and(eq(paymentIdempotency.walletId, walletId), eq(paymentIdempotency.capabilityId, capabilityId), eq(paymentIdempotency.key, key))).run();
  }
  async removeByTransaction(transactionId: string) {
    this.db.delete(paymentIdempotency).where(eq(paymentIdempotency.transactionId, transactionId)).run();
  }
  async removeExpired(now: number, limit: number) {
    const ids = this.db.select({ t: paymentIdempotency.transactionId }).from(paymentIdempotency)
      .where(lte(paymentIdempotency.expiresAt, now)).orderBy(asc(paymentIdempotency.expiresAt)).limit(limit).all().map((r) => r.t);
    if (ids.length === 0) return 0;
    return this.db.delete(paymentIdempotency).where(inArray(paymentIdempotency.transactionId, ids)).run().changes;
  }
}

/** The checks' reads through the other repositories: in-process statements, nothing to save by joining them. */
export class SqlitePurchaseFacts implements PurchaseFactsRepo {
  constructor(private r: Pick<Repos, 'transactions' | 'wallets' | 'breakers' | 'capabilities' | 'tenants'>) {}
  async read(q: { nonce: string; walletId: string; capabilityId: string; providerId: string }) {
    const r = this.r;
    return {
      nonceUsed: (await r.transactions.byNonce(q.nonce)) !== undefined,
      wallet: await r.wallets.get(q.walletId),
      paused: (await r.breakers.get(q.walletId, q.providerId))?.paused ?? false,
      capability: await r.capabilities.get(q.capabilityId),
      seller: await r.tenants.get(q.providerId),
    };
  }
}
