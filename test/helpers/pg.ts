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
import { existsSync } from 'node:fs';
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
  /** whether the run's teardown (test/pg-setup.ts) drops it if nothing else does */
  ofRun: boolean;
  drop(): Promise<void>;
}

/**
 * A new database: empty, or with `migrated` a copy of the run's migrated template (when the run has
 * none, empty: the gateway's store migrates it at start, a second or so more). The copy writes the
 * whole template to the WAL and syncs it, 0.1 s on an idle machine, 0.5 to 1.7 s beside a loaded
 * suite; so the next copy is made while the test that asked for this one runs, and handed out at
 * the next call (the last one of a worker is dropped by the run's teardown).
 */
export async function createTestDatabase(prefix = 'agentpay_test', opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const run = runOf();
  if (!opts.migrated || !run) return makeDatabase(prefix, run, undefined);
  const key = `${prefix} ${run.template}`;
  const next = spares.get(key) ?? makeDatabase(prefix, run, run.template);
  const spare = makeDatabase(prefix, run, run.template);
  spare.catch(() => undefined); // a failure is thrown to the call that takes it
  spares.set(key, spare);
  return next;
}

/** the next copy of the template, per name prefix, already under way */
const spares = new Map<string, Promise<TestDatabase>>();

async function makeDatabase(prefix: string, run: { id: string } | undefined, template: string | undefined): Promise<TestDatabase> {
  const name = `${prefix}_${run ? `${run.id}_` : ''}${randomBytes(6).toString('hex')}`;
  await onAdmin((c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
  return {
    url: testDatabaseUrl(name),
    name,
    ofRun: Boolean(run),
    drop: () => onAdmin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

/**
 * The database that serves a data dir in this worker, for tests that start the product's gateway
 * (test/helpers/gateway.ts backendOptions) or the binary (test/cli/helpers.ts) on the `postgres`
 * project: one per data dir, the same each time that data dir is served again, by either. A copy
 * of the run's migrated template, dropped once its data dir is gone (seen at a later call), or by the
 * run's teardown.
 */
export function databaseOfDataDir(dataDir: string): Promise<TestDatabase> {
  // one whose data dir was there and a test has removed since is dropped now (8 MB each: a file of
  // binary runs makes dozens); one whose data dir is not made yet (a binary starting) is kept
  for (const [dir, entry] of ofDataDir) {
    if (existsSync(dir)) entry.seen = true;
    else if (entry.seen && dir !== dataDir) {
      ofDataDir.delete(dir);
      void entry.db.then((d) => d.drop()).catch(() => undefined);
    }
  }
  let entry = ofDataDir.get(dataDir);
  if (!entry) ofDataDir.set(dataDir, (entry = { db: createTestDatabase('agentpay_test', { migrated: true }), seen: existsSync(dataDir) }));
  return entry.db;
}
const ofDataDir = new Map<string, { db: Promise<TestDatabase>; seen: boolean }>();
