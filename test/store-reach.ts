/**
 * Which test files reach the store, read from the files themselves, so that every one of them runs on
 * PostgreSQL as well as SQLite without a hand-kept list (vitest.config.ts builds its `postgres`
 * project from `postgresTestFiles()`; test/conventions/backends.test.ts holds the rule to account).
 *
 * A test file reaches the store when it imports, directly or through any chain of value imports
 * (`import type` does not count) of files under test/ and src/, a module that opens one:
 * - BACKEND_STARTERS: the test gateway (test/helpers/gateway.ts; it counts when a test file of the
 *   chain calls startTestGateway or openTestStore: other files import it for sqliteOf and the like),
 *   the product's gateway (src/gateway/server.ts) and the SQLite store itself: these follow
 *   AGENTPAY_TEST_BACKEND, or must be made to (a test that opens SQLite on purpose says so:
 *   SQLITE_ONLY, or `testBackend()` / a `sqlite-only:` comment in the file);
 * - SELF_CHOOSING: the helpers that run a test on both backends themselves (store-backends.ts,
 *   pg.ts, the PostgreSQL store): such a file runs on PostgreSQL in the `suite` project already
 *   and is in the `postgres` project only when it also reaches a BACKEND_STARTER (the SQLite store
 *   it opens beside storeBackends() does not count);
 * or when it runs the `agentpay` binary (test/cli/helpers.ts, bin/run.js, a packed .bin/agentpay) with a
 * command that opens a data dir's store (a quoted 'dev' or 'gateway' in its source).
 * A chain ends at a starter: what a starter imports itself is its business.
 *
 * No Node-only imports beyond fs and path: vitest.config.ts loads this.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Modules that open a store on the backend the run chooses (AGENTPAY_TEST_BACKEND), or on SQLite when a test does not pass one. */
export const BACKEND_STARTERS = ['test/helpers/gateway.ts', 'src/gateway/server.ts', 'src/store/sqlite/sqlite-store.ts'];
const TEST_GATEWAY = 'test/helpers/gateway.ts';
const SQLITE_STORE = 'src/store/sqlite/sqlite-store.ts';
/** Modules through which a test runs on both backends by itself (AGENTPAY_TEST_DATABASE_URL, read in the `suite` project). */
export const SELF_CHOOSING = ['test/helpers/store-backends.ts', 'test/helpers/pg.ts', 'src/store/pg/pg-store.ts'];
/** The modules through which a test runs the binary. */
const BINARY_HELPERS = ['test/cli/helpers.ts'];
/** A binary run named in a file's own text (a spawn of bin/run.js or of an installed agentpay). */
const BINARY_TEXT = /bin\/run\.js|\.bin\/agentpay/;
/** A command of the binary that opens a data dir's store: `agentpay dev`, `gateway start|operator-key` (`demo` takes no database: SQLITE_ONLY). */
const STORE_COMMAND = /['"`](dev|gateway)['"`]/;
/** A file that runs both backends itself (storeBackends(), or PostgreSQL when the run has it): what it opens of SQLite beside that is its own. */
export const SELF_CHOSEN = /\b(storeBackends|createTestDatabase|pgEnabled)\s*\(/;

/**
 * Test files that stay on SQLite, each with the reason: tests of SQLite's own file (its modes, WAL,
 * damage, query plans), for which PostgreSQL has no counterpart, and runs of the product as a user
 * starts it, with its default store and no way to name another. Nothing else belongs here: a test
 * of one backend inside a file that runs on both says `sqlite-only: <reason>` beside it.
 */
export const SQLITE_ONLY: Readonly<Record<string, string>> = {
  'test/store/sqlite-store.test.ts': 'the SQLite store itself: its file, pragmas and WAL',
  'test/store/wal-sync.test.ts': "SQLite's WAL file synced to a second file",
  'test/gateway/data-dir-damage.test.ts': "a damaged or missing agentpay.db in the data dir (PostgreSQL's damage is the server's)",
  'test/gateway/files-at-rest.test.ts': "the modes of the data dir's files, agentpay.db and its -wal/-shm among them",
  'test/market/discovery-scale.test.ts': "the SQLite discovery query's plan on a large catalog (src/store/sql/discovery.ts; PostgreSQL's is the server's)",
  'test/gateway/key-dir.test.ts': "the signing keys' DATA_DIR/keys files, which a sandbox on PostgreSQL does not use: it keeps them in the database (test/store/signing-keys.test.ts, test/fleet/signing-keys.test.ts)",
  'test/cli/demo/demo.test.ts': 'agentpay demo runs its own sandbox gateway in a temp dir, on SQLite (it takes no --database)',
  'test/templates/templates.test.ts': "a generated project's own npm test and npm run e2e against agentpay dev, run as a user would, with its default store",
  'test/packaging/packed.test.ts': "the packed tarball installed and run as a user would, with its default store (the binary's PostgreSQL paths run in test/cli)",
  'test/packaging/docs.test.ts': "the docs' programs run as a user pastes them, against agentpay dev with its default store (the binary's PostgreSQL paths run in test/cli)",
};

/** Every test file of the suite, repository-relative, sorted. */
export function testFiles(): string[] {
  return [...walk('test'), ...walk('src')].filter((f) => f.endsWith('.test.ts')).sort();
}

function walk(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(join(ROOT, dir))) return out;
  for (const name of readdirSync(join(ROOT, dir))) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...walk(rel));
    else out.push(rel);
  }
  return out;
}

const IMPORT = /(?:^|[\s;])(import|export)\s([^'"`;]*?)from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;

/** The module specifiers a file's code imports as values (type-only imports and comments left out). */
export function valueImportsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  for (const m of code.matchAll(IMPORT)) {
    if (m[3] !== undefined) {
      const clause = m[2]!.trim();
      if (/^type\s/.test(clause)) continue; // import type { X } from / export type { X } from
      out.push(m[3]);
    } else out.push((m[4] ?? m[5])!);
  }
  return out;
}

/** A relative specifier resolved to the repository file it names (`.js` written for a `.ts` source), or null. */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const target = relative(ROOT, resolve(ROOT, dirname(from), spec));
  const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target.replace(/\.mjs$/, '.mts'), `${target}.ts`, join(target, 'index.ts')];
  return candidates.find((c) => existsSync(join(ROOT, c)) && statSync(join(ROOT, c)).isFile()) ?? null;
}

const importsCache = new Map<string, string[]>();
function importsOfFile(file: string): string[] {
  let list = importsCache.get(file);
  if (!list) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    list = /\.(ts|tsx|mts|js|mjs)$/.test(file) ? valueImportsOf(text).flatMap((s) => resolveImport(file, s) ?? []) : [];
    importsCache.set(file, list);
  }
  return list;
}

/** Every file a file's value imports reach, with the chain that reached each (file first). */
export function importClosure(file: string): Map<string, string[]> {
  const seen = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  while (queue.length) {
    const at = queue.shift()!;
    // a starter is where a chain ends: what it imports itself (the test gateway imports the product's) is its business
    if (at !== file && (SELF_CHOOSING.includes(at) || BACKEND_STARTERS.includes(at))) continue;
    for (const next of importsOfFile(at)) {
      if (seen.has(next)) continue;
      seen.set(next, [...seen.get(at)!, next]);
      queue.push(next);
    }
  }
  return seen;
}

export interface StoreReach {
  /** import chains to a BACKEND_STARTER, or a binary run that opens a store */
  follows: string[];
  /** import chains to a SELF_CHOOSING module */
  chooses: string[];
}

/** How a test file reaches the store; both lists empty: it never does. */
export function storeReach(file: string): StoreReach {
  const closure = importClosure(file);
  const chains = (mods: string[]) => mods.flatMap((m) => (closure.has(m) ? [closure.get(m)!.join(' -> ')] : []));
  // the test gateway's module is imported for its helpers too (sqliteOf, testBackend): it counts when a test file of the chain starts one
  const startsTestGateway = [...closure.keys()].some((f) => f.startsWith('test/') && f !== TEST_GATEWAY && /\b(startTestGateway|openTestStore)\s*\(/.test(readFileSync(join(ROOT, f), 'utf8')));
  const text = readFileSync(join(ROOT, file), 'utf8');
  const selfChosen = SELF_CHOSEN.test(text);
  const follows = chains(BACKEND_STARTERS.filter((m) => (m !== TEST_GATEWAY || startsTestGateway) && !(selfChosen && m === SQLITE_STORE)));
  const runsBinary = BINARY_HELPERS.some((m) => closure.has(m)) || BINARY_TEXT.test(text);
  if (runsBinary && STORE_COMMAND.test(text)) follows.push(`${file} runs the agentpay binary with ${text.match(STORE_COMMAND)![0]}`);
  return { follows, chooses: chains(SELF_CHOOSING) };
}

/**
 * The `postgres` project's files as vitest takes them, for the folders vitest.config.ts names (written
 * out there, so a reader sees what runs on PostgreSQL): `include`, one glob per folder, and `exclude`,
 * the files of those folders that never reach a store (pure functions, help texts) or stay on SQLite
 * (SQLITE_ONLY). Together they select exactly postgresTestFiles(). A reaching file outside the
 * folders throws, naming it, so a new folder cannot be left off PostgreSQL silently; so does a
 * folder that holds no reaching file.
 */
export function postgresProject(folders: readonly string[]): { include: string[]; exclude: string[] } {
  const on = new Set(postgresTestFiles());
  const inFolder = (f: string) => folders.some((d) => f.startsWith(`test/${d}/`));
  const outside = [...on].filter((f) => !inFolder(f));
  if (outside.length) throw new Error(`vitest.config.ts: ${outside.join(', ')} reach(es) the store, but POSTGRES_FOLDERS does not name its folder: add it`);
  const idle = folders.filter((d) => ![...on].some((f) => f.startsWith(`test/${d}/`)));
  if (idle.length) throw new Error(`vitest.config.ts: POSTGRES_FOLDERS names ${idle.join(', ')}, where no test file reaches the store: take it out`);
  return {
    include: folders.map((d) => `test/${d}/**/*.test.ts`),
    exclude: testFiles().filter((f) => inFolder(f) && !on.has(f)),
  };
}

/**
 * The files of the `postgres` project: every test file that reaches a BACKEND_STARTER (or runs the
 * binary's store), but the SQLITE_ONLY ones.
 */
export function postgresTestFiles(): string[] {
  return testFiles().filter((f) => !(f in SQLITE_ONLY) && storeReach(f).follows.length > 0);
}
