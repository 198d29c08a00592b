/**
 * PostgreSQL for tests: a fresh database with a random name per test file (created from the
 * `postgres` database of AGENTPAY_TEST_DATABASE_URL's server), dropped afterwards, so engineers
 * and workers running tests at once never share one.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.AGENTPAY_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the suite runs on PostgreSQL as well (AGENTPAY_TEST_DATABASE_URL set). */
export const pgEnabled = (): boolean => Boolean(process.env.AGENTPAY_TEST_DATABASE_URL);

function adminUrl(): string {
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = '/postgres';
  return u.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'agentpay_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
