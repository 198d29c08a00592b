/**
 * Every test file that reaches the store runs on PostgreSQL too (vitest.config.ts's `postgres`
 * project, built by test/store-reach.ts from the files' imports): this holds the rule to account.
 * A file left out of that project must show no sign of starting a store, in itself or in the test
 * helpers it imports; a file in it that opens SQLite by itself, or starts the product's gateway
 * without the run's backend, must say why (`testBackend()` in the file, or a `sqlite-only:` comment).
 * The run-time half is test/helpers/reach-check.ts: starting a test gateway, a store or the binary's
 * gateway from a file this reading does not count fails that test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKEND_STARTERS, importClosure, postgresProject, postgresTestFiles, ROOT, SELF_CHOOSING, SELF_CHOSEN, SQLITE_ONLY, storeReach, testFiles, valueImportsOf } from '../store-reach.js';

const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const code = (f: string) => text(f).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** What starts a store, written in a file: a gateway, a store, a database, the binary serving a data dir. */
const STARTS = [
  /\bstartTestGateway\s*\(/, /\bstartGateway\s*\(/, /\bnew SqliteStore\s*\(/, /\bPgStore\.open\s*\(/, /from ['"]better-sqlite3['"]/, /\bagentpay\.db\b/,
  /\bstartGatewayProcess\s*\(/, /\bagentpay dev\b/, /['"`](dev|gateway)['"`]\s*,/,
];

/** Opening SQLite by itself, past the run's backend. */
const OPENS_SQLITE = /\bnew SqliteStore\s*\(|from ['"]better-sqlite3['"]|\bagentpay\.db\b/;
/** Saying why: choosing by backend, or a comment with the reason. */
const SAYS_WHY = /\btestBackend\s*\(|sqlite-only:/;

const onPostgres = new Set(postgresTestFiles());
const files = testFiles();

describe('every test file that reaches the store runs on PostgreSQL (test/store-reach.ts)', () => {
  it('reads value imports: type-only imports and comments do not count', () => {
    const sample = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export type { C } from './c.js';",
      "import { type D, e } from './de.js';",
      "export * from './f.js';",
      "const g = await import('./g.js');",
      "// import { h } from './h.js';",
    ].join('\n');
    expect(valueImportsOf(sample).sort()).toEqual(['./a.js', './de.js', './f.js', './g.js']);
  });

  it('follows chains of helpers, and stops at a starter', () => {
    // the e2e files start their gateway through test/helpers/gateway.ts
    expect(storeReach('test/e2e/node-seller.test.ts').follows.join('\n')).toContain('test/helpers/gateway.ts');
    // the rail files through test/rails/helpers.ts
    expect(storeReach('test/rails/deposits.test.ts').follows.join('\n')).toMatch(/test\/rails\/helpers\.ts -> test\/helpers\/gateway\.ts/);
    // the test gateway's own imports (the product's gateway) are not followed further
    for (const f of files) for (const chain of storeReach(f).follows) expect(chain.split(' -> ').slice(1, -1).filter((m) => BACKEND_STARTERS.includes(m) || SELF_CHOOSING.includes(m)), chain).toEqual([]);
  });

  it('takes the families named by issue 27 and the CLI commands that serve a data dir', () => {
    for (const f of [
      'test/market/discovery.test.ts', 'test/market/capabilities.test.ts', 'test/tenancy/accounts.test.ts', 'test/tenancy/keys.test.ts',
      'test/webhooks/webhooks.test.ts', 'test/mail/alert-mail.test.ts', 'test/payments/batch.test.ts', 'test/policies/routes.test.ts',
      'test/rails/payouts.test.ts', 'test/gateway/fuzz.test.ts', 'test/cli/dev/dev.test.ts', 'test/cli/gateway/start.test.ts',
      'test/e2e/node-seller.test.ts', 'test/mcp/paid-tools.test.ts', 'test/dashboard/dashboard.test.ts',
    ]) {
      expect(onPostgres.has(f), f).toBe(true);
    }
    expect(onPostgres.has('test/core/ids.test.ts')).toBe(false);
  });

  it("vitest.config.ts's folders select exactly these files, and a folder left off or named idly fails the config", async () => {
    const config = text('vitest.config.ts');
    const folders = [...config.match(/const POSTGRES_FOLDERS = \[([^\]]*)\]/)![1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
    const { include, exclude } = postgresProject(folders);
    const selected = files.filter((f) => include.some((g) => f.startsWith(g.replace('**/*.test.ts', ''))) && !exclude.includes(f));
    expect(selected).toEqual([...onPostgres].sort());
    expect(() => postgresProject(folders.filter((d) => d !== 'payments'))).toThrow(/test\/payments\/.*POSTGRES_FOLDERS does not name its folder/);
    expect(() => postgresProject([...folders, 'core'])).toThrow(/names core, where no test file reaches the store/);
  });

  it('SQLITE_ONLY names existing test files that reach a store, each with its reason', () => {
    for (const [f, why] of Object.entries(SQLITE_ONLY)) {
      expect(files, f).toContain(f);
      expect(why.length, `${f}: say why it stays on SQLite`).toBeGreaterThan(20);
      expect(storeReach(f).follows.length > 0 || STARTS.some((p) => p.test(text(f))), `${f} never reaches a store: it needs no place in SQLITE_ONLY`).toBe(true);
    }
  });

  it('a file left out of the postgres project shows no sign of starting a store, nor do the test helpers it imports', () => {
    const found: string[] = [];
    for (const f of files) {
      if (onPostgres.has(f) || f in SQLITE_ONLY || SELF_CHOSEN.test(code(f))) continue;
      for (const [dep] of importClosure(f)) {
        if (!dep.startsWith('test/') || BACKEND_STARTERS.includes(dep) || SELF_CHOOSING.includes(dep) || dep === 'test/cli/helpers.ts' || dep === 'test/store-reach.ts') continue;
        const hit = STARTS.find((p) => p.test(dep === f ? text(dep) : code(dep)));
        if (hit) found.push(`${f}${dep === f ? '' : ` (through ${dep})`}: ${hit}`);
      }
    }
    expect(found, 'these reach a store but do not run on PostgreSQL: start it through test/helpers/gateway.ts (or backendOptions), or add the file to SQLITE_ONLY in test/store-reach.ts with the reason').toEqual([]);
  });

  it('a file of the postgres project that opens SQLite itself, or starts the product gateway, says why or follows the run', () => {
    const found: string[] = [];
    for (const f of onPostgres) {
      const c = code(f);
      if (OPENS_SQLITE.test(c) && !SAYS_WHY.test(text(f))) found.push(`${f}: opens SQLite itself`);
      // backendOptions(dataDir), or a database of its own passed on (a second instance on a test gateway's)
      if (/\bstartGateway\s*\(/.test(c) && !/\bbackendOptions\s*\(|\bdatabase\b/.test(c) && !/sqlite-only:/.test(text(f))) found.push(`${f}: startGateway without backendOptions(dataDir) or a database`);
    }
    expect(found, 'on the postgres project these would test SQLite again: follow the run (sqliteOf, backendOptions, startTestGateway) or say `sqlite-only: <reason>` beside it').toEqual([]);
  });
});
