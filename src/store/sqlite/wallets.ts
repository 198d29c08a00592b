import { and, asc, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { wallets, ledgerEntries, ledgerCheckpoints } from '../schema/index.js';
import type { WalletRepo, LedgerRepo, Wallet, LedgerEntry, Placement, LedgerHead, LedgerCheckpointRepo, LedgerCheckpoint } from '../repos/wallets.js';
import { storeError, UniqueViolation } from '../errors.js';
import { placeAfter, seals } from '../ledger-chain.js';
import { statementsFor, type TableStatements } from './statements.js';

type Db = BetterSQLite3Database;

export class SqliteWallets implements WalletRepo {
  private readonly s: TableStatements<typeof wallets>;
  constructor(private db: Db) { this.s = statementsFor(db, wallets); }
  async insert(w: Wallet) { this.s.insert(w); }
  async get(id: string) { return this.s.first({ id }); }
  async listByTenant(tenantId: string) { return this.db.select().from(wallets).where(eq(wallets.tenantId, tenantId)).orderBy(wallets.createdAt, wallets.id).all(); }
  async update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>) { this.s.update({ id }, patch); }
}

export class SqliteLedger implements LedgerRepo {
  private readonly s: TableStatements<typeof ledgerEntries>;
  constructor(private db: Db) { this.s = statementsFor(db, ledgerEntries); }
  async last(walletId: string) { return this.s.first({ walletId }, 'ORDER BY "seq" DESC'); }
  async place(ps: Placement[]) {
    // one writer at a time (SqliteStore.tx): the heads read here cannot move before the commit
    const heads = new Map<string, LedgerEntry | undefined>();
    for (const p of ps) if (!heads.has(p.walletId)) heads.set(p.walletId, await this.last(p.walletId));
    const entries = placeAfter(heads, ps);
    for (const e of entries) this.append(e);
    return entries;
  }
  private append(e: LedgerEntry) {
    try {
      this.s.insert(e);
    } catch (err) {
      // the no-replace trigger (drizzle/0004) fires before the unique index: the same refusal
      const m = err as { code?: string; message?: string };
      if (m.code === 'SQLITE_CONSTRAINT_TRIGGER' && m.message?.includes('with this id or wallet seq exists')) {
        throw new UniqueViolation(m.message, 'ledger_wallet_seq', { cause: err });
      }
      throw storeError(err);
    }
  }
  async list(walletId: string, opts: { afterSeq?: number; limit?: number } = {}) {
    const where = opts.afterSeq === undefined ? eq(ledgerEntries.walletId, walletId) : and(eq(ledgerEntries.walletId, walletId), gt(ledgerEntries.seq, opts.afterSeq));
    const q = this.db.select().from(ledgerEntries).where(where).orderBy(asc(ledgerEntries.seq));
    return opts.limit ? q.limit(opts.limit).all() : q.all();
  }
  async byTransaction(transactionId: string) {
    return this.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId)).orderBy(asc(ledgerEntries.createdAt)).all();
  }
  async heads(): Promise<LedgerHead[]> {
    return this.db.all<LedgerHead>(sql`SELECT e.wallet_id AS walletId, e.seq AS seq, e.hash AS hash FROM ledger_entries e
      JOIN (SELECT wallet_id, max(seq) AS seq FROM ledger_entries GROUP BY wallet_id) h ON h.wallet_id = e.wallet_id AND h.seq = e.seq ORDER BY e.wallet_id`)
      .map((h) => ({ walletId: h.walletId, seq: Number(h.seq), hash: h.hash }));
  }
  async unsealedWallets() {
    return this.db.selectDistinct({ w: ledgerEntries.walletId }).from(ledgerEntries).where(isNull(ledgerEntries.hash)).all().map((x) => x.w);
  }
  async seal(id: string, hash: string) { this.db.update(ledgerEntries).set({ hash }).where(and(eq(ledgerEntries.id, id), isNull(ledgerEntries.hash))).run(); }
}

export class SqliteLedgerCheckpoints implements LedgerCheckpointRepo {
  constructor(private db: Db) {}
  async insert(c: LedgerCheckpoint) { this.db.insert(ledgerCheckpoints).values(c).run(); }
  async get(id: string) { return this.db.select().from(ledgerCheckpoints).where(eq(ledgerCheckpoints.id, id)).get(); }
  async list(opts: { limit: number; before?: { createdAt: number; id: string } }) {
    const b = opts.before;
    const where = b ? or(lt(ledgerCheckpoints.createdAt, b.createdAt), and(eq(ledgerCheckpoints.createdAt, b.createdAt), lt(ledgerCheckpoints.id, b.id))) : undefined;
    return this.db.select().from(ledgerCheckpoints).where(where).orderBy(desc(ledgerCheckpoints.createdAt), desc(ledgerCheckpoints.id)).limit(opts.limit).all();
  }
}

/** ledger-chain.ts's sealLedger, synchronously, as the store opens (one writer: nothing else runs yet). */
export function sealSqliteLedger(db: Db): number {
  let n = 0;
  const unsealed = db.selectDistinct({ w: ledgerEntries.walletId }).from(ledgerEntries).where(isNull(ledgerEntries.hash)).all().map((x) => x.w);
  for (const w of unsealed) {
    db.transaction((t) => {
      for (const m of seals(t.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, w)).orderBy(asc(ledgerEntries.seq)).all())) {
        t.update(ledgerEntries).set({ hash: m.hash }).where(eq(ledgerEntries.id, m.id)).run();
        n++;
      }
    });
  }
  return n;
}
