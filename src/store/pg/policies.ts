import { and, asc, desc, eq, getTableColumns, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { policies, approvals, transactions } from '../schema-pg/index.js';
import type { Approval, ApprovalRepo, ApprovalStatus, Policy, PolicyRepo, SpendRepo } from '../repos/policies.js';
import { run, TableSql, type Session } from './sql.js';

type Db = NodePgDatabase;

const P = new TableSql<Policy>(policies);
const ENABLED = `SELECT ${P.columns} FROM policies WHERE workspace_id = $1 AND enabled = true ORDER BY created_at, rowid`;
const ENABLED_OF_WALLET = `SELECT ${P.columns} FROM policies WHERE workspace_id = (SELECT tenant_id FROM wallets WHERE id = $1) AND enabled = true ORDER BY created_at, rowid`;

/** The order policies apply in (see src/store/sqlite/policies.ts): when applied, then insertion order (the rowid column). */
const applyOrder = [asc(policies.createdAt), asc(sql`policies.rowid`)];

export class PgPolicies implements PolicyRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(p: Policy) { await this.db.insert(policies).values(p); }
  async get(id: string) { return (await this.db.select().from(policies).where(eq(policies.id, id)))[0]; }
  async listByWorkspace(workspaceId: string) {
    return this.db.select().from(policies).where(eq(policies.workspaceId, workspaceId)).orderBy(...applyOrder);
  }
  async listEnabled(workspaceId: string) { return P.all(await run(this.s, 'policies_enabled', ENABLED, [workspaceId])); }
  async listEnabledOfWallet(walletId: string) { return P.all(await run(this.s, 'policies_enabled_of_wallet', ENABLED_OF_WALLET, [walletId])); }
  async update(id: string, patch: Partial<Pick<Policy, 'enabled' | 'updatedAt'>>) { await this.db.update(policies).set(patch).where(eq(policies.id, id)); }
}

export class PgApprovals implements ApprovalRepo {
  constructor(private db: Db) {}
  async insert(a: Approval) { await this.db.insert(approvals).values(a); }
  async get(id: string) { return (await this.db.select().from(approvals).where(eq(approvals.id, id)))[0]; }
  async listByWorkspace(workspaceId: string, status?: ApprovalStatus) {
    const where = status ? and(eq(approvals.workspaceId, workspaceId), eq(approvals.status, status)) : eq(approvals.workspaceId, workspaceId);
    return this.db.select().from(approvals).where(where).orderBy(desc(approvals.createdAt), desc(sql`approvals.rowid`));
  }
  async forPurchase(walletId: string, capabilityId: string, status: ApprovalStatus) {
    return this.db.select().from(approvals)
      .where(and(eq(approvals.walletId, walletId), eq(approvals.capabilityId, capabilityId), eq(approvals.status, status)))
      .orderBy(asc(approvals.createdAt), asc(sql`approvals.rowid`));
  }
  async resolve(id: string, patch: Pick<Approval, 'status' | 'resolvedBy' | 'resolvedAt'>) {
    const r = await this.db.update(approvals).set(patch).where(and(eq(approvals.id, id), eq(approvals.status, 'pending')));
    return (r.rowCount ?? 0) > 0;
  }
  async use(id: string, usedAt: number, transactionId: string, takeOverFrom: string | null) {
    const free = takeOverFrom === null ? isNull(approvals.usedAt) : eq(approvals.usedByTransactionId, takeOverFrom);
    const r = await this.db.update(approvals).set({ usedAt, usedByTransactionId: transactionId })
      .where(and(eq(approvals.id, id), eq(approvals.status, 'approved'), free));
    return (r.rowCount ?? 0) > 0;
  }
  async giveBack(transactionId: string) {
    const r = await this.db.update(approvals).set({ usedAt: null, usedByTransactionId: null }).where(eq(approvals.usedByTransactionId, transactionId));
    return (r.rowCount ?? 0) > 0;
  }
  async refundDue(walletId: string, capabilityId: string, now: number) {
    return this.db.select(getTableColumns(approvals)).from(approvals)
      .innerJoin(transactions, eq(transactions.id, approvals.usedByTransactionId))
      .where(and(
        eq(approvals.walletId, walletId), eq(approvals.capabilityId, capabilityId), eq(approvals.status, 'approved'),
        eq(transactions.status, 'authorized'), lte(transactions.expiresAt, now),
      ))
      .orderBy(asc(approvals.createdAt), asc(sql`approvals.rowid`));
  }
}

/** The same query as SQLite's (src/store/sqlite/policies.ts spendQuery: read its note). */
function spendQuery(walletFilter: SQL, from: number, to: number, now: number): SQL {
  return sql`
      SELECT (coalesce(sum(h.hold_minor), 0) + coalesce(sum(r.hold_minor), 0))::text AS spent
      FROM ledger_entries h
      LEFT JOIN ledger_entries r
        ON r.transaction_id = h.transaction_id AND r.wallet_id = h.wallet_id AND r.type IN ('refund', 'release')
      WHERE ${walletFilter} AND h.type = 'hold' AND h.created_at >= ${from} AND h.created_at < ${to}
        AND NOT EXISTS (
          SELECT 1 FROM transactions t
          WHERE t.id = h.transaction_id AND t.status = 'authorized' AND t.expires_at <= ${now})`;
}

export class PgSpend implements SpendRepo {
  constructor(private db: Db, private s: Session) {}
  private async spent(walletFilter: SQL, from: number, to: number, now: number): Promise<bigint> {
    const r = await this.db.execute<{ spent: string | null }>(spendQuery(walletFilter, from, to, now));
    return BigInt(r.rows[0]?.spent ?? 0);
  }
  async byWallet(walletId: string, from: number, to: number, now: number) {
    return this.spent(sql`h.wallet_id = ${walletId}`, from, to, now);
  }
  async byWorkspace(workspaceId: string, from: number, to: number, now: number) {
    // Snapshot isolation lets two purchases on two wallets of one workspace both pass a workspace
    // budget (neither sees the other's hold: write skew). A no-op write of the workspace's row
    // makes them collide: the second waits for the first and is retried after it, seeing its hold.
    if (this.s.writable) await this.db.execute(sql`UPDATE tenants SET updated_at = updated_at WHERE id = ${workspaceId}`);
    return this.spent(sql`h.wallet_id IN (SELECT id FROM wallets WHERE tenant_id = ${workspaceId})`, from, to, now);
  }
}
