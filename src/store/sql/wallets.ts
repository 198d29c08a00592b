/**
 * Wallets, the ledger and its signed checkpoints. The ledger's rule is `placeAfter`
 * (../ledger-chain.ts); here is only where each backend gets the wallets' heads under their lock.
 */
import type { Wallet, LedgerEntry, Placement, LedgerHead, LedgerCheckpoint } from '../repos/wallets.js';
import { placeAfter } from '../ledger-chain.js';
import { MovementRefused } from '../errors.js';
import type { LockedHeads, Sql } from './sql.js';

/**
 * PostgreSQL: the newest entry of each wallet of the `?` array, by the (wallet_id, seq) index, one
 * entry read a wallet. (DISTINCT ON read and sorted every entry of the wallets: 233 ms at 100,000
 * entries a wallet, growing with the ledger; docs/performance.md.) Columns `cols` of alias `e`.
 */
export const headsByIndex = (cols: string) =>
  `SELECT ${cols} FROM unnest(?::text[]) AS w(id) CROSS JOIN LATERAL (SELECT * FROM ledger_entries l WHERE l.wallet_id = w.id ORDER BY l.seq DESC LIMIT 1) e`;

/**
 * Both databases: each wallet's last entry (wallet, seq, hash) by the (wallet_id, seq) index, a
 * lookup per wallet (a GROUP BY read the whole ledger). The wallets are the only table of the outer
 * query, so neither planner can start from the ledger (with a join, both did on small tables).
 */
export const CHAIN_HEADS = `SELECT h.wallet_id, h.seq, h.hash FROM (
    SELECT w.id AS wallet_id,
      (SELECT l.seq FROM ledger_entries l WHERE l.wallet_id = w.id ORDER BY l.seq DESC LIMIT 1) AS seq,
      (SELECT l.hash FROM ledger_entries l WHERE l.wallet_id = w.id ORDER BY l.seq DESC LIMIT 1) AS hash
    FROM wallets w
  ) h WHERE h.seq IS NOT NULL ORDER BY h.wallet_id`;

export class Wallets {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('wallets'); }
  insert(w: Wallet) { return this.t.insert(w); }
  get(id: string) { return this.t.first({ id }); }
  listByTenant(tenantId: string) { return this.t.all({ tenantId }, 'ORDER BY created_at, id'); }
  async update(id: string, patch: Partial<Pick<Wallet, 'frozen' | 'frozenBy' | 'status' | 'updatedAt'>>) { await this.t.update({ id }, patch); }
}

export class Ledger {
  private readonly t;
  /** the heads read by the index (PostgreSQL), its text built once */
  private readonly headsText: string;
  constructor(private readonly c: Sql) {
    this.t = c.table('ledgerEntries');
    this.headsText = headsByIndex(this.t.columns('e'));
  }

  /**
   * The wallet's newest entry: its running sums are the balance and the held amount. Inside a
   * write transaction it holds the wallet first, so what is decided on it holds until the commit.
   *
   * Dialect switch, ledger holds (`Sql.lockedHeads`): in a PostgreSQL write transaction the wallet is
   * held by its turn in this process when it has one (../pg/ledger-heads.ts: taken once nothing of
   * this process is in flight on the wallet, the head read afresh without a lock), else by its row
   * (ledger_head_for_update, drizzle-pg/0005: FOR NO KEY UPDATE, held to COMMIT, the head read in a
   * fresh snapshot: a concurrent movement of the same wallet waits for this one to commit, then
   * reads the head it appended; docs/deploy.md, "Concurrency"). Later reads in the transaction
   * answer from the heads it keeps (only `place` moves them). SQLite reads the head under its one writer.
   */
  async last(walletId: string) {
    const locked = this.c.lockedHeads;
    if (!locked) return this.t.first({ walletId }, 'ORDER BY seq DESC');
    // read, not taken from what this process kept: the domain decides on it (a kept head may be behind)
    if (!locked.heads.has(walletId) || locked.cached.has(walletId)) await this.hold(locked, [walletId], true);
    return locked.heads.get(walletId);
  }

  /**
   * Holds the wallet until the commit, as `last` does, without reading its head afresh: for a
   * transaction that needs the wallet held before the locks it takes next (authorize's order,
   * docs/deploy.md "Concurrency"), not its balance. A movement placed afterwards is built on the
   * newest head this process has (checked by the database), and one it would refuse is decided again
   * on the head read afresh (`place`). PostgreSQL: by its turn, else its row; SQLite's one writer
   * holds everything.
   */
  async take(walletId: string): Promise<void> {
    const locked = this.c.lockedHeads;
    if (locked && !locked.heads.has(walletId)) await this.hold(locked, [walletId]);
  }

  /**
   * PostgreSQL: holds the wallets and puts their heads in the transaction's. By turn where this process
   * may (`fresh`: the head read without a lock, once nothing of this process is in flight on it; else
   * the newest head this process made, or read when it has none); the others locked and their heads
   * read in one statement, several in the order given (buyer, seller, platform for a completion: the
   * lock order of docs/deploy.md; ledger_heads_for_update, drizzle-pg/0013). A retry of the
   * transaction queues on them all (PgStore.tx).
   */
  private async hold(h: LockedHeads, walletIds: string[], fresh = false) {
    for (const w of walletIds) h.touched?.add(w);
    const turns = h.ledgerHeads;
    // appended to by this transaction, whose turn it passed on: read (its own entries are the newest it can see)
    const mine = walletIds.filter((w) => h.published.includes(w));
    const byTurn = turns ? await turns.take(h, walletIds.filter((w) => !mine.includes(w)), fresh) : [];
    const unknown = [...mine, ...byTurn.filter((w) => fresh || !turns!.knows(w))];
    for (const w of mine) h.cached.delete(w);
    for (const w of byTurn) {
      if (unknown.includes(w)) {
        h.cached.delete(w);
      } else {
        h.heads.set(w, turns!.head(w));
        h.cached.add(w);
      }
    }
    const toLock = walletIds.filter((w) => !byTurn.includes(w) && !mine.includes(w));
    const cols = this.t.columns();
    const [read, lockedRows] = await Promise.all([
      unknown.length === 0 ? [] : this.c.rows(this.headsText, [unknown]),
      toLock.length === 0 ? []
        : toLock.length === 1 ? this.c.rows(`SELECT ${cols} FROM ledger_head_for_update(?)`, toLock)
        : this.c.rows(`SELECT ${cols} FROM ledger_heads_for_update(?::text[])`, [toLock]),
    ]);
    const heads = [...read, ...lockedRows].map((r) => this.t.row(r));
    for (const w of unknown) h.heads.set(w, heads.find((e) => e.walletId === w));
    for (const w of toLock) {
      h.locked.add(w);
      h.heads.set(w, heads.find((e) => e.walletId === w));
    }
  }

  /**
   * The only way into the ledger. Each movement, in the order given, is placed after its wallet's
   * last entry under the wallet's lock, by the one rule of src/store/ledger-chain.ts (`placeAfter`):
   * `seq` and the running sums extended, refused with MovementRefused (nothing appended, the
   * database transaction intact) when a sum would go negative. Returns the entries appended.
   *
   * The heads of the wallets not yet read (PostgreSQL: not yet held in this transaction) read (on
   * PostgreSQL no round trip for a wallet whose head this process has, else the heads of the
   * others in one statement), the entries made by that rule (refused before anything is written)
   * and appended in one INSERT, sent: on PostgreSQL it leaves with the COMMIT, not waited for,
   * after `ledger_heads_expect` for the wallets held by their turn (sent too, in the order given:
   * it locks their rows and checks that each one's head is the one built on, drizzle-pg/0016).
   */
  async place(ps: Placement[]) {
    const locked = this.c.lockedHeads;
    if (!locked && this.c.dialect === 'pg') throw new Error('Ledger.place runs inside a write transaction (Store.tx)');
    const heads = locked?.heads ?? new Map<string, LedgerEntry | undefined>();
    const wallets = [...new Set(ps.map((p) => p.walletId))];
    const need = wallets.filter((w) => !heads.has(w));
    if (locked) {
      if (need.length > 0) await this.hold(locked, need);
    } else {
      // SQLite: one writer at a time (SqliteStore.tx): the heads read here cannot move before the commit
      for (const w of need) heads.set(w, await this.last(w));
    }
    // the head each wallet's entries are built on (ledger_heads_expect checks it on PostgreSQL)
    let builtOn = wallets.map((w) => heads.get(w)?.id ?? null);
    let entries: LedgerEntry[];
    try {
      entries = placeAfter(heads, ps);
    } catch (e) {
      // a head this process kept may be behind (another instance moved the wallet since): a refusal
      // is decided on the heads read afresh (a placement it allows is checked by ledger_heads_expect)
      const kept = locked ? wallets.filter((w) => locked.cached.has(w)) : [];
      if (!(e instanceof MovementRefused) || kept.length === 0) throw e;
      await this.hold(locked!, kept, true);
      builtOn = wallets.map((w) => heads.get(w)?.id ?? null);
      entries = placeAfter(heads, ps);
    }
    if (!locked) {
      await this.t.insertAll(entries, true);
      return entries;
    }
    // PostgreSQL: the wallets not yet locked by this transaction (held by their turn) are checked and
    // locked by ledger_heads_expect (drizzle-pg/0016), in the statement that inserts the entries
    const lock = wallets.filter((w) => !locked.locked.has(w));
    for (const w of lock) locked.locked.add(w);
    const sending = lock.length === 0 ? this.t.insertAll(entries, true) : this.t.insertAllAfter({
      text: 'SELECT ledger_heads_expect(?::text[], ?::text[], ?::text[])',
      values: [lock, lock.map((w) => builtOn[wallets.indexOf(w)]), lock.map((w) => heads.get(w)!.id)],
    }, entries, true);
    // queued on the connection: the wallets held by their turn pass on now (../pg/ledger-heads.ts)
    for (const w of wallets) if (locked.turns.includes(w)) locked.ledgerHeads?.publish(locked, w, heads.get(w));
    await sending;
    return entries;
  }

  /** Entries oldest first; `afterSeq` pages on. */
  list(walletId: string, opts: { afterSeq?: number; limit?: number } = {}) {
    const after = opts.afterSeq === undefined ? '' : ' AND seq > ?';
    const limit = opts.limit ? ' LIMIT ?' : '';
    return this.t.select(`WHERE wallet_id = ?${after} ORDER BY seq${limit}`,
      [walletId, ...(opts.afterSeq === undefined ? [] : [opts.afterSeq]), ...(opts.limit ? [opts.limit] : [])]);
  }

  /** created_at, then seq: entries of one transaction in one millisecond keep their order */
  byTransaction(transactionId: string) { return this.t.all({ transactionId }, 'ORDER BY created_at, seq'); }

  /** The head of every wallet's chain that has an entry, by wallet id. */
  async heads(): Promise<LedgerHead[]> {
    const rows = await this.c.rows(CHAIN_HEADS);
    return rows.map((r) => ({ walletId: r[0] as string, seq: Number(r[1]), hash: r[2] as string | null }));
  }

  /** Wallets with an entry that has no hash yet (written before the chain existed). */
  async unsealedWallets() {
    return (await this.c.rows('SELECT DISTINCT wallet_id FROM ledger_entries WHERE hash IS NULL')).map((r) => r[0] as string);
  }

  /** Sets the hash of an entry that has none (sealLedger in ../pg/pg-store.ts; the triggers refuse any other update). */
  async seal(id: string, hash: string) { await this.t.update({ id, hash: null }, { hash }); }
}

/** Signed checkpoints of the chains' heads, append-only. */
export class LedgerCheckpoints {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('ledgerCheckpoints'); }
  insert(c: LedgerCheckpoint) { return this.t.insert(c); }
  get(id: string) { return this.t.first({ id }); }
  /** Newest first; `before`: older than this one (paging). */
  list(opts: { limit: number; before?: { createdAt: number; id: string } }) {
    const b = opts.before;
    return b
      ? this.t.select('WHERE created_at < ? OR (created_at = ? AND id < ?) ORDER BY created_at DESC, id DESC LIMIT ?', [b.createdAt, b.createdAt, b.id, opts.limit])
      : this.t.all({}, 'ORDER BY created_at DESC, id DESC LIMIT ?', [opts.limit]);
  }
}
