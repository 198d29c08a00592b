import { and, asc, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { wallets, ledgerEntries, ledgerCheckpoints } from '../schema-pg/index.js';
import type { WalletRepo, LedgerRepo, Wallet, LedgerEntry, Placement, LedgerHead, LedgerCheckpointRepo, LedgerCheckpoint } from '../repos/wallets.js';
import { run, send, TableSql, type Session } from './sql.js';
import { placeAfter } from '../ledger-chain.js';

type Db = NodePgDatabase;

const W = new TableSql<Wallet>(wallets);
const L = new TableSql<LedgerEntry>(ledgerEntries);
const WALLET_GET = `SELECT ${W.columns} FROM wallets WHERE id = $1`;
const HEAD = `SELECT ${L.columns} FROM ledger_entries WHERE wallet_id = $1 ORDER BY seq DESC LIMIT 1`;
// drizzle-pg/0005: locks the wallet's row, then reads its head in a statement of its own (a fresh
// snapshot under READ COMMITTED): one round trip
const HEAD_LOCKED = `SELECT ${L.columns} FROM ledger_head_for_update($1)`;
// several wallets locked in the order given and their heads read, in one statement (drizzle-pg/0013)
const HEADS_LOCKED = `SELECT ${L.columns} FROM ledger_heads_for_update($1::text[])`;
/** `INSERT … VALUES (…), (…)` for n entries, made once per n */
const appendText: string[] = [];
function appendOf(n: number): string {
  if (appendText[n]) return appendText[n]!;
  const w = L.width;
  const rows = Array.from({ length: n }, (_, r) => `(${Array.from({ length: w }, (_, c) => `$${r * w + c + 1}`).join(', ')})`);
  return (appendText[n] = `INSERT INTO ledger_entries (${L.columns}) VALUES ${rows.join(', ')}`);
}

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
   * reading one head and colliding on the next seq (docs/deploy.md, "Concurrency"). Later reads in
   * the transaction answer from the head it keeps (only `place` moves it).
   */
  async last(walletId: string) {
    const s = this.s;
    if (!s.writable) return L.first(await run(s, 'ledger_head', HEAD, [walletId]));
    const heads = (s.heads ??= new Map());
    if (heads.has(walletId)) return heads.get(walletId);
    s.touched?.add(walletId);
    const head = L.first(await run(s, 'ledger_head_locked', HEAD_LOCKED, [walletId]));
    s.locked.add(walletId);
    heads.set(walletId, head);
    return head;
  }
  /**
   * The wallets not yet locked in this transaction locked and their heads read in one statement
   * (in the order given: buyer, seller, platform for a completion, the lock order of
   * docs/deploy.md), the entries made by the one rule (ledger-chain.ts) and sent in one INSERT,
   * not waited for: it leaves with the COMMIT.
   */
  async place(ps: Placement[]) {
    const s = this.s;
    if (!s.writable) throw new Error('LedgerRepo.place runs inside a write transaction (Store.tx)');
    const heads = (s.heads ??= new Map());
    const need = [...new Set(ps.map((p) => p.walletId))].filter((w) => !heads.has(w));
    if (need.length === 1) await this.last(need[0]!);
    else if (need.length > 1) {
      const rows = L.all(await run(s, 'ledger_heads_locked', HEADS_LOCKED, [need]));
      for (const w of need) {
        s.touched?.add(w);
        s.locked.add(w);
        heads.set(w, rows.find((e) => e.walletId === w));
      }
    }
    // refused before anything is sent: the transaction stays usable
    const entries = placeAfter(heads, ps);
    if (entries.length > 0) await send(s, `ledger_append_${entries.length}`, appendOf(entries.length), entries.flatMap((e) => L.insertValues(e)!));
    return entries;
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
  async heads(): Promise<LedgerHead[]> {
    const r = await this.db.execute<{ wallet_id: string; seq: string | number; hash: string | null }>(sql`SELECT DISTINCT ON (wallet_id) wallet_id, seq, hash FROM ledger_entries ORDER BY wallet_id, seq DESC`);
    return r.rows.map((h) => ({ walletId: h.wallet_id, seq: Number(h.seq), hash: h.hash }));
  }
  async unsealedWallets() {
    return (await this.db.selectDistinct({ w: ledgerEntries.walletId }).from(ledgerEntries).where(isNull(ledgerEntries.hash))).map((x) => x.w);
  }
  async seal(id: string, hash: string) { await this.db.update(ledgerEntries).set({ hash }).where(and(eq(ledgerEntries.id, id), isNull(ledgerEntries.hash))); }
}

export class PgLedgerCheckpoints implements LedgerCheckpointRepo {
  constructor(private db: Db) {}
  async insert(c: LedgerCheckpoint) { await this.db.insert(ledgerCheckpoints).values(c); }
  async get(id: string) { return (await this.db.select().from(ledgerCheckpoints).where(eq(ledgerCheckpoints.id, id)))[0]; }
  async list(opts: { limit: number; before?: { createdAt: number; id: string } }) {
    const b = opts.before;
    const where = b ? or(lt(ledgerCheckpoints.createdAt, b.createdAt), and(eq(ledgerCheckpoints.createdAt, b.createdAt), lt(ledgerCheckpoints.id, b.id))) : undefined;
    return this.db.select().from(ledgerCheckpoints).where(where).orderBy(desc(ledgerCheckpoints.createdAt), desc(ledgerCheckpoints.id)).limit(opts.limit);
  }
}
