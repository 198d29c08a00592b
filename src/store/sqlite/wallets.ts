import { and, asc, desc, eq, gt } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { wallets, ledgerEntries } from '../schema/index.js';
import type { WalletRepo, LedgerRepo, Wallet, LedgerEntry } from '../repos/wallets.js';

type Db = BetterSQLite3Database;

export class SqliteWallets implements WalletRepo {
  constructor(private db: Db) {}
  async insert(w: Wallet) { this.db.insert(wallets).values(w).run(); }
  async get(id: string) { return this.db.select().from(wallets).where(eq(wallets.id, id)).get(); }
  async listByTenant(tenantId: string) { return this.db.select().from(wallets).where(eq(wallets.tenantId, tenantId)).orderBy(wallets.createdAt, wallets.id).all(); }
  async update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'status' | 'updatedAt'>>) { this.db.update(wallets).set(patch).where(eq(wallets.id, id)).run(); }
}

export class SqliteLedger implements LedgerRepo {
  constructor(private db: Db) {}
  async last(walletId: string) {
    return this.db.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, walletId)).orderBy(desc(ledgerEntries.seq)).limit(1).get();
  }
  async append(e: LedgerEntry) { this.db.insert(ledgerEntries).values(e).run(); }
  async list(walletId: string, opts: { afterSeq?: number; limit?: number } = {}) {
    const where = opts.afterSeq === undefined ? eq(ledgerEntries.walletId, walletId) : and(eq(ledgerEntries.walletId, walletId), gt(ledgerEntries.seq, opts.afterSeq));
    const q = this.db.select().from(ledgerEntries).where(where).orderBy(asc(ledgerEntries.seq));
    return opts.limit ? q.limit(opts.limit).all() : q.all();
  }
  async byTransaction(transactionId: string) {
    return this.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId)).orderBy(asc(ledgerEntries.createdAt)).all();
  }
}
