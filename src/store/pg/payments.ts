import { and, asc, desc, eq, lt, lte, or } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { transactions, receipts, breakers } from '../schema-pg/index.js';
import type { Transaction, TransactionRepo, Receipt, ReceiptRepo, Breaker, BreakerRepo } from '../repos/payments.js';

type Db = NodePgDatabase;

export class PgTransactions implements TransactionRepo {
  constructor(private db: Db) {}
  async insert(t: Transaction) { await this.db.insert(transactions).values(t); }
  async get(id: string) { return (await this.db.select().from(transactions).where(eq(transactions.id, id)))[0]; }
  async byNonce(nonce: string) { return (await this.db.select().from(transactions).where(eq(transactions.nonce, nonce)))[0]; }
  async update(id: string, patch: Partial<Pick<Transaction, 'status' | 'failureReason' | 'resolvedAt' | 'feeMinor'>>) {
    await this.db.update(transactions).set(patch).where(eq(transactions.id, id));
  }
  async listExpired(now: number, limit: number, walletId?: string) {
    const overdue = and(eq(transactions.status, 'authorized'), lte(transactions.expiresAt, now));
    return this.db.select().from(transactions).where(walletId === undefined ? overdue : and(overdue, eq(transactions.walletId, walletId)))
      .orderBy(asc(transactions.expiresAt), asc(transactions.id)).limit(limit);
  }
}

export class PgReceipts implements ReceiptRepo {
  constructor(private db: Db) {}
  async insert(r: Receipt) { await this.db.insert(receipts).values(r); }
  async get(id: string) { return (await this.db.select().from(receipts).where(eq(receipts.id, id)))[0]; }
  async byTransaction(transactionId: string) {
    return this.db.select().from(receipts).where(eq(receipts.transactionId, transactionId)).orderBy(asc(receipts.timestamp), asc(receipts.id));
  }
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
  constructor(private db: Db) {}
  async get(walletId: string, providerId: string) {
    return (await this.db.select().from(breakers).where(and(eq(breakers.walletId, walletId), eq(breakers.providerId, providerId))))[0];
  }
  async put(b: Breaker) {
    await this.db.insert(breakers).values(b).onConflictDoUpdate({
      target: [breakers.walletId, breakers.providerId],
      set: { consecutiveFailures: b.consecutiveFailures, paused: b.paused, updatedAt: b.updatedAt },
    });
  }
}
