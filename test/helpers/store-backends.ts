/**
 * The Store backends a test runs on: SQLite always (a file in a temp dir), PostgreSQL too when
 * AGENTPAY_TEST_DATABASE_URL is set (a fresh database, dropped by teardown). Use with
 * `describe.each(storeBackends('name'))`; `open` may be called more than once (several stores on
 * one database, as a fleet has).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from './pg.js';

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** `poolSize`: PostgreSQL's pool of connections (SQLite has one connection) */
  open(opts?: { poolSize?: number }): Promise<Store>;
  /** runs SQL outside the store, as an operator with a database shell would */
  exec(store: Store, sql: string): Promise<void>;
}

export function storeBackends(tempPrefix: string): StoreBackend[] {
  let dir = '';
  let db: TestDatabase | undefined;
  const sqlite: StoreBackend = {
    name: 'sqlite',
    setup: async () => { dir = mkdtempSync(join(tmpdir(), `agentpay-${tempPrefix}-`)); },
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
    open: async () => new SqliteStore({ path: join(dir, 'test.db') }),
    exec: async (s, sql) => { (s as SqliteStore).raw.prepare(sql).run(); },
  };
  const postgres: StoreBackend = {
    name: 'postgres',
    setup: async () => { db = await createTestDatabase(); },
    teardown: async () => db?.drop(),
    open: (opts) => PgStore.open({ url: db!.url, poolSize: opts?.poolSize }),
    exec: async (s, sql) => { await (s as PgStore).pool.query(sql); },
  };
  return pgEnabled() ? [sqlite, postgres] : [sqlite];
}
