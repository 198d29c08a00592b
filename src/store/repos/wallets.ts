import type { wallets, ledgerEntries } from '../schema/index.js';

export type Wallet = typeof wallets.$inferSelect;
export type LedgerEntry = typeof ledgerEntries.$inferSelect;

export interface WalletRepo {
  insert(w: Wallet): Promise<void>;
  get(id: string): Promise<Wallet | undefined>;
  listByTenant(tenantId: string): Promise<Wallet[]>;
  update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>): Promise<void>;
}

export interface LedgerRepo {
  /** The wallet's newest entry: its running sums are the balance and the held amount. */
  last(walletId: string): Promise<LedgerEntry | undefined>;
  append(e: LedgerEntry): Promise<void>;
  /** Entries oldest first; `afterSeq` pages on. */
  list(walletId: string, opts?: { afterSeq?: number; limit?: number }): Promise<LedgerEntry[]>;
  byTransaction(transactionId: string): Promise<LedgerEntry[]>;
}
