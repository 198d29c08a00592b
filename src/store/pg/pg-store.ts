/**
 * The PostgreSQL store: a node-postgres Pool (drizzle only to migrate), for any number of gateway
 * instances on one database (docs/deploy.md).
 *
 * Concurrency: every `tx` runs READ COMMITTED with row locks on what it reads to decide a write,
 * so concurrent writers queue instead of colliding: the first read of a wallet's ledger head locks
 * the wallet's row (Ledger.last in ../sql/wallets.ts: lock, then read with a fresh snapshot, in one
 * round trip); reading a transaction in a `tx` locks its row (complete, fail and the sweeper then
 * resolve it once); a workspace budget writes the workspace's row before it sums
 * (Spend.byWorkspace). Unique keys decide the rest (a nonce, an idempotency key, a wallet's seq as
 * the last guard), and approvals and rail states change by conditional updates of one row.
 * Measured (docs/performance.md): REPEATABLE READ with retries rolled back about one transaction
 * per paid call under load (every complete credits the one seller wallet), READ COMMITTED with
 * these locks none.
 *
 * A transaction is still run again from the start when PostgreSQL refuses it: a deadlock
 * (40P01), a unique violation (23505) the domain did not catch, or a serialization failure
 * (40001, only under AGENTPAY_PG_ISOLATION=repeatable-read or serializable, which remain for
 * comparison), up to `maxAttempts` times with a short jittered pause; a retry first queues on
 * the wallets it touched (see tx()).
 *
 * A `tx` function may therefore run more than once: it must do nothing outside the database that
 * cannot be repeated. The domain's do not: they compute, read and write through the repos; ids
 * and clock readings made inside are simply made again. A `read` is one REPEATABLE READ READ ONLY
 * transaction (one snapshot for all its queries); an `unsynced` read is autocommit queries.
 *
 * The repositories (../sql) run their SQL as named prepared statements (./sql.ts), each described
 * once per process (./statement.ts); each pooled connection's repositories are made once. Inside a
 * `tx`, writes whose result the domain does not read are sent without waiting (`send`): PostgreSQL
 * runs a connection's statements in order, so later reads see them, and the first of them to fail
 * fails the transaction at its COMMIT (`settle`). Statements sent in one run of JavaScript leave in
 * one socket write (`corkUntilIdle`).
 */
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { ReadOptions, Repos, Store } from '../store.js';
import type { StoreObserver } from '../observer.js';
import { DatabaseUnavailable, redactUrl, storeError, TransactionConflict, UniqueViolation } from '../errors.js';
import { pgMigrationsDir } from '../../paths.js';
import { makeRepos } from '../sql/repos.js';
import { PgSql } from '../sql/sql.js';
import { seals } from '../ledger-chain.js';
import { resetSession, settle, type Session } from './sql.js';
import { LedgerHeads } from './ledger-heads.js';
import { corkUntilIdle } from './cork.js';
import { SharedConnection } from './shared-connection.js';

export interface PgStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** connections in the pool (default 10) */
  poolSize?: number;
  /** runs of one `tx` at most before TransactionConflict (default 12) */
  maxAttempts?: number;
  /** apply pending migrations at open (default true); false refuses a database that is behind */
  migrate?: boolean;
  /** told how long commits take (metrics); settable later as `store.observer` */
  observer?: StoreObserver;
}

/** the advisory lock key of migrations (any constant; the duties use theirs) */
const MIGRATION_LOCK = 0x61677470; // 'agtp'
const BEGIN_TX = {
  serializable: 'BEGIN ISOLATION LEVEL SERIALIZABLE',
  'repeatable-read': 'BEGIN ISOLATION LEVEL REPEATABLE READ',
}[process.env.AGENTPAY_PG_ISOLATION ?? ''] ?? 'BEGIN ISOLATION LEVEL READ COMMITTED';
const RETRYABLE = new Set(['40001', '40P01', '23505']);

const codeOf = (e: unknown): string | undefined => {
  for (let cur = e as { code?: unknown; cause?: unknown } | undefined; cur; cur = cur.cause as typeof cur) {
    if (typeof cur.code === 'string' && /^[0-9A-Z]{5}$/.test(cur.code)) return cur.code;
  }
  return undefined;
};

/**
 * Sends `begin` (BEGIN, with its isolation level) corked, so that it leaves with the transaction's
 * first statements in one write (the pool's connections are in pipeline mode). Resolves when
 * PostgreSQL has answered it: to its failure, if any, else undefined. Nobody waits for that before
 * sending the rest of the transaction, COMMIT included: PostgreSQL runs a connection's statements
 * in order, and a BEGIN refused on a live connection (one left in a failed transaction) leaves the
 * statements after it refused as well. The caller raises the failure before anything else.
 */
function begin(client: pg.PoolClient, sql: string): Promise<unknown> {
  corkUntilIdle(client);
  return client.query(sql).then(() => undefined, (e: unknown) => e ?? new Error('BEGIN failed'));
}

/** A query's failure, or undefined: for answers awaited together. */
const failureOf = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e ?? new Error('the statement failed'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A refused, failed or misaddressed connection as DatabaseUnavailable naming the URL without its password. */
export function connectError(e: unknown, url: string): DatabaseUnavailable {
  const err = e as { code?: string; message?: string };
  const code = err.code ? ` (${err.code})` : '';
  return new DatabaseUnavailable(`cannot connect to the database ${redactUrl(url)}${code}: ${(err.message ?? String(e)).replaceAll(url, redactUrl(url))}`, 'connect', { cause: e });
}

export function checkDatabaseUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new DatabaseUnavailable(`the database URL ${redactUrl(url)} is not a URL; give postgres://user:password@host:5432/database`, 'url');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new DatabaseUnavailable(`the database URL ${redactUrl(url)} is not a PostgreSQL URL (postgres://user:password@host:5432/database)`, 'url');
  }
  if (!u.pathname || u.pathname === '/') throw new DatabaseUnavailable(`the database URL ${redactUrl(url)} names no database; add /<database> after the host`, 'url');
}

export class PgStore implements Store {
  readonly pool: pg.Pool;
  readonly url: string;
  private readonly maxAttempts: number;
  /** the autocommit reads' connection (./shared-connection.ts) */
  private readonly shared: SharedConnection;
  private readonly autocommitRepos: Repos;
  /**
   * Repositories and their session, made once and reused: one set per `tx` or `read` under way
   * (not per connection: a connection may serve the next transaction while the one before it
   * still waits for its COMMIT's answer, see `tx`).
   */
  private readonly spare: { session: Session; repos: Repos }[] = [];
  /** the ledger heads this process committed, and the wallets' turns (./ledger-heads.ts) */
  private readonly ledgerHeads = new LedgerHeads();
  /** the dedicated connection that holds this instance's fleet duties (advisory locks) */
  private dutyClient: pg.Client | undefined;
  private dutyConnecting: Promise<pg.Client> | undefined;
  private readonly held = new Set<string>();
  /** claimDuty calls in turn (see there) */
  private dutyQueue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** told how long each commit takes, BEGIN to COMMIT of the attempt that committed (PostgreSQL syncs inside COMMIT: no `synced`) */
  observer: StoreObserver | undefined;

  private constructor(opts: PgStoreOptions) {
    this.url = opts.url;
    this.observer = opts.observer;
    this.maxAttempts = opts.maxAttempts ?? 12;
    // pipeline: a transaction's BEGIN goes out with its first statement (begin); queries are
    // still sent one after another by every caller here, awaited (no portal, no cursor)
    this.pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10, connectionTimeoutMillis: 10_000, pipeline: true } as pg.PoolConfig);
    // an idle connection the server closed: the pool drops it; nothing to do here
    this.pool.on('error', () => undefined);
    // and one the server ends while it is checked out (a failover, an administrator's termination): the
    // pool removes its own listener from a checked-out client, and an 'error' with no listener would end
    // the process; the statement in flight fails on its own and the pool discards the client on release
    this.pool.on('connect', (client) => void client.on('error', () => undefined));
    this.shared = new SharedConnection({ connectionString: opts.url, connectionTimeoutMillis: 10_000 }, (e) => connectError(e, opts.url));
    this.autocommitRepos = makeRepos(new PgSql({ conn: this.shared, writable: false, touched: undefined, heads: new Map(), turns: [], published: [], locked: new Set(), cached: new Set(), pending: [], failed: undefined }));
  }

  /** Connects, and applies the migrations this database lacks (one instance at a time, under an advisory lock). */
  static async open(opts: PgStoreOptions): Promise<PgStore> {
    checkDatabaseUrl(opts.url);
    const store = new PgStore(opts);
    try {
      await store.migrate(opts.migrate ?? true);
      await sealLedger(store); // entries from before the hash chain get their hashes (sealLedger, below)
      return store;
    } catch (e) {
      await store.pool.end().catch(() => undefined);
      throw e;
    }
  }

  /** `agentpay gateway migrate`: applies what the database lacks, and returns how many migrations that was. */
  static async applyMigrations(url: string): Promise<number> {
    checkDatabaseUrl(url);
    const store = new PgStore({ url, poolSize: 1 });
    try {
      return await store.migrate(true);
    } finally {
      await store.close();
    }
  }

  /** Applies pending migrations (or with apply=false only checks); returns how many were applied. */
  async migrate(apply = true): Promise<number> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw connectError(e, this.url);
    }
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        const files = readMigrationFiles({ migrationsFolder: pgMigrationsDir() });
        const newest = Math.max(...files.map((m) => m.folderMillis));
        const applied = await client.query<{ created_at: string }>(
          `SELECT created_at::text FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`,
        ).catch((e: unknown) => {
          if (codeOf(e) === '42P01' || codeOf(e) === '3F000') return { rows: [] as { created_at: string }[] };
          throw e;
        });
        const last = applied.rows[0] ? Number(applied.rows[0].created_at) : 0;
        if (last > newest) {
          throw new DatabaseUnavailable(`the database ${redactUrl(this.url)} has a schema newer than this agentpay (a migration of ${new Date(last).toISOString()}); upgrade agentpay, or point it at another database`, 'newer');
        }
        const pending = files.filter((m) => m.folderMillis > last).length;
        if (pending === 0) return 0;
        if (!apply) throw new DatabaseUnavailable(`the database ${redactUrl(this.url)} lacks ${pending} migration(s); run agentpay gateway migrate --database ...`, 'migrate');
        try {
          await migrate(drizzle(client), { migrationsFolder: pgMigrationsDir() });
        } catch (e) {
          throw new DatabaseUnavailable(`migrating the database ${redactUrl(this.url)} failed (nothing of the failed migration was kept): ${(e as Error).message}`, 'migrate', { cause: e });
        }
        return pending;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      }
    } finally {
      client.release();
    }
  }

  async tx<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    // the wallets whose ledger head the previous attempts read: a retry queues on them
    const hot = new Set<string>();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      let broken = false;
      let locked = false;
      // the connection went back to the pool once COMMIT was sent (below)
      let released = false;
      let c: { session: Session; repos: Repos } | undefined;
      let session: Session | undefined;
      try {
        if (hot.size > 0) {
          // A retry first takes a lock on each wallet it collided on, BEFORE its transaction
          // begins (a transaction's snapshot is fixed at its first statement, so a lock taken
          // inside would not make it see the holder's commit), in a fixed order (no deadlock
          // between retries): retries on one wallet then run one after another, each seeing
          // the one before, instead of colliding again (measured: 200 concurrent purchases on
          // one wallet, 12 attempts: 37 to 43 ran out without this). Released after COMMIT.
          locked = true;
          await client.query('SELECT pg_advisory_lock(1, hashtext(k)) FROM unnest($1::text[]) AS k ORDER BY k', [[...hot].sort()]);
        }
        const observer = this.observer;
        const began = observer ? performance.now() : 0;
        c = this.reposOf(client, true, hot);
        session = c.session;
        const begun = begin(client, BEGIN_TX);
        const value = await fn(c.repos);
        // sent with the writes fn left in flight (send), and with BEGIN too when fn waited for no
        // read (one round trip); if one of them failed, PostgreSQL answers this COMMIT by rolling
        // back, and settle raises that failure
        corkUntilIdle(client);
        const committing = failureOf(client.query('COMMIT'));
        this.ledgerHeads.sent(session, session.heads);
        // With transactions waiting for a connection, this one goes back to the pool now, its
        // COMMIT unanswered: the next transaction's BEGIN and first statements leave behind the
        // COMMIT in the same socket write (PostgreSQL runs a connection's statements in order, and
        // whatever the COMMIT's outcome the connection is out of the transaction after it), so a
        // busy pool takes one write per transaction fewer. With none waiting it is kept until the
        // answer: a transaction that took it now would wait behind the COMMIT while other
        // connections are idle. Not after a retry's advisory locks (released after the COMMIT).
        if (!locked && this.pool.waitingCount > 0) {
          released = true;
          client.release();
        }
        const [beginFailure, commitFailure] = await Promise.all([begun, committing]);
        if (beginFailure) throw beginFailure;
        if (commitFailure) throw commitFailure;
        await settle(session);
        this.ledgerHeads.committed(session);
        // one transaction per commit here (no group commit); a counter's failure must not fail the commit
        try {
          observer?.committed?.((performance.now() - began) / 1000, 1);
        } catch {
          // ignored
        }
        return value;
      } catch (thrown) {
        // released: its COMMIT ended the transaction (rolled back if anything in it failed)
        if (!released) await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        // a write sent and not waited for failed first: what followed it failed because of it
        if (session) await Promise.all(session.pending);
        const e = session?.failed ? session.failed.error : thrown;
        if (session) this.ledgerHeads.abandoned(session, LedgerHeads.collision(e));
        const code = codeOf(e);
        if (code && RETRYABLE.has(code)) {
          if (attempt >= this.maxAttempts) {
            if (code === '23505') throw storeError(e);
            throw new TransactionConflict(`a transaction collided with concurrent ones ${attempt} times (${code}); try again`, attempt, { cause: e });
          }
          // full jitter over a doubling window: 1, 2, 4 ... 64 ms
          await sleep(Math.random() * Math.min(64, 2 ** (attempt - 1)));
          continue;
        }
        throw e instanceof UniqueViolation ? e : storeError(e);
      } finally {
        // a turn left held (a throw before the catch saw the session) is ended, its heads forgotten
        if (session && (session.turns.length > 0 || session.published.length > 0)) this.ledgerHeads.abandoned(session, undefined);
        if (!released) {
          if (locked && !broken) await client.query('SELECT pg_advisory_unlock_all()').catch(() => {
            broken = true;
          });
          client.release(broken);
        }
        if (c) this.spare.push(c);
      }
    }
  }

  async read<T>(fn: (r: Repos) => Promise<T>, opts: ReadOptions = {}): Promise<T> {
    // every commit PostgreSQL acknowledged is durable (synchronous_commit on): nothing to wait for
    // autocommit statements, on the connection such reads share: those sent together leave in one write
    if (opts.unsynced || opts.snapshot === false) {
      try {
        return await fn(this.autocommitRepos);
      } catch (e) {
        throw storeError(e);
      }
    }
    const client = await this.connect();
    let broken = false;
    const c = this.reposOf(client, false, undefined);
    try {
      const begun = begin(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const value = await fn(c.repos);
      corkUntilIdle(client);
      const [beginFailure, commitFailure] = await Promise.all([begun, failureOf(client.query('COMMIT'))]);
      if (beginFailure) throw beginFailure;
      if (commitFailure) throw commitFailure;
      return value;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw storeError(e);
    } finally {
      client.release(broken);
      this.spare.push(c);
    }
  }

  /** The readiness check: `SELECT 1` on the connection the hot path's reads share (it reconnects when that one is gone). */
  async ping(): Promise<void> {
    await this.shared.run('agentpay_ping', 'SELECT 1', []);
  }

  /** Whether the database holds simulated money (a `fund` entry): the data-directory mode check, once at start. */
  async hasSandboxMoney(): Promise<boolean> {
    return ((await this.pool.query("SELECT 1 FROM ledger_entries WHERE type = 'fund' LIMIT 1")).rowCount ?? 0) > 0;
  }

  /** Repositories and their session on this connection, set for one `tx` (writable) or `read`; given back to `spare` when it ends. */
  private reposOf(client: pg.PoolClient, writable: boolean, touched: Set<string> | undefined): { session: Session; repos: Repos } {
    let c = this.spare.pop();
    if (!c) {
      const session: Session = { conn: client, writable, touched, heads: new Map(), turns: [], published: [], locked: new Set(), cached: new Set(), pending: [], failed: undefined, ledgerHeads: this.ledgerHeads };
      c = { session, repos: makeRepos(new PgSql(session)) };
    }
    c.session.conn = client;
    resetSession(c.session, writable, touched);
    return c;
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (e) {
      throw connectError(e, this.url);
    }
  }

  /**
   * Whether this instance holds the fleet duty `name` now, taking it when free: a session-level
   * advisory lock on a connection of its own, kept until this store closes or that connection
   * dies (then PostgreSQL releases it and another instance takes it at its next tick).
   */
  claimDuty(name: string): Promise<boolean> {
    // one at a time: the duties (sweeper, rail job, webhooks, alert mail) tick on their own timers
    // and share this one connection, and a connection runs one query at a time (node-postgres
    // warned "client.query() when the client is already executing a query", an error in pg 9)
    const turn = this.dutyQueue.then(() => this.claimDutyNow(name));
    this.dutyQueue = turn.catch(() => undefined);
    return turn;
  }

  private async claimDutyNow(name: string): Promise<boolean> {
    if (this.closed) return false;
    let client: pg.Client;
    try {
      client = await this.dutyConnection();
    } catch {
      return false;
    }
    if (this.held.has(name)) {
      // still ours while the connection lives; a cheap check that it does
      try {
        await client.query('SELECT 1');
        return true;
      } catch {
        this.dropDutyConnection(client);
        return false;
      }
    }
    try {
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`agentpay:duty:${name}`]);
      if (r.rows[0]?.ok) this.held.add(name);
      return r.rows[0]?.ok === true;
    } catch {
      this.dropDutyConnection(client);
      return false;
    }
  }

  private dutyConnection(): Promise<pg.Client> {
    if (this.dutyClient) return Promise.resolve(this.dutyClient);
    this.dutyConnecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000 });
      client.on('error', () => this.dropDutyConnection(client));
      try {
        await client.connect();
      } catch (e) {
        this.dutyConnecting = undefined;
        throw e;
      }
      this.dutyClient = client;
      this.dutyConnecting = undefined;
      return client;
    })();
    return this.dutyConnecting;
  }

  private dropDutyConnection(client: pg.Client): void {
    if (this.dutyClient !== client) return;
    this.dutyClient = undefined;
    this.held.clear();
    void client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const duty = this.dutyClient;
    this.dutyClient = undefined;
    this.held.clear();
    await duty?.end().catch(() => undefined);
    await this.shared.close();
    await this.pool.end();
  }
}

/**
 * Seals every wallet whose chain has entries without a hash, wallet by wallet under its lock, so
 * every chain is whole before the store serves; PgStore.open runs it after its migrations
 * (SqliteStore does the same synchronously as it opens). One indexed query once sealed. Returns
 * the entries sealed. Here, not in ../ledger-chain.ts: the ledger's rule, which the repositories
 * import, imports no Store (the repositories' types make up Repos: that would be an import cycle).
 */
async function sealLedger(store: Pick<Store, 'read' | 'tx'>): Promise<number> {
  let sealed = 0;
  for (const walletId of await store.read((r) => r.ledger.unsealedWallets())) {
    sealed += await store.tx(async (r) => {
      await r.ledger.last(walletId); // the wallet's lock
      const missing = seals(await r.ledger.list(walletId));
      for (const m of missing) await r.ledger.seal(m.id, m.hash);
      return missing.length;
    });
  }
  return sealed;
}
