/**
 * `--database` on the CLI: `agentpay gateway migrate` migrates once however many run at once, a
 * URL that is wrong or a server that refuses is one DATABASE_ERROR naming the setting, a database
 * newer than the code is refused, and the password never reaches the output or a log line.
 * Needs PostgreSQL: runs when AGENTPAY_TEST_DATABASE_URL is set.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../../helpers/pg.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';
import { readFileSync } from 'node:fs';

/** the PostgreSQL migrations the package ships (drizzle-pg/meta/_journal.json) */
const MIGRATIONS = (JSON.parse(readFileSync(new URL('../../../drizzle-pg/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }).entries.length;

const SECRET = 'pw-must-not-show';
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = SECRET; // trust auth on the test server: any password is accepted
  return u.toString();
};

describe.skipIf(!pgEnabled())('agentpay gateway migrate and --database', () => {
  let db: TestDatabase;
  let configDir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    configDir = tempDir();
  });
  afterAll(async () => {
    await db.drop();
    removeTempDirs();
  });

  it('migrates a new database once when three runs start together, then finds nothing to do', async () => {
    const url = withPassword(db.url);
    const runs = await Promise.all([0, 1, 2].map(() => cli(['gateway', 'migrate', '--database', url, '--json'], { configDir })));
    for (const r of runs) {
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
    const applied = runs.map((r) => json<{ applied: number; database: string }>(r));
    expect(applied.map((a) => a.applied).sort()).toEqual([0, 0, MIGRATIONS]);
    expect(applied[0]!.database).toContain(':***@');
    const again = json<{ applied: number }>(await cli(['gateway', 'migrate', '--json'], { configDir, env: { AGENTPAY_DATABASE_URL: url } }));
    expect(again.applied).toBe(0);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      expect((await c.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')).rows[0].n).toBe(MIGRATIONS);
    } finally {
      await c.end();
    }
  });

  it('refuses a URL that is not PostgreSQL (exit 2) and a refused connection (exit 1), naming the setting, never the password', async () => {
    const bad = await cli(['gateway', 'migrate', '--database', `mysql://root:${SECRET}@127.0.0.1/x`, '--json'], { configDir });
    expect(bad.exitCode).toBe(2);
    expect(json(bad).error).toMatchObject({ code: 'DATABASE_ERROR', details: { flag: '--database', reason: 'url' } });
    const refused = await cli(['gateway', 'start', '--data-dir', tempDir(), '--port', '0', '--http-port', '0', '--json'], {
      configDir, env: { AGENTPAY_DATABASE_URL: `postgres://postgres:${SECRET}@127.0.0.1:1/agentpay` },
    });
    expect(refused.exitCode).toBe(1);
    const err = json(refused).error;
    expect(err).toMatchObject({ code: 'DATABASE_ERROR', details: { flag: '--database', env: 'AGENTPAY_DATABASE_URL', reason: 'connect' } });
    expect(err.message).toMatch(/^AGENTPAY_DATABASE_URL: cannot connect to the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/agentpay/);
    for (const r of [bad, refused]) expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('refuses to start on a database migrated by a newer agentpay', async () => {
    const newer = await createTestDatabase();
    try {
      expect((await cli(['gateway', 'migrate', '--database', newer.url, '--json'], { configDir })).exitCode).toBe(0);
      const c = new pg.Client({ connectionString: newer.url });
      await c.connect();
      try {
        await c.query(`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-the-future', $1)`, [Date.UTC(2100, 0, 1)]);
      } finally {
        await c.end();
      }
      const r = await cli(['gateway', 'start', '--database', newer.url, '--data-dir', tempDir(), '--port', '0', '--http-port', '0', '--json'], { configDir });
      expect(r.exitCode).toBe(1);
      expect(json(r).error).toMatchObject({ code: 'DATABASE_ERROR', details: { flag: '--database', reason: 'newer' } });
      expect(json(r).error.message).toContain('newer than this agentpay');
    } finally {
      await newer.drop();
    }
  });
});
