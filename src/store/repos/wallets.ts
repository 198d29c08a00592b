import type { wallets, ledgerEntries } from '../schema/index.js';

export type Wallet = typeof wallets.$inferSelect;
export type LedgerEntry = typeof ledgerEntries.$inferSelect;
/** A ledger entry the store places itself: at the wallet's next seq, its running sums extended. */
export type Placement = Omit<LedgerEntry, 'seq' | 'balanceAfter' | 'heldAfter'>;

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
   * Appends a movement after the wallet's last entry, placed by the store: `seq` and the running
   * sums are the last entry's extended by `amountMinor` and `holdMinor`, read and written in one
   * step, so a busy wallet is held for that step alone (PostgreSQL: one statement, no round trip
   * between locking the wallet and writing). Refused, failing the transaction, when it would leave
   * the balance, the held or the available amount negative (MovementRefused). For movements the
   * caller need not check first: a sale, a fee, the capture of a hold, a hold the store refuses
   * when the wallet cannot cover it.
   */
  place(e: Placement): Promise<void>;
  /** Places each movement as `place` does, in the order given (PostgreSQL: one statement for all). */
  placeAll(es: Placement[]): Promise<void>;
  /** Entries oldest first; `afterSeq` pages on. */
  list(walletId: string, opts?: { afterSeq?: number; limit?: number }): Promise<LedgerEntry[]>;
  byTransaction(transactionId: string): Promise<LedgerEntry[]>;
}
