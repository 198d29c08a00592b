/**
 * The bench's gateway process: startGateway on 127.0.0.1 (HTTPS, no plain listener) on a
 * fresh data directory, with the dev bootstrap's workspace and verified provider. The
 * store is the default one (WAL, synchronous=FULL, group commit), or PostgreSQL when
 * BENCH_DATABASE_URL is set (the store as shipped: a pool of 10). Only the rate limit is
 * raised, since the bench pushes one seller key far past the 50 requests/s default; the
 * limiter itself still runs on every request.
 *
 * A second instance of a fleet (bench --instances 2) gets the first one's data directory in
 * BENCH_DATA_DIR (signing keys, TLS CA, dev credentials), which the parent owns and removes.
 * On PostgreSQL the usage report also counts the queries the driver sent (each one round trip:
 * node-postgres does not pipeline), BEGIN to COMMIT included.
 */
import type { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureDevCredentials } from '../src/gateway/dev-credentials.js';
import { startGateway } from '../src/gateway/server.js';
import { balanceOf } from '../src/domain/wallets/ledger.js';
import { ready, serve } from './lib/ipc.js';
import { UsageMeter } from './lib/usage.js';

const database = process.env.BENCH_DATABASE_URL || undefined;
const sharedDataDir = process.env.BENCH_DATA_DIR || undefined;
const dataDir = sharedDataDir ?? mkdtempSync(join(tmpdir(), 'agentpay-bench-'));

// every query the PostgreSQL driver sends (counted before the store opens, so the pool's clients are covered)
const queries = { count: 0, commits: 0, rollbacks: 0, commitMs: 0, maxCommitMs: 0 };
/** queries by statement: a prepared statement's name, else the text's first 60 characters */
let statements = new Map<string, number>();
if (database) {
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const rawQuery = pg.Client.prototype.query as unknown as Query;
  (pg.Client.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
    queries.count++;
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    if (text === 'ROLLBACK') queries.rollbacks++;
    const key = (first as { name?: string } | undefined)?.name ?? (text ?? '?').replace(/\s+/g, ' ').slice(0, 60);
    statements.set(key, (statements.get(key) ?? 0) + 1);
    if (text !== 'COMMIT') return rawQuery.apply(this, args);
    queries.commits++;
    const t = performance.now();
    const out = rawQuery.apply(this, args);
    void Promise.resolve(out).then(() => {
      const ms = performance.now() - t;
      queries.commitMs += ms;
      queries.maxCommitMs = Math.max(queries.maxCommitMs, ms);
    }, () => undefined);
    return out;
  };
}

const gw = await startGateway({
  dataDir,
  ...(database ? { database } : {}),
  host: '127.0.0.1',
  port: 0,
  httpPort: null,
  logger: false,
  // BENCH_DURABILITY=in-commit: SQLite syncs inside COMMIT (synchronous=FULL), for comparison
  ...(process.env.BENCH_DURABILITY === 'in-commit' ? { durability: 'in-commit' as const } : {}),
  config: { rateLimit: { max: 100_000_000, windowMs: 1000, signupMax: 10, signupWindowMs: 60_000, paymentMax: 100_000_000 } },
});
const creds = await ensureDevCredentials(gw.services.ctx, dataDir);

// TLS handshakes tell whether the seller reuses its connections (keep-alive)
let handshakes = 0;
gw.app.server.on('secureConnection', () => handshakes++);

const usage = new UsageMeter();
// commits: how many, how long (fsync included), how many transactions each carried
const commits = { count: 0, ms: 0, maxMs: 0, savepoints: 0 };
const rawTx = gw.store.tx.bind(gw.store);
gw.store.tx = ((fn) => {
  commits.savepoints++; // one savepoint per transaction inside the batch's commit
  return rawTx(fn);
}) as typeof gw.store.tx;
// the SQLite gateway this bench starts (startGateway without a database URL)
if (!database) {
  const lite = gw.store as SqliteStore;
  const rawExec = lite.raw.exec.bind(lite.raw);
  lite.raw.exec = ((sql: string) => {
  if (sql !== 'COMMIT') return rawExec(sql);
  const t = performance.now();
  const out = rawExec(sql);
  const ms = performance.now() - t;
  commits.count++;
  commits.ms += ms;
  commits.maxMs = Math.max(commits.maxMs, ms);
  return out;
  }) as typeof lite.raw.exec;
}
const takeCommits = () => {
  const c = database
    // PostgreSQL: one commit per transaction (no group commit); queries = round trips to the server
    ? { commits: queries.commits, transactions: commits.savepoints, meanCommitMs: queries.commits ? Math.round((queries.commitMs / queries.commits) * 100) / 100 : 0, maxCommitMs: Math.round(queries.maxCommitMs * 100) / 100, queries: queries.count, rollbacks: queries.rollbacks, statements: Object.fromEntries([...statements].sort((a, b) => b[1] - a[1])) }
    : { commits: commits.count, transactions: commits.savepoints, meanCommitMs: commits.count ? Math.round((commits.ms / commits.count) * 100) / 100 : 0, maxCommitMs: Math.round(commits.maxMs * 100) / 100 };
  Object.assign(commits, { count: 0, ms: 0, maxMs: 0, savepoints: 0 });
  Object.assign(queries, { count: 0, commits: 0, rollbacks: 0, commitMs: 0, maxCommitMs: 0 });
  statements = new Map();
  return c;
};
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await gw.close();
  if (!sharedDataDir) rmSync(dataDir, { recursive: true, force: true });
}

serve({
  usage: () => ({ ...usage.take(), tlsHandshakes: handshakes, ...takeCommits() }),
  /** the ledger's balance and available amount of each wallet named (bench/sessions.ts: the seller's and the platform's too) */
  balances: async (m) => {
    const ids = m.walletIds as string[];
    return gw.store.read(async (r) => {
      const out: Record<string, { balanceMinor: string; availableMinor: string }> = {};
      for (const id of ids) {
        const b = await balanceOf(r, id);
        out[id] = { balanceMinor: b.balanceMinor.toString(), availableMinor: b.availableMinor.toString() };
      }
      return out;
    });
  },
  stop: async () => {
    await stop();
    setImmediate(() => process.exit(0));
  },
});
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
ready({ baseUrl: gw.baseUrl, ca: gw.tls!.ca, creds, dataDir, pid: process.pid });
