import type { Approval, ApprovalStatus, Policy } from '../repos/policies.js';
import type { Sql } from './sql.js';

/**
 * The order policies apply in: by when they were applied, then in the order their rows were
 * inserted (rowid: SQLite's own, PostgreSQL's identity column of drizzle-pg/0001; policies are
 * never deleted, and one apply inserts a document's sections in document order), so documents
 * applied in the same millisecond keep their apply order. Not `ordinal`: it restarts at 0 in
 * each document.
 */
const APPLY_ORDER = 'ORDER BY created_at, rowid';

export class Policies {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('policies'); }
  insert(p: Policy) { return this.t.insert(p); }
  get(id: string) { return this.t.first({ id }); }
  /** a workspace's policies, disabled ones included, in the order they apply */
  listByWorkspace(workspaceId: string) { return this.t.all({ workspaceId }, APPLY_ORDER); }
  /** the enabled ones, in the order they apply; on the hot path of every authorization */
  listEnabled(workspaceId: string) { return this.t.all({ workspaceId, enabled: true }, APPLY_ORDER); }
  /** the enabled ones of the workspace that owns the wallet, in the order they apply (none: no such wallet) */
  listEnabledOfWallet(walletId: string) {
    return this.t.select(`WHERE workspace_id = (SELECT tenant_id FROM wallets WHERE id = ?) AND enabled = ? ${APPLY_ORDER}`, [walletId, true]);
  }
  async update(id: string, patch: Partial<Pick<Policy, 'enabled' | 'updatedAt'>>) { await this.t.update({ id }, patch); }
}

export class Approvals {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('approvals'); }
  insert(a: Approval) { return this.t.insert(a); }
  get(id: string) { return this.t.first({ id }); }
  /** newest first */
  listByWorkspace(workspaceId: string, status?: ApprovalStatus) {
    return this.t.all(status ? { workspaceId, status } : { workspaceId }, 'ORDER BY created_at DESC, rowid DESC');
  }
  /** a wallet's approvals of a capability in one status, oldest first */
  forPurchase(walletId: string, capabilityId: string, status: ApprovalStatus) {
    return this.t.all({ walletId, capabilityId, status }, 'ORDER BY created_at, rowid');
  }
  /** pending -> approved or denied; false if it was no longer pending (a concurrent resolution won) */
  async resolve(id: string, patch: Pick<Approval, 'status' | 'resolvedBy' | 'resolvedAt'>) {
    return (await this.t.update({ id, status: 'pending' }, patch)) > 0;
  }
  /**
   * Marks an approved approval used by the purchase `transactionId`; false if it was used
   * already. `takeOverFrom` is the transaction that holds it now, when that purchase is a
   * refund due (see refundDue); null for an unused one.
   */
  async use(id: string, usedAt: number, transactionId: string, takeOverFrom: string | null) {
    const free = takeOverFrom === null ? { usedAt: null } : { usedByTransactionId: takeOverFrom };
    return (await this.t.update({ id, status: 'approved', ...free }, { usedAt, usedByTransactionId: transactionId })) > 0;
  }
  /**
   * The refund of `transactionId` gives its approval back (unused again); false if that
   * purchase used none. One indexed update, on every refund: through the partial index
   * approvals_used_by.
   */
  async giveBack(transactionId: string) {
    return (await this.t.update({ usedByTransactionId: transactionId }, { usedAt: null, usedByTransactionId: null })) > 0;
  }
  /**
   * A wallet's approved approvals of a capability used by a purchase that is past its
   * in-flight time at `now` and not refunded yet: refunds due, as the balance check and the
   * budgets treat them, so they cover the next purchase before the sweeper runs.
   */
  async refundDue(walletId: string, capabilityId: string, now: number) {
    const rows = await this.c.rows(`SELECT ${this.t.columns('a')} FROM approvals a JOIN transactions t ON t.id = a.used_by_transaction_id
      WHERE a.wallet_id = ? AND a.capability_id = ? AND a.status = 'approved' AND t.status = 'authorized' AND t.expires_at <= ?
      ORDER BY a.created_at, a.rowid`, [walletId, capabilityId, now]);
    return rows.map((r) => this.t.row(r));
  }
}

/**
 * The spend of a budget day: holds placed in the window, plus the (negative) refunds and
 * releases of those same holds, less the holds of calls past their in-flight time at `now`
 * that the sweeper has not refunded yet (the transaction is still `authorized`): those are
 * refunds due, as the balance check treats them (expireOverdueOf), so they count as given back
 * from the moment they expire. Read through the partial index `ledger_holds` (a wallet's
 * holds by time), so it visits that day's holds, not the wallet's whole history; each hold
 * looks its transaction up by primary key. Its values: the filter's, then from, to, now.
 */
export function spendQuery(walletFilter: string): string {
  return `SELECT coalesce(sum(h.hold_minor), 0) + coalesce(sum(r.hold_minor), 0)
      FROM ledger_entries h
      LEFT JOIN ledger_entries r
        ON r.transaction_id = h.transaction_id AND r.wallet_id = h.wallet_id AND r.type IN ('refund', 'release')
      WHERE ${walletFilter} AND h.type = 'hold' AND h.created_at >= ? AND h.created_at < ?
        AND NOT EXISTS (
          SELECT 1 FROM transactions t
          WHERE t.id = h.transaction_id AND t.status = 'authorized' AND t.expires_at <= ?)`;
}

export const WALLET_IS = 'h.wallet_id = ?';
export const WORKSPACE_IS = 'h.wallet_id IN (SELECT id FROM wallets WHERE tenant_id = ?)';
const BY_WALLET = spendQuery(WALLET_IS);
const BY_WORKSPACE = spendQuery(WORKSPACE_IS);

/**
 * What was spent, read from the ledger: the amounts of purchases authorized (held) in
 * [from, to), less what of them was given back (refunded or released) and less the calls
 * past their in-flight time at `now` that are not refunded yet (a refund due). A purchase
 * counts on the day it was authorized, whether still held or captured since.
 */
export class Spend {
  constructor(private readonly c: Sql) {}
  private async spent(query: string, id: string, from: number, to: number, now: number): Promise<bigint> {
    const row = await this.c.one(query, [id, from, to, now]);
    return BigInt((row?.[0] ?? 0) as bigint | string | number);
  }
  byWallet(walletId: string, from: number, to: number, now: number) {
    return this.spent(BY_WALLET, walletId, from, to, now);
  }
  /** over every wallet of the workspace */
  async byWorkspace(workspaceId: string, from: number, to: number, now: number) {
    // PostgreSQL: two purchases on two wallets of one workspace could both pass a workspace budget
    // (neither sees the other's hold: write skew). A no-op write of the workspace's row makes them
    // queue: the second waits for the first and reads its hold. (Row locks: Sql.rowLocks.)
    if (this.c.rowLocks) await this.c.run('UPDATE tenants SET updated_at = updated_at WHERE id = ?', [workspaceId]);
    return this.spent(BY_WORKSPACE, workspaceId, from, to, now);
  }
}
