import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsDir } from '../../paths.js';
import { ensurePrivateFile } from '../../core/files.js';
import type { ReadOptions, Repos, Store } from '../store.js';
import { makeRepos } from '../sql/repos.js';
import { SqliteSql } from '../sql/sql.js';
import { asc, eq, isNull } from 'drizzle-orm';
import { ledgerEntries } from '../schema/index.js';
import { seals } from '../ledger-chain.js';
import { WalSync } from './wal-sync.js';
import type { StoreObserver } from '../observer.js';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for throwaway stores. */
  path: string;
  /**
   * Every commit is on disk before it is acknowledged, either way. 'background' (the default
   * for a file): the log is synced on the thread pool after COMMIT (wal-sync.ts) and the event
   * loop keeps serving meanwhile; 'in-commit': synchronous=FULL, SQLite syncs inside COMMIT
   * and the process waits for the disk.
   */
  durability?: 'background' | 'in-commit';
  /** the log sync of 'background' mode (default: node's fdatasync); tests pass one they can hold back */
  datasync?: ConstructorParameters<typeof WalSync>[1];
  /** most transactions per commit (group commit); 1 turns batching off */
  maxBatch?: number;
  /** told how long commits and log syncs take (metrics); settable later as `store.observer` */
  observer?: StoreObserver;
}

interface PendingTx {
  fn: (r: Repos) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * better-sqlite3 is synchronous and one connection has one transaction, so every
 * `tx` and `read` runs in turn on a promise queue. Inside, repository calls complete
 * synchronously, so the queue is held only for the microseconds the SQL takes.
 */
export class SqliteStore implements Store {
  readonly raw: Database.Database;
  readonly db: BetterSQLite3Database;
  private readonly repos: Repos;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: PendingTx[] = [];
  private batchScheduled = false;
  /** the most transactions one commit carries */
  private readonly maxBatch: number;
  private readonly savepoint: Record<'open' | 'release' | 'rollback', Database.Statement>;
  /** syncs the log off the event loop; absent in 'in-commit' mode and for ':memory:' */
  private readonly wal: WalSync | undefined;
  /** told how long commits and log syncs take; none by default */
  observer: StoreObserver | undefined;

  constructor(opts: SqliteStoreOptions) {
    this.maxBatch = opts.maxBatch ?? 64;
    this.observer = opts.observer;
    if (opts.path !== ':memory:' && opts.path !== '') {
      // password hashes and emails: owner only. SQLite gives the -wal and -shm files it creates
      // the database file's mode, so the file is made 0600 before SQLite opens it; files an
      // older version left wider are narrowed
      ensurePrivateFile(opts.path, { create: true });
      for (const f of [`${opts.path}-wal`, `${opts.path}-shm`]) ensurePrivateFile(f);
    }
    this.raw = new Database(opts.path);
    this.raw.pragma('journal_mode = WAL');
    const background = opts.path !== ':memory:' && (opts.durability ?? 'background') === 'background';
    // NORMAL in WAL mode: COMMIT writes the log without syncing it; WalSync syncs it before any acknowledgement
    this.raw.pragma(`synchronous = ${background ? 'NORMAL' : 'FULL'}`);
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
    this.raw.defaultSafeIntegers(true);
    this.db = drizzle(this.raw);
    migrate(this.db, { migrationsFolder: migrationsDir() });
    sealLedger(this.db); // entries from before the hash chain get their hashes (sealLedger, below)
    // after the migrations: a new database has no log file before its first write
    this.wal = background ? new WalSync(`${opts.path}-wal`, opts.datasync) : undefined;
    // prepared once: exec() parses its SQL on every call, twice per transaction
    this.savepoint = { open: this.raw.prepare('SAVEPOINT tx'), release: this.raw.prepare('RELEASE tx'), rollback: this.raw.prepare('ROLLBACK TO tx') };
    this.repos = makeRepos(new SqliteSql(this.raw));
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Group commit: transactions that arrive while one batch is being written wait for the
   * next batch, and a batch is one BEGIN ... COMMIT with each transaction in its own
   * savepoint. A transaction that throws rolls back to its savepoint alone; none is
   * acknowledged before its COMMIT is on disk, and one log sync serves the whole batch
   * (and every batch committed while the previous sync ran).
   */
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve, reject } as PendingTx);
      if (!this.batchScheduled) {
        this.batchScheduled = true;
        // Start the batch on the next turn of the event loop, not in this microtask: the
        // requests whose bytes arrived meanwhile get to queue their transactions first and
        // share this COMMIT and its log sync. Costs one loop turn (microseconds) on an idle
        // gateway.
        setImmediate(() => void this.exclusive(() => this.runBatch()));
      }
    });
  }

  private async runBatch(): Promise<void> {
    this.batchScheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (this.pending.length > 0) {
      this.batchScheduled = true;
      void this.exclusive(() => this.runBatch());
    }
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const observer = this.observer;
    const began = observer ? performance.now() : 0;
    try {
      this.raw.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
    for (const job of batch) {
      this.savepoint.open.run();
      try {
        const value = await job.fn(this.repos);
        this.savepoint.release.run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        this.savepoint.rollback.run();
        this.savepoint.release.run();
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.raw.exec('COMMIT');
    } catch (error) {
      if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
      for (const job of batch) job.reject(error);
      return;
    }
    const committedAt = observer ? performance.now() : 0;
    observer?.committed?.((committedAt - began) / 1000, batch.length);
    const settle = () => batch.forEach((job, i) => {
      const o = outcomes[i]!;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.error);
    });
    if (!this.wal) return settle();
    // the next batch may run while this one's log sync is under way; none is acknowledged before it
    this.wal.committed().then(() => {
      observer?.synced?.((performance.now() - committedAt) / 1000);
      settle();
    }, (error: unknown) => {
      for (const job of batch) job.reject(error);
    });
  }

  /**
   * A read returns only once every commit it could have seen is on disk, so no caller acts
   * on (or shows) a write that a crash could still take back.
   */
  async read<T>(fn: (r: Repos) => Promise<T>, opts: ReadOptions = {}): Promise<T> {
    if (opts.unsynced) return this.exclusive(() => fn(this.repos));
    const { value, durable } = await this.exclusive(async () => ({ value: await fn(this.repos), durable: this.wal?.durable() }));
    if (durable) await durable;
    return value;
  }

  /** The readiness check: `SELECT 1` on the database file's connection (throws once the store is closed). */
  async ping(): Promise<void> {
    await this.exclusive(async () => void this.raw.prepare('SELECT 1').get());
  }

  /** Whether the database holds simulated money (a `fund` entry): the data-directory mode check, once at start. */
  async hasSandboxMoney(): Promise<boolean> {
    return this.raw.prepare("SELECT 1 FROM ledger_entries WHERE type = 'fund' LIMIT 1").get() !== undefined;
  }

  /** one gateway process per database file (gateway.lock): it runs every duty */
  async claimDuty(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    await this.exclusive(async () => undefined);
    await this.wal?.close();
    if (this.raw.open) this.raw.close();
  }
}

/** PgStore's sealLedger (../pg/pg-store.ts), synchronously, as the store opens (one writer: nothing else runs yet). */
function sealLedger(db: BetterSQLite3Database): void {
  const unsealed = db.selectDistinct({ w: ledgerEntries.walletId }).from(ledgerEntries).where(isNull(ledgerEntries.hash)).all().map((x) => x.w);
  for (const w of unsealed) {
    db.transaction((t) => {
      for (const m of seals(t.select().from(ledgerEntries).where(eq(ledgerEntries.walletId, w)).orderBy(asc(ledgerEntries.seq)).all())) {
        t.update(ledgerEntries).set({ hash: m.hash }).where(eq(ledgerEntries.id, m.id)).run();
      }
    });
  }
}
