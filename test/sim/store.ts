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

/** A store the simulation opened, and how to throw it away. */
export interface OpenedStore {
  store: Store;
  dispose(): Promise<void>;
}

export async function openStore(backend: Backend): Promise<OpenedStore> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-sim-'));
    // durability 'sync': a commit is durable when tx resolves (no background WAL sync to wait for)
    const store = new SqliteStore({ path: join(dir, 'sim.db') });
    return {
      store,
      dispose: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `agentpay_sim_${randomBytes(6).toString('hex')}`;
  await onAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  const drop = () => onAdmin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
  let store: PgStore;
  try {
    store = await PgStore.open({ url: testDatabaseUrl(name), poolSize: 4 });
  } catch (e) {
    await drop();
    throw e;
  }
  return {
    store,
    dispose: async () => {
      await store.close();
      await drop();
    },
  };
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

  close(): Promise<void> {
    return this.inner.close();
  }
}
