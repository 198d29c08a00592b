/**
 * PostgreSQL for tests: a fresh database with a random name per test file (created from the
 * `postgres` database of AGENTPAY_TEST_DATABASE_URL's server), dropped afterwards, so engineers
 * and workers running tests at once never share one.
 *
 * A test run that uses PostgreSQL (test/pg-setup.ts, a vitest globalSetup) migrates one template
 * database first; a migrated database for a test gateway is then a copy of it (`CREATE DATABASE …
 * TEMPLATE`), not a migration run of its own, and its name carries the run's id so that the run's
 * teardown drops whatever a test or a killed worker left behind.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { onAdmin, testDatabaseUrl } from './pg-admin.js';

export { TEST_DATABASE_URL } from './pg-admin.js';

/** Whether the suite runs on PostgreSQL as well (AGENTPAY_TEST_DATABASE_URL set). */
export const pgEnabled = (): boolean => Boolean(process.env.AGENTPAY_TEST_DATABASE_URL);

declare module 'vitest' {
  export interface ProvidedContext {
    /** this run's migrated template database (test/pg-setup.ts), and the id in every database name of the run */
    agentpayPgRun: { id: string; template: string };
  }
}

/** The run's template (test/pg-setup.ts), when this test run made one. */
function runOf(): { id: string; template: string } | undefined {
  try {
    return inject('agentpayPgRun');
  } catch {
    return undefined; // not inside a vitest worker
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A new database: empty, or with `migrated` a copy of the run's migrated template (when the run has
 * none, empty: the gateway's store migrates it at start, a second or so more).
 */
export async function createTestDatabase(prefix = 'agentpay_test', opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const run = runOf();
  const name = `${prefix}_${run ? `${run.id}_` : ''}${randomBytes(6).toString('hex')}`;
  await onAdmin((c) => c.query(`CREATE DATABASE "${name}"${opts.migrated && run ? ` TEMPLATE "${run.template}"` : ''}`));
  return {
    url: testDatabaseUrl(name),
    name,
    drop: () => onAdmin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}
