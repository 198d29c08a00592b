/**
 * A fleet behind a real balancer, as docs/deploy.md sets it up: HAProxy (Debian's package) with
 * docs/examples/haproxy.cfg as it is (the doc quotes that file whole: checked below), terminating TLS
 * and checking each instance's readiness, in front of three `agentpay gateway start --mode sandbox
 * --no-tls --trust-proxy` processes on one PostgreSQL database. Paid calls go through the balancer;
 * one instance is killed with SIGKILL (its own PID); the balancer marks it DOWN, paid calls keep
 * succeeding on the other two, and the ledgers add up afterwards.
 * Runs when AGENTPAY_TEST_DATABASE_URL is set (once: it names its database itself, so it skips in the
 * `postgres` project). Without haproxy it is skipped with a message, except under CI (env CI set),
 * where it fails: .ci/run installs haproxy.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayClient, type Receipt } from '../../packages/sdk/src/client/index.js';
import { feeFor } from '../../src/core/money.js';
import { DEFAULT_PAYMENTS } from '../../src/domain/payments/config.js';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { ensureTls } from '../../src/gateway/tls.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';
import { until } from '../helpers/wait.js';
import { hashOf, signProof, type Buyer } from '../payments/helpers.js';
import { expectConsistent, sumOf } from '../wallets/ledger-checks.js';
import { newCapability as capabilityOf, newTenant as tenantOf } from './helpers.js';
import { cli, json, removeTempDirs, startGatewayProcess, tempDir, type GatewayProcess } from '../cli/helpers.js';

const ROOT = new URL('../../', import.meta.url);
const CONFIG = new URL('docs/examples/haproxy.cfg', ROOT);
const DEPLOY_DOC = new URL('docs/deploy.md', ROOT);
const HAPROXY = spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).stdout.trim();
const inCi = Boolean(process.env.CI);
const onPostgresProject = process.env.AGENTPAY_TEST_BACKEND === 'postgres';
if (!HAPROXY && !inCi && pgEnabled() && !onPostgresProject) {
  process.stderr.write('[balancer test] SKIPPED: haproxy is missing (install it: apt-get install -y haproxy). Under CI (env CI set) it fails instead.\n');
}
const PRICE = 100n;
const FEE = feeFor(PRICE, DEFAULT_PAYMENTS.feeBps);
const FUNDED = 100_000n;

describe('docs/deploy.md quotes docs/examples/haproxy.cfg', () => {
  it('whole, in a haproxy block', () => {
    const doc = readFileSync(DEPLOY_DOC, 'utf8');
    const blocks = [...doc.matchAll(/```haproxy\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toContain(readFileSync(CONFIG, 'utf8'));
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!pgEnabled() || onPostgresProject || (!HAPROXY && !inCi))('three gateways behind HAProxy (docs/examples/haproxy.cfg), one killed', () => {
  let db: TestDatabase;
  let store: PgStore;
  let work: string;
  let haproxy: ChildProcess | undefined;
  let haproxyLog = '';
  let lbUrl: string;
  let ca: string;
  const instances: (GatewayProcess & { name: string; port: number; alive: boolean })[] = [];

  beforeAll(async () => {
    if (!HAPROXY) throw new Error('haproxy is missing and CI is set: install the Debian package haproxy (apt-get install -y haproxy) before the tests, as .ci/run does');
    db = await createTestDatabase('agentpay_balancer');
    work = mkdtempSync(join(tmpdir(), 'agentpay-balancer-'));
    const configDir = tempDir();
    // every instance the same webhook key; no key-encryption key: a sandbox fleet keeps its signing keys in the database
    const env = { AGENTPAY_WEBHOOK_KEY: randomBytes(32).toString('base64') };
    const args = (name: string) => ['gateway', 'start', '--mode', 'sandbox', '--no-tls', '--trust-proxy', '--host', '127.0.0.1', '--port', '0',
      '--data-dir', join(work, `gateway-${name}`), '--database', db.url, '--rate-limit', '100000', '--log-level', 'warn', '--json'];
    const started = await Promise.all(['a', 'b', 'c'].map(async (name) => {
      const p = await startGatewayProcess(args(name), { configDir, env });
      return { ...p, name, port: Number(new URL(p.ready.baseUrl).port), alive: true };
    }));
    instances.push(...started);

    // HAProxy's certificate: one PEM with the chain and the key, for 127.0.0.1 (the tests' own CA)
    const tls = await ensureTls(join(work, 'lb'));
    ca = tls.ca;
    const pem = join(work, 'lb', 'haproxy.pem');
    writeFileSync(pem, tls.cert + tls.key, { mode: 0o600 });
    const cfg = join(work, 'haproxy.cfg');
    copyFileSync(CONFIG, cfg);
    const port = await freePort();
    lbUrl = `https://127.0.0.1:${port}`;
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        AGENTPAY_LB_BIND: `127.0.0.1:${port}`,
        AGENTPAY_LB_CERT: pem,
        AGENTPAY_GATEWAY_A: `127.0.0.1:${instances[0]!.port}`,
        AGENTPAY_GATEWAY_B: `127.0.0.1:${instances[1]!.port}`,
        AGENTPAY_GATEWAY_C: `127.0.0.1:${instances[2]!.port}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    haproxy.stdout!.on('data', (d: Buffer) => (haproxyLog += d.toString()));
    haproxy.stderr!.on('data', (d: Buffer) => (haproxyLog += d.toString()));
    haproxy.once('exit', (code, signal) => (haproxyLog += `\n[haproxy exited: ${code ?? signal}]\n`));
    store = await PgStore.open({ url: db.url });
  }, 180_000);

  afterAll(async () => {
    if (haproxy && haproxy.exitCode === null && haproxy.signalCode === null) {
      const exited = new Promise((res) => haproxy!.once('exit', res));
      process.kill(haproxy.pid!, 'SIGTERM');
      await exited;
    }
    await Promise.all(instances.filter((i) => i.alive).map((i) => i.stop()));
    await store?.close();
    await db?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
    removeTempDirs();
  }, 60_000);

  const client = (apiKey?: string) => new AgentpayClient({ gatewayUrl: lbUrl, ca, ...(apiKey ? { apiKey } : {}) });
  /** the instance ids that answer GET /health through the balancer in `n` requests */
  const answering = async (n: number) => {
    const ids = new Set<string>();
    for (let i = 0; i < n; i++) ids.add((await client().platform.health()).instanceId);
    return ids;
  };
  /** the instance id each process answers with, asked directly over plain HTTP (as the balancer's check does) */
  const idOf = async (port: number) => ((await (await fetch(`http://127.0.0.1:${port}/health/ready`)).json()) as { instanceId: string }).instanceId;

  const newTenant = (kind: 'provider' | 'workspace', name: string) => tenantOf(store, kind, name);
  const newCapability = (providerId: string) => capabilityOf(store, providerId, PRICE, 'balanced capability');

  it('routes paid calls to all three, then around the one killed with kill -9; every call succeeds and the ledgers add up', async () => {
    const ids = await Promise.all(instances.map((i) => idOf(i.port)));
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^ins_/);
    // HAProxy up, every instance passed its readiness checks: round robin reaches all three
    await until(async () => {
      try {
        return (await answering(6)).size === 3;
      } catch {
        return false;
      }
    }, `HAProxy serving all three instances (its log: ${haproxyLog})`, { limitMs: 30_000, everyMs: 200 });

    const seller = await newTenant('provider', 'Balanced Seller');
    const capabilityId = await newCapability(seller.id);
    const workspace = await newTenant('workspace', 'Balanced Buyers');
    const pair = generateEd25519();
    const wallet = await client(workspace.apiKey).wallets.create({ ownerType: 'agent', ownerId: 'agent-lb', publicKeyPem: pair.publicKeyPem });
    await client(workspace.apiKey).wallets.fund(wallet.id, FUNDED.toString());
    const buyer: Buyer = { walletId: wallet.id, ...pair };
    const sellerApi = client(seller.apiKey);
    const body = '{"ok":true}';
    const receipts: Receipt[] = [];
    const paidCall = async () => {
      const challenge = await sellerApi.payments.challenge(capabilityId);
      const auth = await sellerApi.payments.authorize({ capabilityId, payment: signProof(challenge, buyer) });
      const { receipt } = await sellerApi.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf(body) });
      receipts.push(receipt);
    };
    /** `n` paid calls, three at a time; every one must succeed */
    const paidCalls = async (n: number) => {
      let next = 0;
      await Promise.all([0, 1, 2].map(async () => {
        while (next < n) {
          next++;
          await paidCall();
        }
      }));
    };

    await paidCalls(30);
    expect(receipts).toHaveLength(30);

    // kill -9 of instance b, by its own PID: no goodbye, its connections simply close
    const victim = instances[1]!;
    const victimId = ids[1]!;
    process.kill(victim.pid, 'SIGKILL');
    victim.alive = false;
    await until(() => {
      try {
        process.kill(victim.pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the killed instance to be gone');

    // paid calls at once after the kill: a refused connection is sent to another instance (retries, redispatch)
    await paidCalls(30);
    expect(receipts).toHaveLength(60);
    // the balancer's checks mark it DOWN; from then on only the two others answer
    await until(() => /gateways\/b is DOWN/.test(haproxyLog), `HAProxy to mark gateways/b DOWN (its log: ${haproxyLog})`, { limitMs: 15_000, everyMs: 100 });
    await paidCalls(30);
    expect(receipts).toHaveLength(90);
    const after = await answering(12);
    expect(after).toEqual(new Set([ids[0], ids[2]]));
    expect(after.has(victimId)).toBe(false);

    // money: the buyer paid exactly its 90 receipts, nothing is held; the seller got the sales less the fees
    expect(new Set(receipts.map((r) => r.transactionId)).size).toBe(90);
    const buyerLedger = await client(workspace.apiKey).wallets.ledger(wallet.id);
    expectConsistent(buyerLedger);
    expect(sumOf(buyerLedger)).toBe(FUNDED - 90n * PRICE);
    expect(await client(workspace.apiKey).wallets.balance(wallet.id)).toEqual({ balanceMinor: (FUNDED - 90n * PRICE).toString(), availableMinor: (FUNDED - 90n * PRICE).toString(), currency: 'USD' });
    const sellerLedger = await client(seller.apiKey).wallets.ledger(seller.walletId!);
    expectConsistent(sellerLedger);
    expect(FEE).toBeGreaterThan(0n);
    expect(sumOf(sellerLedger)).toBe(90n * (PRICE - FEE));
    // what the killed instance served stays served: its receipts are read through the survivors
    for (const r of receipts.slice(0, 30)) expect((await client(workspace.apiKey).receipts.get(r.id)).id).toBe(r.id);
  });

  it('refuses a production start on the trial database, naming the database (not the new data directory) as the conflict', async () => {
    const dataDir = join(work, 'production');
    const r = await cli(['gateway', 'start', '--no-tls', '--trust-proxy', '--port', '0', '--data-dir', dataDir, '--database', db.url, '--json'], { configDir: tempDir() });
    expect(r.exitCode, r.stderr).toBe(1);
    const { error } = json(r);
    expect(error).toMatchObject({ code: 'CONFLICT', details: { conflict: 'database', recordedMode: 'sandbox', mode: 'production', dataDir } });
    expect(error.message).toMatch(/^the database postgres:\/\/.+ holds simulated money \(sandbox `fund` entries\): it is a sandbox database and cannot be served in production mode/);
    expect(error.message).toContain('start with --mode sandbox for a trial, or give production a database of its own');
    // the refused start recorded nothing: the directory serves production on a database of its own later
    expect(existsSync(join(dataDir, 'mode'))).toBe(false);
  });
});
