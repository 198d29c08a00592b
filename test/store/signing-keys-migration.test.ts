/**
 * drizzle/0016 and drizzle-pg/0010 on a database an older agentpay left with two current signing
 * keys (instances started together each made one): all but the newest are retired, the keys' rows
 * and public halves are kept, and from then on the database refuses a second current key.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { migrate as sqliteMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import { migrate as pgMigrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsDir, pgMigrationsDir } from '../../src/paths.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** a copy of a migrations folder whose journal ends before `tag` */
function before(dir: string, tag: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'agentpay-migrations-'));
  cleanup.push(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(dir, copy, { recursive: true });
  const journalPath = join(copy, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag.endsWith(tag));
  expect(at, `${tag} in ${dir}`).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalPath, JSON.stringify(journal));
  return copy;
}

const TAG = '_signing_keys_in_database';
const rows = [
  ['sk_old', 'current', 1_000],
  ['sk_newer', 'current', 3_000],
  ['sk_middle', 'current', 2_000],
  ['sk_retired', 'retired', 500],
] as const;

async function check(store: Store) {
  const keys = await store.read((r) => r.signingKeys.all());
  expect(keys.map((k) => [k.id, k.status])).toEqual([['sk_retired', 'retired'], ['sk_old', 'retired'], ['sk_middle', 'retired'], ['sk_newer', 'current']]);
  expect(keys.find((k) => k.id === 'sk_old')!.retiredAt).toBeGreaterThan(Date.now() - 600_000);
  expect(keys.find((k) => k.id === 'sk_retired')!.retiredAt).toBe(600);
  expect((await store.read((r) => r.signingKeys.current()))!.id).toBe('sk_newer');
  expect(await store.read((r) => r.signingKeys.privateKey('sk_newer'))).toBeNull();
  await expect(store.tx((r) => r.signingKeys.insert({ id: 'sk_two', publicKeyPem: 'pem', status: 'current', createdAt: 4_000, retiredAt: null }))).rejects.toThrow();
}

describe('the signing keys migration on a database with several current keys', () => {
  it('SQLite (drizzle/0016)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-keys-migration-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'agentpay.db');
    const raw = new Database(path);
    sqliteMigrate(sqliteDrizzle(raw), { migrationsFolder: before(migrationsDir(), TAG) });
    const insert = raw.prepare('INSERT INTO signing_keys (id, public_key_pem, status, created_at, retired_at) VALUES (?, ?, ?, ?, ?)');
    for (const [id, status, at] of rows) insert.run(id, `pem of ${id}`, status, at, status === 'retired' ? 600 : null);
    raw.close();
    const store = new SqliteStore({ path });
    cleanup.push(() => store.close());
    await check(store);
  });

  it.runIf(pgEnabled())('PostgreSQL (drizzle-pg/0010)', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanup.push(() => db.drop());
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await pgMigrate(pgDrizzle(client), { migrationsFolder: before(pgMigrationsDir(), TAG) });
      for (const [id, status, at] of rows) {
        await client.query('INSERT INTO signing_keys (id, public_key_pem, status, created_at, retired_at) VALUES ($1, $2, $3, $4, $5)', [id, `pem of ${id}`, status, at, status === 'retired' ? 600 : null]);
      }
    } finally {
      await client.end();
    }
    const store = await PgStore.open({ url: db.url });
    cleanup.push(() => store.close());
    await check(store);
  });
});
