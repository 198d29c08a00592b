import { and, asc, desc, eq, getTableColumns, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { policies, approvals, transactions, wallets } from '../schema/index.js';
import type { Approval, ApprovalRepo, ApprovalStatus, Policy, PolicyRepo, SpendRepo } from '../repos/policies.js';
import { statementsFor, type TableStatements } from './statements.js';

type Db = BetterSQLite3Database;

/**
 * The order policies apply in: by when they were applied, then in the order their rows were
 * inserted (rowid: policies are never deleted, and one apply inserts a document's sections in
 * document order), so documents applied in the same millisecond keep their apply order. Not
 * `ordinal`: it restarts at 0 in each document.
 */
const applyOrder = [asc(policies.createdAt), asc(sql`rowid`)];

export class SqlitePolicies implements PolicyRepo {
  private readonly s: TableStatements<typeof policies>;
  private readonly wallets: TableStatements<typeof wallets>;
  constructor(private db: Db) {
    this.s = statementsFor(db, policies);
    this.wallets = statementsFor(db, wallets);
  }
  async insert(p: Policy) { this.db.insert(policies).values(p).run(); }
  async get(id: string) { return this.db.select().from(policies).where(eq(policies.id, id)).get(); }
  async listByWorkspace(workspaceId: string) {
    return this.db.select().from(policies).where(eq(policies.workspaceId, workspaceId)).orderBy(...applyOrder).all();
  }
  async listEnabled(workspaceId: string) {
    // the same order as applyOrder, on the hot path of every authorization
    return this.s.all({ workspaceId, enabled: true }, 'ORDER BY "created_at", rowid');
  }
  async listEnabledOfWallet(walletId: string) {
    const w = this.wallets.first({ id: walletId });
    return w ? this.listEnabled(w.tenantId) : [];
  }
  async update(id: string, patch: Partial<Pick<Policy, 'enabled' | 'updatedAt'>>) { this.db.update(policies).set(patch).where(eq(policies.id, id)).run(); }
}

export class SqliteApprovals implements ApprovalRepo {
  private readonly s: TableStatements<typeof approvals>;
  constructor(private db: Db) { this.s = statementsFor(db, approvals); }
  async insert(a: Approval) { this.db.insert(approvals).values(a).run(); }
  async get(id: string) { return this.db.select().from(approvals).where(eq(approvals.id, id)).get(); }
  async listByWorkspace(workspaceId: string, status?: ApprovalStatus) {
    const where = status ? and(eq(approvals.workspaceId, workspaceId), eq(approvals.status, status)) : eq(approvals.workspaceId, workspaceId);
    return this.db.select().from(approvals).where(where).orderBy(desc(approvals.createdAt), desc(sql`rowid`)).all();
  }
  async forPurchase(walletId: string, capabilityId: string, status: ApprovalStatus) {
    return this.db.select().from(approvals)
      .where(and(eq(approvals.walletId, walletId), eq(approvals.capabilityId, capabilityId), eq(approvals.status, status)))
      .orderBy(asc(approvals.createdAt), asc(sql`rowid`)).all();
  }
  async resolve(id: string, patch: Pick<Approval, 'status' | 'resolvedBy' | 'resolvedAt'>) {
    return this.db.update(approvals).set(patch).where(and(eq(approvals.id, id), eq(approvals.status, 'pending'))).run().changes > 0;
  }
  async use(id: string, usedAt: number, transactionId: string, takeOverFrom: string | null) {
    const free = takeOverFrom === null ? isNull(approvals.usedAt) : eq(approvals.usedByTransactionId, takeOverFrom);
    return this.db.update(approvals).set({ usedAt, usedByTransactionId: transactionId })
      .where(and(eq(approvals.id, id), eq(approvals.status, 'approved'), free)).run().changes > 0;
  }
  async giveBack(transactionId: string) {
    // on every refund: a cached statement through the partial index approvals_used_by
    return this.s.update({ usedByTransactionId: transactionId }, { usedAt: null, usedByTransactionId: null }) > 0;
  }
  async refundDue(walletId: string, capabilityId: string, now: number) {
    return this.db.select(getTableColumns(approvals)).from(approvals)
      .innerJoin(transactions, eq(transactions.id, approvals.usedByTransactionId))
      .where(and(
        eq(approvals.walletId, walletId), eq(approvals.capabilityId, capabilityId), eq(approvals.status, 'approved'),
        eq(transactions.status, 'authorized'), lte(transactions.expiresAt, now),
      ))
      .orderBy(asc(approvals.createdAt), asc(sql`approvals.rowid`)).all();
  }
}

/**
 * The spend of a budget day: holds placed in the window, plus the (negative) refunds and
 * releases of those same holds, less the holds of calls past their in-flight time at `now`
 * that the sweeper has not refunded yet (the transaction is still `authorized`): those are
 * refunds due, as the balance check treats them (expireOverdueOf), so they count as given back
 * from the moment they expire. Read through the partial index `ledger_holds` (a wallet's
 * holds by time), so it visits that day's holds, not the wallet's whole history; each hold
 * looks its transaction up by primary key.
 */
export function spendQuery(walletFilter: SQL, from: number, to: number, now: number): SQL {
  return sql`
      SELECT coalesce(sum(h.hold_minor), 0) + coalesce(sum(r.hold_minor), 0) AS spent
      FROM ledger_entries h
      LEFT JOIN ledger_entries r
        ON r.transaction_id = h.transaction_id AND r.wallet_id = h.wallet_id AND r.type IN ('refund', 'release')
      WHERE ${walletFilter} AND h.type = 'hold' AND h.created_at >= ${from} AND h.created_at < ${to}
        AND NOT EXISTS (
          SELECT 1 FROM transactions t
          WHERE t.id = h.transaction_id AND t.status = 'authorized' AND t.expires_at <= ${now})`;
}

export const walletIs = (walletId: string) => sql`h.wallet_id = ${walletId}`;
export const workspaceIs = (workspaceId: string) => sql`h.wallet_id IN (SELECT id FROM wallets WHERE tenant_id = ${workspaceId})`;

export class SqliteSpend implements SpendRepo {
  constructor(private db: Db) {}
  private spent(walletFilter: SQL, from: number, to: number, now: number): bigint {
    const row = this.db.get<{ spent: bigint | number }>(spendQuery(walletFilter, from, to, now));
    return BigInt(row?.spent ?? 0);
  }
  async byWallet(walletId: string, from: number, to: number, now: number) {
    return this.spent(walletIs(walletId), from, to, now);
  }
  async byWorkspace(workspaceId: string, from: number, to: number, now: number) {
    return this.spent(workspaceIs(workspaceId), from, to, now);
  }
}
