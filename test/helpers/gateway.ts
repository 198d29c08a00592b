/**
 * A real gateway for tests: HTTPS on a loopback port, a real SQLite file in a temp
 * directory, the dev bootstrap's operator, workspace and verified provider, and a
 * typed client per key. Tenants beyond those are made through the domain directly.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, type Clock } from '../../src/core/clock.js';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { issueKey } from '../../src/domain/tenancy/api-keys.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { ensureDevCredentials, type DevCredentials } from '../../src/gateway/dev-credentials.js';
import type { GatewayConfig } from '../../src/gateway/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, databaseOfDataDir, type TestDatabase } from './pg.js';
import { SyncPg } from './db-sync.js';
import { checkStoreReach } from './reach-check.js';

export interface TestGateway {
  gw: RunningGateway;
  baseUrl: string;
  httpUrl: string;
  ca: string;
  dataDir: string;
  creds: DevCredentials;
  clock: Clock;
  /** a typed client with the given key (none: unauthenticated) */
  client(apiKey?: string): AgentpayClient;
  operator: AgentpayClient;
  workspace: AgentpayClient;
  provider: AgentpayClient;
  newWorkspace(name?: string): Promise<{ id: string; apiKey: string; client: AgentpayClient }>;
  newProvider(opts?: { name?: string; verified?: boolean }): Promise<{ id: string; apiKey: string; walletId: string; client: AgentpayClient }>;
  /** an agent wallet of the given workspace with a fresh key pair */
  newAgentWallet(ws: AgentpayClient, ownerId?: string): Promise<{ walletId: string; publicKeyPem: string; privateKeyPem: string }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  config?: Partial<GatewayConfig>;
  /** pass a ManualClock to move time by hand */
  clock?: Clock;
  dataDir?: string;
  keepDataDir?: boolean;
  /**
   * 'sqlite' or 'postgres' (a fresh database of its own, a copy of the run's migrated template,
   * dropped at close, or with the data dir when that outlives the gateway). Default: the
   * environment's AGENTPAY_TEST_BACKEND, else sqlite; so every gateway test can run on
   * PostgreSQL with AGENTPAY_TEST_BACKEND=postgres (tests that read SQLite directly cannot).
   */
  backend?: 'sqlite' | 'postgres';
}

/** The backend startTestGateway uses when a test does not choose one. */
export const testBackend = (): 'sqlite' | 'postgres' => (process.env.AGENTPAY_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite');

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  checkStoreReach('a test gateway');
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'agentpay-test-'));
  const config: Partial<GatewayConfig> = {
    // every answer is checked against its route's response schema (src/gateway/plugins/responses.ts)
    validateResponses: true,
    ...opts.config,
    // tests fire many requests; the limits have their own test
    rateLimit: { max: 100_000, windowMs: 1000, signupMax: 10_000, signupWindowMs: 60_000, paymentMax: 100_000, paymentWindowMs: 1000, ...opts.config?.rateLimit },
    // webhook deliveries go out when a test runs the duty (services.webhookDeliverer.runOnce), not on a timer
    webhooks: { deliveryIntervalMs: 0, ...opts.config?.webhooks },
    // and alert mail when a test runs services.alertMailer.runOnce
    alertMailIntervalMs: opts.config?.alertMailIntervalMs ?? 0,
  };
  // a data dir served again (a restart) keeps its database: the one kept when its gateway closed
  const backend = opts.backend ?? testBackend();
  // and a data dir another running gateway serves shares that gateway's database (two instances of one deployment)
  const live = backend === 'postgres' ? liveDatabases.get(dataDir) : undefined;
  const kept = backend === 'postgres' && !live ? keptDatabases.get(dataDir) : undefined;
  if (!live) keptDatabases.delete(dataDir);
  await dropAbandoned();
  const pgDb = live?.db ?? kept ?? (backend === 'postgres' ? await createTestDatabase('agentpay_test', { migrated: true }) : undefined);
  let gw: RunningGateway;
  try {
    gw = await startGateway({
      dataDir, port: 0, httpPort: 0, config, logger: process.env.AGENTPAY_TEST_LOG ? { level: 'error' } : false,
      ...(opts.clock ? { clock: opts.clock } : {}), ...(pgDb ? { database: pgDb.url } : {}),
    });
  } catch (e) {
    if (!live) await pgDb?.drop();
    throw e;
  }
  if (pgDb) {
    pgGatewayOfDataDir.set(dataDir, gw);
    if (live) live.users++;
    else liveDatabases.set(dataDir, { db: pgDb, users: 1 });
  }
  const ctx = gw.services.ctx;
  const creds = await ensureDevCredentials(ctx, dataDir);
  const ca = gw.tls!.ca;
  const client = (apiKey?: string) => new AgentpayClient({ gatewayUrl: gw.baseUrl, ca, ...(apiKey ? { apiKey } : {}) });

  return {
    gw,
    baseUrl: gw.baseUrl,
    httpUrl: gw.httpUrl!,
    ca,
    dataDir,
    creds,
    clock: ctx.clock,
    client,
    operator: client(creds.operatorKey),
    workspace: client(creds.workspace.apiKey),
    provider: client(creds.provider.apiKey),
    async newWorkspace(name = 'Other Workspace') {
      const { t, key } = await ctx.store.tx(async (r) => {
        const t = await createTenant(r, ctx, { kind: 'workspace', name });
        return { t, key: (await issueKey(r, ctx, t)).key };
      });
      return { id: t.id, apiKey: key, client: client(key) };
    },
    async newProvider({ name = 'Other Provider', verified = true } = {}) {
      const { t, key } = await ctx.store.tx(async (r) => {
        const t = await createTenant(r, ctx, { kind: 'provider', name });
        if (verified) await r.tenants.update(t.id, { status: 'active', verified: true, updatedAt: ctx.clock.now() });
        return { t, key: (await issueKey(r, ctx, t)).key };
      });
      return { id: t.id, apiKey: key, walletId: t.settlementWalletId!, client: client(key) };
    },
    async newAgentWallet(ws, ownerId = 'agent-1') {
      const pair = generateEd25519();
      const w = await ws.wallets.create({ ownerType: 'agent', ownerId, publicKeyPem: pair.publicKeyPem });
      return { walletId: w.id, ...pair };
    },
    async close() {
      await gw.close();
      await syncByStore.get(gw.store)?.close();
      pgGatewayOfDataDir.delete(dataDir);
      // the database stays while another gateway of the same data dir runs on it
      const users = liveDatabases.get(dataDir);
      if (users && --users.users > 0) return;
      liveDatabases.delete(dataDir);
      // a data dir that outlives its gateway may be served again: its database stays with it
      const dirKept = Boolean(opts.keepDataDir || opts.dataDir);
      if (pgDb && dirKept) keepDatabase(dataDir, pgDb);
      // not waited for when the run's teardown drops what is left (0.1 to 0.4 s a gateway saved)
      else if (pgDb?.ofRun) void pgDb.drop().catch(() => undefined);
      else await pgDb?.drop();
      if (!dirKept) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { ManualClock };

/**
 * The database of a gateway with better-sqlite3's synchronous API, for tests that read or tamper
 * with it directly: the SQLite connection, or on PostgreSQL a synchronous stand-in (db-sync.ts).
 */
export function sqliteOf(gw: RunningGateway): SqliteStore['raw'] {
  if (gw.store instanceof SqliteStore) return gw.store.raw;
  // PostgreSQL: prepare(sql).get/all/run answered synchronously (db-sync.ts); SQLite-only SQL fails there
  let sync = syncByStore.get(gw.store);
  if (!sync) syncByStore.set(gw.store, (sync = new SyncPg(gw.store.url)));
  return sync as unknown as SqliteStore['raw'];
}

const syncByStore = new WeakMap<object, SyncPg>();
/**
 * Databases of closed gateways whose data dir is still there, by data dir, for a restart on it.
 * One whose data dir the test has since removed is dropped at the next gateway start (and the
 * run's teardown, test/pg-setup.ts, drops any left at the end).
 */
const keptDatabases = new Map<string, TestDatabase>();
/** Databases of running gateways, by data dir, and how many gateways serve each. */
const liveDatabases = new Map<string, { db: TestDatabase; users: number }>();
function keepDatabase(dataDir: string, db: TestDatabase): void {
  // without the run's teardown (a run with no globalSetup), at least a process that ends by itself drops them
  if (keptDatabases.size === 0) process.once('beforeExit', () => void Promise.all([...keptDatabases.values()].map((d) => d.drop().catch(() => undefined))));
  keptDatabases.set(dataDir, db);
}
async function dropAbandoned(): Promise<void> {
  for (const [dir, db] of keptDatabases) {
    if (existsSync(dir)) continue;
    keptDatabases.delete(dir);
    await db.drop();
  }
}
/** The PostgreSQL gateway serving a data dir (snapshotDb reads its database). */
export const pgGatewayOfDataDir = new Map<string, RunningGateway>();

/**
 * For a test that starts the product's gateway itself (startGateway): on the `postgres` project
 * (AGENTPAY_TEST_BACKEND=postgres) `{ database }`, a database of its own per data dir (the same
 * one when the data dir is served again; a copy of the run's migrated template, dropped by the
 * run's teardown; the binary gets the same one for that data dir, test/cli/helpers.ts), else nothing: SQLite in the data dir. Spread it into startGateway's options.
 */
export async function backendOptions(dataDir: string): Promise<{ database?: string }> {
  checkStoreReach('a gateway');
  if (testBackend() !== 'postgres') return {};
  return { database: (await databaseOfDataDir(dataDir)).url };
}

/**
 * A migrated store on the run's backend, for tests that build the app without a gateway
 * (buildServices, buildApp, app.inject) or drive a domain part directly: SQLite in memory, or on the
 * `postgres` project a PostgreSQL database of its own, dropped when the store is closed.
 */
export async function openTestStore(): Promise<Store> {
  checkStoreReach('a store');
  if (testBackend() !== 'postgres') return new SqliteStore({ path: ':memory:' });
  const db = await createTestDatabase('agentpay_test', { migrated: true });
  const store = await PgStore.open({ url: db.url });
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await db.drop();
  };
  return store;
}
