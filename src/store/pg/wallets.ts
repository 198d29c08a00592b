import { and, asc, desc, eq, gt } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { wallets, ledgerEntries, signingKeys } from '../schema-pg/index.js';
import type { WalletRepo, LedgerRepo, Wallet, LedgerEntry } from '../repos/wallets.js';
import type { SigningKeyRepo, SigningKeyRecord } from '../repos/platform.js';

type Db = NodePgDatabase;

export class PgWallets implements WalletRepo {
  constructor(private db: Db) {}
  async insert(w: Wallet) { await this.db.insert(wallets).values(w); }
  async get(id: string) { return (await this.db.select().from(wallets).where(eq(wallets.id, id)))[0]; }
  async listByTenant(tenantId: string) { return this.db.select().from(wallets).where(eq(wallets.tenantId, tenantId)).orderBy(asc(wallets.createdAt), asc(wallets.id)); }
  async update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>) { await this.db.update(wallets).set(patch).where(eq(wallets.id, id)); }
}

export class PgLedger implements LedgerRepo {
  /** `touched`: collects the wallets whose head this transaction read (PgStore queues a retry on them) */
  constructor(private db: Db, private touched?: Set<string>) {}
  async last(walletId: string) {
    this.touched?.add(walletId);
    return (await this.db.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, walletId)).orderBy(desc(ledgerEntries.seq)).limit(1))[0];
  }
  async append(e: LedgerEntry) { await this.db.insert(ledgerEntries).values(e); }
  async list(walletId: string, opts: { afterSeq?: number; limit?: number } = {}) {
    const where = opts.afterSeq === undefined ? eq(ledgerEntries.walletId, walletId) : and(eq(ledgerEntries.walletId, walletId), gt(ledgerEntries.seq, opts.afterSeq));
    const q = this.db.select().from(ledgerEntries).where(where).orderBy(asc(ledgerEntries.seq));
    return opts.limit ? q.limit(opts.limit) : q;
  }
  async byTransaction(transactionId: string) {
    // created_at, then seq: entries of one transaction in one millisecond keep their order
    return this.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId)).orderBy(asc(ledgerEntries.createdAt), asc(ledgerEntries.seq));
  }
}

export class PgSigningKeys implements SigningKeyRepo {
  constructor(private db: Db) {}
  async insert(k: SigningKeyRecord) { await this.db.insert(signingKeys).values(k); }
  async get(id: string) { return (await this.db.select().from(signingKeys).where(eq(signingKeys.id, id)))[0]; }
  async current() { return (await this.db.select().from(signingKeys).where(eq(signingKeys.status, 'current')).orderBy(desc(signingKeys.createdAt)).limit(1))[0]; }
  async all() { return this.db.select().from(signingKeys).orderBy(asc(signingKeys.createdAt), asc(signingKeys.id)); }
  async retire(id: string, at: number) { await this.db.update(signingKeys).set({ status: 'retired', retiredAt: at }).where(eq(signingKeys.id, id)); }
}
