import { and, asc, desc, eq, lt, lte, or } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { transactions, receipts, breakers } from '../schema/index.js';
import type { Transaction, TransactionRepo, Receipt, ReceiptRepo, Breaker, BreakerRepo } from '../repos/payments.js';
import { storeError } from '../errors.js';
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
}
