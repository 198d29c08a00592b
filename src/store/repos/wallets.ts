import type { wallets, ledgerEntries, ledgerCheckpoints } from '../schema/index.js';

export type Wallet = typeof wallets.$inferSelect;
export type LedgerEntry = typeof ledgerEntries.$inferSelect;
/** A ledger entry the store places itself: at the wallet's next seq, its running sums extended, its hash linked to the head's. */
export type Placement = Omit<LedgerEntry, 'seq' | 'balanceAfter' | 'heldAfter' | 'hash'>;
/** Where a wallet's chain ends: its last entry's seq and hash. */
export interface LedgerHead { walletId: string; seq: number; hash: string | null }
export type LedgerCheckpoint = typeof ledgerCheckpoints.$inferSelect;
