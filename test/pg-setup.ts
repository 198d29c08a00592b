/**
 * For a test run that uses PostgreSQL (vitest.config.ts adds this globalSetup then): migrates one
 * template database, and gives its name and the run's id to the tests (inject('agentpayPgRun'),
 * read by test/helpers/pg.ts), so each test gateway's database is a copy of it instead of a
 * migration run of its own. At the end it drops the template and every database of the run that is
 * still there (a gateway's kept for a restart, one a killed worker left). Made once per run however
 * many projects list it; dropped after the last of them.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { PgStore } from '../src/store/pg/pg-store.js';
import { onAdmin, testDatabaseUrl } from './helpers/pg-admin.js';

interface Shared {
  run: Promise<{ id: string; template: string }>;
  users: number;
}
const KEY = Symbol.for('agentpay.test.pgRun');
const g = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (g[KEY] ??= { run: makeTemplate(), users: 0 });
  shared.users++;
  project.provide('agentpayPgRun', await shared.run);
  return async () => {
    if (--shared.users > 0) return;
    delete g[KEY];
    const { id, template } = await shared.run;
    await onAdmin(async (c) => {
      // a worker's spare copy (test/helpers/pg.ts) may still be being made: its database appears when that ends
      const making = () => c.query(`SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query ~ $1`, [`^CREATE DATABASE "[a-z_]+_${id}_`]);
      for (const until = Date.now() + 60_000; (await making()).rowCount && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
      await c.query(`ALTER DATABASE "${template}" IS_TEMPLATE false`);
      const left = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`, [template, `%\\_${id}\\_%`]);
      // one a worker was dropping when it ended may be gone by now
      for (const { datname } of left.rows) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    });
  };
}

async function makeTemplate(): Promise<{ id: string; template: string }> {
  const id = `r${randomBytes(4).toString('hex')}`;
  const template = `agentpay_template_${id}`;
  await onAdmin((c) => c.query(`CREATE DATABASE "${template}"`));
  await PgStore.applyMigrations(testDatabaseUrl(template));
  // a template takes no connections: a copy fails while anyone is connected to it
  await onAdmin((c) => c.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`));
  return { id, template };
}
