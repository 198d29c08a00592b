import { and, asc, desc, eq, inArray, lt, lte, or } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { transactions, receipts, breakers, paymentIdempotency } from '../schema-pg/index.js';
import type { Transaction, TransactionRepo, Receipt, ReceiptRepo, Breaker, BreakerRepo, PaymentIdempotency, PaymentIdempotencyRepo } from '../repos/payments.js';

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

/** a function, not a method: pg-store wraps every repository method into an async one */
const keyIs = (walletId: string, capabilityId: string, key: string) =>
  and(eq(paymentIdempotency.walletId, walletId), eq(paymentIdempotency.capabilityId, capabilityId), eq(paymentIdempotency.key, key));

export class PgPaymentIdempotency implements PaymentIdempotencyRepo {
  constructor(private db: Db) {}
  async get(walletId: string, capabilityId: string, key: string) {
    return (await this.db.select().from(paymentIdempotency).where(keyIs(walletId, capabilityId, key)))[0];
  }
  async insert(row: PaymentIdempotency) { await this.db.insert(paymentIdempotency).values(row); }
  async byTransaction(transactionId: string) {
    return (await this.db.select().from(paymentIdempotency).where(eq(paymentIdempotency.transactionId, transactionId)))[0];
  }
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
