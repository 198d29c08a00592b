/**
 * The test PostgreSQL server (AGENTPAY_TEST_DATABASE_URL, else the local one): URLs of its
 * databases and statements on its `postgres` database. No vitest import: test/pg-setup.ts, a
 * globalSetup, runs outside the test workers and uses it too.
 */
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.AGENTPAY_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** the URL of a database on the test server */
export function testDatabaseUrl(name: string): string {
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs statements on the server's `postgres` database, one connection. */
export async function onAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testDatabaseUrl('postgres') });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
