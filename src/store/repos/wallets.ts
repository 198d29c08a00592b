import type { wallets, ledgerEntries, ledgerCheckpoints } from '../schema/index.js';

export type Wallet = typeof wallets.$inferSelect;
export type LedgerEntry = typeof ledgerEntries.$inferSelect;
/** A ledger entry the store places itself: at the wallet's next seq, its running sums extended, its hash linked to the head's. */
export type Placement = Omit<LedgerEntry, 'seq' | 'balanceAfter' | 'heldAfter' | 'hash'>;
/** Where a wallet's chain ends: its last entry's seq and hash. */
export interface LedgerHead { walletId: string; seq: number; hash: string | null }
export type LedgerCheckpoint = typeof ledgerCheckpoints.$inferSelect;

export interface WalletRepo {
  insert(w: Wallet): Promise<void>;
  get(id: string): Promise<Wallet | undefined>;
  listByTenant(tenantId: string): Promise<Wallet[]>;
  update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>): Promise<void>;
}

export interface LedgerRepo {
  /**
   * The wallet's newest entry: its running sums are the balance and the held amount. Inside a
   * write transaction it holds the wallet first (PostgreSQL: its turn in this process, or its row
   * lock; ../pg/ledger-heads.ts), so what is decided on it holds until the commit.
   */
  last(walletId: string): Promise<LedgerEntry | undefined>;
  /**
   * The only way into the ledger. Each movement, in the order given, is placed after its wallet's
   * last entry under the wallet's lock, by the one rule of src/store/ledger-chain.ts (`placeAfter`):
   * `seq` and the running sums extended, refused with MovementRefused (nothing appended, the
   * database transaction intact) when a sum would go negative. Returns the entries appended.
   * How many round trips that takes is the store's business (PostgreSQL: none for a wallet whose
   * head this process keeps, else the heads of the wallets not yet held read in one statement; the
   * entries sent with their wallets' row locks and the COMMIT).
   */
  place(ps: Placement[]): Promise<LedgerEntry[]>;
  /** Entries oldest first; `afterSeq` pages on. */
  list(walletId: string, opts?: { afterSeq?: number; limit?: number }): Promise<LedgerEntry[]>;
  byTransaction(transactionId: string): Promise<LedgerEntry[]>;
  /** The head of every wallet's chain that has an entry, by wallet id. */
  heads(): Promise<LedgerHead[]>;
  /** Wallets with an entry that has no hash yet (written before the chain existed). */
  unsealedWallets(): Promise<string[]>;
  /** Sets the hash of an entry that has none (src/store/ledger-chain.ts sealLedger; the triggers refuse any other update). */
  seal(id: string, hash: string): Promise<void>;
}

/** Signed checkpoints of the chains' heads, append-only. */
export interface LedgerCheckpointRepo {
  insert(c: LedgerCheckpoint): Promise<void>;
  /** Newest first; `before`: older than this one (paging). */
  list(opts: { limit: number; before?: { createdAt: number; id: string } }): Promise<LedgerCheckpoint[]>;
  get(id: string): Promise<LedgerCheckpoint | undefined>;
}
