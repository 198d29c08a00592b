import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { postgresProject } from './test/store-reach.js';

/**
 * The SDK is a workspace package (packages/sdk): the gateway and CLI import it by name. Tests run
 * its TypeScript sources: each export of packages/sdk/package.json is aliased to the file its
 * `agentpay-source` condition names. An alias, not `resolve.conditions`: vitest hands conditions to
 * Node too, and then dist/ code that the tests import natively (the CLI's manifest, the binary in
 * process) would be pointed at .ts files Node cannot load. Child processes that run dist/ use the
 * SDK's dist/, which test/global-setup.ts builds first.
 */
const sdk = JSON.parse(readFileSync(new URL('./packages/sdk/package.json', import.meta.url), 'utf8')) as { exports: Record<string, string | { 'agentpay-source'?: string }> };
const SDK_SOURCES = Object.entries(sdk.exports).flatMap(([key, target]) => {
  const source = typeof target === 'object' ? target['agentpay-source'] : undefined;
  if (!source) return [];
  const name = key === '.' ? 'agentpay-sdk' : `agentpay-sdk/${key.slice(2)}`;
  return [{ find: new RegExp(`^${name.replace(/[/.-]/g, '\\$&')}$`), replacement: fileURLToPath(new URL(`./packages/sdk/${source.slice(2)}`, import.meta.url)) }];
});

/**
 * Test files that need a fresh process: they load a library that reads the environment once, when it
 * is first imported (ink decides then whether it is in CI), so they cannot follow a file that loaded
 * it already. They are a project of their own; vitest runs each project's files in workers of their
 * own, started after the other project's are done.
 */
const FRESH_PROCESS = ['test/cli/policies/approvals-screen-width.test.ts'];

/**
 * With AGENTPAY_TEST_DATABASE_URL set (.ci/run sets it), every test file that reaches the store runs a
 * second time, on PostgreSQL: the `postgres` project, AGENTPAY_TEST_BACKEND=postgres. Its include is
 * one glob per folder of POSTGRES_FOLDERS below (test/core and test/packaging hold no file that
 * reaches a store; test/store's files run both backends themselves, in the `suite` project). Its
 * exclude is computed: test/store-reach.ts reads each file's value imports (through test helpers and src/) and
 * takes every file that starts a test gateway (test/helpers/gateway.ts), the product's gateway
 * (src/gateway/server.ts) or a SQLite store, or runs the binary with `dev`, `demo` or `gateway`
 * (test/cli/helpers.ts then gives the child a PostgreSQL database of its own). Left out: files that
 * never reach a store (pure functions, the SDK alone, help texts), files that run both backends
 * themselves in the suite (test/helpers/store-backends.ts, test/helpers/pg.ts: the store contract,
 * spend, fleet), and SQLITE_ONLY, tests of SQLite's own file, each with its reason.
 * test/conventions/backends.test.ts fails when a file left out does reach a store, and when a file
 * of this project opens SQLite by itself without saying why; test/helpers/reach-check.ts fails a test
 * that starts a gateway or store from a file the reading missed. A new test file is picked up as it is.
 * Each test gateway gets a database of its own (test/helpers/gateway.ts), a copy of a template the
 * run migrates once (test/pg-setup.ts), made while the test before runs and dropped after it
 * without waiting (the run's teardown drops what is left). A test gateway's start and close on
 * PostgreSQL takes 0.12-0.3 s on this 2-core machine (SQLite: 0.06-0.14 s).
 * Measured (2 workers, on a 2-core machine shared with other suites: load 11 to 14), the project's
 * then 152 files folder by folder: test/cli 590 s (the binary spawned some 300 times), gateway and
 * conventions 144 s, payments, wallets, policies and rails 155 s, e2e, mcp, interop, dashboard, sdk
 * and templates 117 s, market, mail, webhooks and tenancy 87 s: 1,093 s of wall time in all, about
 * 18 minutes at that load (each run's build and template besides). Not measured whole on an
 * unshared machine (the full project was not run at once here): the project was then 152 of the suite's
 * 206 files, the same tests on a slower gateway start, so it should add about what the suite
 * takes (CI was about 8 minutes in all before), keeping `npm test` with both backends within 25.
 */
const POSTGRES_FOLDERS = [
  'cli', 'conventions', 'dashboard', 'e2e', 'fleet', 'gateway', 'interop', 'mail', 'market', 'mcp',
  'payments', 'policies', 'rails', 'sdk', 'templates', 'tenancy', 'wallets', 'webhooks',
];
const ON_POSTGRES = postgresProject(POSTGRES_FOLDERS);

/** Whether this run uses PostgreSQL: then test/pg-setup.ts makes the run's template database first. */
const PG_SETUP = process.env.AGENTPAY_TEST_DATABASE_URL || process.env.AGENTPAY_TEST_BACKEND === 'postgres' ? ['test/pg-setup.ts'] : [];

export default defineConfig({
  resolve: { alias: SDK_SOURCES },
  test: {
    testTimeout: 90_000, // CLI tests spawn the binary several times; generous for a loaded 2-core machine
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest's default is one worker on a 2-core machine; most files wait on sockets, fsync
    // and child processes, so two workers halve the wall time (494 s -> 235 s measured here)
    maxWorkers: 2,
    minWorkers: 1,
    // Each worker runs its files one after another in one process, importing fastify, drizzle, the
    // MCP SDK and our sources once instead of once per file: collecting went from 225 s to 28 s of
    // CPU and the suite from 618 s to 416 s on this 2-core machine (CI=true, 148 files). Every file
    // starts its own gateways, databases and temp dirs and restores what it changes of process.env,
    // so nothing one file leaves behind is seen by the next. (The forks pool takes this from the
    // root config only, not per project.)
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: FRESH_PROCESS, globalSetup: ['test/global-setup.ts', ...PG_SETUP] },
      },
      { extends: true, test: { name: 'fresh-process', include: FRESH_PROCESS } },
      ...(process.env.AGENTPAY_TEST_DATABASE_URL
        ? [{ extends: true as const, test: { name: 'postgres', include: ON_POSTGRES.include, exclude: ON_POSTGRES.exclude, env: { AGENTPAY_TEST_BACKEND: 'postgres' }, globalSetup: ['test/global-setup.ts', ...PG_SETUP] } }]
        : []),
    ],
  },
});
