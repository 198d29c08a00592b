/**
 * The store a simulation runs on: a real SQLite file in a temp dir, or a fresh PostgreSQL
 * database (AGENTPAY_TEST_DATABASE_URL's server) dropped after the run; wrapped so that a step
 * can make its next database transaction die before or after its commit, and so that a test can
 * plant a bug between the domain and the store (`plant`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ReadOptions, Repos, Store } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { onAdmin, testDatabaseUrl } from '../helpers/pg-admin.js';

export type Backend = 'sqlite' | 'postgres';

/** The backend of a simulation: PostgreSQL when AGENTPAY_TEST_BACKEND says so, or (outside the test suite) when AGENTPAY_TEST_DATABASE_URL is set. */
export function simBackend(env: NodeJS.ProcessEnv = process.env): Backend {
  if (env.AGENTPAY_TEST_BACKEND) return env.AGENTPAY_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
  return env.AGENTPAY_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
}

/** A store a run uses, and how to let it go after the run. */
export interface OpenedStore {
  store: Store;
  dispose(): Promise<void>;
}

/** A new PostgreSQL database for one run (default: an empty one on AGENTPAY_TEST_DATABASE_URL's server, migrated at open). */
export type NewDatabase = () => Promise<{ url: string; drop(): Promise<void> }>;

const newEmptyDatabase: NewDatabase = async () => {
  const name = `agentpay_sim_${randomBytes(6).toString('hex')}`;
  await onAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  return { url: testDatabaseUrl(name), drop: () => onAdmin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))) };
};

/**
 * The stores of one process's runs. SQLite: a new file in a temp dir per run. PostgreSQL: one
 * database (made on first use, dropped by `close`) and one open store, emptied before each run
 * (every table truncated: the append-only ledger's TRUNCATE trigger is switched off for that
 * statement alone) and opened again; a new database and its migrations for each run would cost a
 * second or more.
 */
export class Stores {
  private pg?: { store: PgStore; url: string; drop(): Promise<void> };
  private used = false;

  constructor(readonly backend: Backend, private newDatabase: NewDatabase = newEmptyDatabase) {}

  async open(): Promise<OpenedStore> {
    if (this.backend === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'agentpay-sim-'));
      const store = new SqliteStore({ path: join(dir, 'sim.db') });
      return {
        store,
        dispose: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (!this.pg) {
      const { url, drop } = await this.newDatabase();
      try {
        this.pg = { store: await PgStore.open({ url, poolSize: 4 }), url, drop };
      } catch (e) {
        await drop();
        throw e;
      }
    } else if (this.used) {
      await emptyDatabase(this.pg.store);
      // a store keeps the ledger heads it committed (src/store/pg/ledger-heads.ts): emptied behind
      // its back, it is opened again, as a gateway would be after its database was replaced
      await this.pg.store.close();
      this.pg.store = await PgStore.open({ url: this.pg.url, poolSize: 4 });
    }
    this.used = true;
    // closed by `close`, not after each run
    return { store: this.pg.store, dispose: async () => {} };
  }

  async close(): Promise<void> {
    if (!this.pg) return;
    const { store, drop } = this.pg;
    this.pg = undefined;
    await store.close();
    await drop();
  }
}

async function emptyDatabase(store: PgStore): Promise<void> {
  const { rows } = await store.pool.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  const tables = rows.map((r) => `"${r.tablename}"`).join(', ');
  const c = await store.pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_no_truncate');
    await c.query(`TRUNCATE ${tables} RESTART IDENTITY CASCADE`);
    await c.query('ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_no_truncate');
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK');
    throw e;
  } finally {
    c.release();
  }
}

/** The error of an injected fault: the transaction died just before its commit (rolled back) or just after it (committed). */
export class InjectedFault extends Error {
  override readonly name = 'InjectedFault';
  constructor(readonly when: 'before' | 'after') {
    super(`injected fault: the transaction died ${when} its commit`);
  }
}

/** A bug planted between the domain and the store (tests of the simulation itself): repos as the domain sees them. */
export type Plant = (r: Repos) => Repos;

/**
 * The store as the domain sees it. `arm('before')` makes the next `tx` run and then die before
 * its commit (everything it wrote is rolled back); `arm('after')` lets it commit and then
 * throws, as a process that dies between the commit and the answer. `committed` counts commits.
 */
export class FaultyStore implements Store {
  private armed: 'before' | 'after' | undefined;
  committed = 0;

  constructor(readonly inner: Store, private plant?: Plant) {}

  arm(when: 'before' | 'after' | undefined): void {
    this.armed = when;
  }

  /** whether an armed fault is still waiting for a transaction */
  get pending(): boolean {
    return this.armed !== undefined;
  }

  private repos(r: Repos): Repos {
    return this.plant ? this.plant(r) : r;
  }

  async tx<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    const fault = this.armed;
    this.armed = undefined;
    const out = await this.inner.tx(async (r) => {
      const v = await fn(this.repos(r));
      if (fault === 'before') throw new InjectedFault('before');
      return v;
    });
    this.committed++;
    if (fault === 'after') throw new InjectedFault('after');
    return out;
  }

  read<T>(fn: (r: Repos) => Promise<T>, opts?: ReadOptions): Promise<T> {
    return this.inner.read((r) => fn(this.repos(r)), opts);
  }

  claimDuty(name: string): Promise<boolean> {
    return this.inner.claimDuty(name);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
