import type { policies, approvals } from '../schema/index.js';

export type Policy = typeof policies.$inferSelect;
export type Approval = typeof approvals.$inferSelect;
export type ApprovalStatus = Approval['status'];

export interface PolicyRepo {
  insert(p: Policy): Promise<void>;
  get(id: string): Promise<Policy | undefined>;
  /** a workspace's policies, disabled ones included, in the order they apply */
  listByWorkspace(workspaceId: string): Promise<Policy[]>;
  /** the enabled ones, in the order they apply */
  listEnabled(workspaceId: string): Promise<Policy[]>;
  /** the enabled ones of the workspace that owns the wallet, in the order they apply (none: no such wallet) */
  listEnabledOfWallet(walletId: string): Promise<Policy[]>;
  update(id: string, patch: Partial<Pick<Policy, 'enabled' | 'updatedAt'>>): Promise<void>;
}

export interface ApprovalRepo {
  insert(a: Approval): Promise<void>;
  get(id: string): Promise<Approval | undefined>;
  /** newest first */
  listByWorkspace(workspaceId: string, status?: ApprovalStatus): Promise<Approval[]>;
  /** a wallet's approvals of a capability in one status, oldest first */
  forPurchase(walletId: string, capabilityId: string, status: ApprovalStatus): Promise<Approval[]>;
  /** pending -> approved or denied; false if it was no longer pending (a concurrent resolution won) */
  resolve(id: string, patch: Pick<Approval, 'status' | 'resolvedBy' | 'resolvedAt'>): Promise<boolean>;
  /**
   * Marks an approved approval used by the purchase `transactionId`; false if it was used
   * already. `takeOverFrom` is the transaction that holds it now, when that purchase is a
   * refund due (see refundDue); null for an unused one.
   */
  use(id: string, usedAt: number, transactionId: string, takeOverFrom: string | null): Promise<boolean>;
  /**
   * The refund of `transactionId` gives its approval back (unused again); false if that
   * purchase used none. One indexed update.
   */
  giveBack(transactionId: string): Promise<boolean>;
  /**
   * A wallet's approved approvals of a capability used by a purchase that is past its
   * in-flight time at `now` and not refunded yet: refunds due, as the balance check and the
   * budgets treat them, so they cover the next purchase before the sweeper runs.
   */
  refundDue(walletId: string, capabilityId: string, now: number): Promise<Approval[]>;
}

/**
 * What was spent, read from the ledger: the amounts of purchases authorized (held) in
 * [from, to), less what of them was given back (refunded or released) and less the calls
 * past their in-flight time at `now` that are not refunded yet (a refund due). A purchase
 * counts on the day it was authorized, whether still held or captured since.
 */
export interface SpendRepo {
  byWallet(walletId: string, from: number, to: number, now: number): Promise<bigint>;
  /** over every wallet of the workspace */
  byWorkspace(workspaceId: string, from: number, to: number, now: number): Promise<bigint>;
}
