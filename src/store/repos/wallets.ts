import type { wallets, ledgerEntries } from '../schema/index.js';

export type Wallet = typeof wallets.$inferSelect;
export type LedgerEntry = typeof ledgerEntries.$inferSelect;
/** A ledger entry the store places itself: at the wallet's next seq, its running sums extended. */
export type Credit = Omit<LedgerEntry, 'seq' | 'holdMinor' | 'balanceAfter' | 'heldAfter'>;

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
  /**
   * Appends a credit after the wallet's last entry: `seq` and the running sums are the last
   * entry's extended by `amountMinor` (no hold). For movements nothing can refuse (a sale, a
   * fee): the store reads the head and appends in one step, so a busy wallet is held for that
   * step alone (PostgreSQL: one statement, no round trip between locking the wallet and writing).
   */
  credit(e: Credit): Promise<void>;
  /** Entries oldest first; `afterSeq` pages on. */
  list(walletId: string, opts?: { afterSeq?: number; limit?: number }): Promise<LedgerEntry[]>;
  byTransaction(transactionId: string): Promise<LedgerEntry[]>;
}
