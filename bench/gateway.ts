/**
 * The bench's gateway process: startGateway on 127.0.0.1 (HTTPS, no plain listener) on a
 * fresh data directory, with the dev bootstrap's workspace and verified provider. The
 * store is the default one (WAL, synchronous=FULL, group commit). Only the rate limit is
 * raised, since the bench pushes one seller key far past the 50 requests/s default; the
 * limiter itself still runs on every request.
 */
import type { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureDevCredentials } from '../src/dev/bootstrap.js';
import { startGateway } from '../src/gateway/server.js';
import { ready, serve } from './lib/ipc.js';
import { UsageMeter } from './lib/usage.js';

const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-bench-'));
const gw = await startGateway({
  dataDir,
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
const takeCommits = () => {
  const c = { commits: commits.count, transactions: commits.savepoints, meanCommitMs: commits.count ? Math.round((commits.ms / commits.count) * 100) / 100 : 0, maxCommitMs: Math.round(commits.maxMs * 100) / 100 };
  Object.assign(commits, { count: 0, ms: 0, maxMs: 0, savepoints: 0 });
  return c;
};
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await gw.close();
  rmSync(dataDir, { recursive: true, force: true });
}

serve({
  usage: () => ({ ...usage.take(), tlsHandshakes: handshakes, ...takeCommits() }),
  stop: async () => {
    await stop();
    setImmediate(() => process.exit(0));
  },
});
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
ready({ baseUrl: gw.baseUrl, ca: gw.tls!.ca, creds, dataDir, pid: process.pid });
