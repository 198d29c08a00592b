import { and, asc, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { wallets, ledgerEntries } from '../schema-pg/index.js';
import type { WalletRepo, LedgerRepo, Wallet, LedgerEntry, Placement } from '../repos/wallets.js';
import { run, send, TableSql, type Session } from './sql.js';

type Db = NodePgDatabase;

const W = new TableSql<Wallet>(wallets);
const L = new TableSql<LedgerEntry>(ledgerEntries);
const WALLET_GET = `SELECT ${W.columns} FROM wallets WHERE id = $1`;
const HEAD = `SELECT ${L.columns} FROM ledger_entries WHERE wallet_id = $1 ORDER BY seq DESC LIMIT 1`;
// drizzle-pg/0005: locks the wallet's row, then reads its head in a statement of its own (a fresh
// snapshot under READ COMMITTED): one round trip
const HEAD_LOCKED = `SELECT ${L.columns} FROM ledger_head_for_update($1)`;
// a movement placed by the database (drizzle-pg/0006): the wallet locked, its head read, the sums
// checked and extended and the entry appended, in one statement (sent inside a tx without waiting)
const PLACE_KEYS = ['id', 'walletId', 'type', 'amountMinor', 'holdMinor', 'currency', 'transactionId', 'reference', 'memo', 'createdAt'] as const;
const PLACE = 'SELECT ledger_place($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)';
// several in one statement (drizzle-pg/0008): each column's values as an array, in PLACE_KEYS order
const PLACE_ALL = 'SELECT ledger_place_all($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])';

export class PgWallets implements WalletRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(w: Wallet) { await this.db.insert(wallets).values(w); }
  async get(id: string) { return W.first(await run(this.s, 'wallet_get', WALLET_GET, [id])); }
  async listByTenant(tenantId: string) { return this.db.select().from(wallets).where(eq(wallets.tenantId, tenantId)).orderBy(asc(wallets.createdAt), asc(wallets.id)); }
  async update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>) { await this.db.update(wallets).set(patch).where(eq(wallets.id, id)); }
}

export class PgLedger implements LedgerRepo {
  constructor(private db: Db, private s: Session) {}
  /**
   * The wallet's last entry. In a write transaction the first read of a wallet's head locks the
   * wallet's row first (FOR NO KEY UPDATE, held to COMMIT): a concurrent movement of the same
   * wallet waits here for this one to commit, then reads the head it appended, instead of both
   * reading one head and colliding on the next seq (docs/deploy.md, "Concurrency").
   */
  async last(walletId: string) {
    const s = this.s;
    if (!s.writable) return L.first(await run(s, 'ledger_head', HEAD, [walletId]));
    s.touched?.add(walletId);
    if (s.locked.has(walletId)) return L.first(await run(s, 'ledger_head', HEAD, [walletId]));
    const r = await run(s, 'ledger_head_locked', HEAD_LOCKED, [walletId]);
    s.locked.add(walletId);
    return L.first(r);
  }
  async append(e: LedgerEntry) {
    const v = L.insertValues(e);
    if (v) await send(this.s, 'ledger_append', L.insertText, v);
    else await this.db.insert(ledgerEntries).values(e);
  }
  async place(m: Placement) {
    const s = this.s;
    if (s.writable) {
      s.touched?.add(m.walletId);
      s.locked.add(m.walletId);
    }
    await send(s, 'ledger_place', PLACE, L.values(m, PLACE_KEYS));
  }
  async placeAll(ms: Placement[]) {
    if (ms.length <= 1) {
      for (const m of ms) await this.place(m);
      return;
    }
    const s = this.s;
    if (s.writable) {
      for (const m of ms) {
        s.touched?.add(m.walletId);
        s.locked.add(m.walletId);
      }
    }
    const rows = ms.map((m) => L.values(m, PLACE_KEYS));
    await send(s, 'ledger_place_all', PLACE_ALL, PLACE_KEYS.map((_, i) => rows.map((r) => r[i])));
  }
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

