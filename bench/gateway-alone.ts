/**
 * `npx tsx bench/gateway-alone.ts`: what one gateway process settles with a core of its own.
 * The bench's gateway child (bench/gateway.ts, the store as shipped) runs on CPU 0; this
 * process, on the other CPUs, is the driver: it plays the seller middleware and the buyers at
 * once, as cheaply as it can, over real HTTPS with keep-alive:
 *   challenge -> the buyer's proof signed on node:crypto (lib/proof.ts, as the node buyer)
 *   -> authorize (the proof as the x-payment header value, as the middleware passes it on)
 *   -> complete (sha256 of the bytes bench/seller.ts's handler answers)
 * through the middleware's own GatewayBatcher (src/sdk/seller/batcher.ts): operations that wait
 * share POST /v1/x402/batch requests, up to --batch per request. The driver verifies no
 * signature (the gateway verifies everything it is sent; a real buyer's checks are its own CPU,
 * bench/run.ts measures them); the integrity check at the end covers the money.
 *
 * Warm-up, then a measured phase, closed loop (--concurrency paid calls in flight); prints and
 * writes bench/results/gateway-alone.json (or --out): complete paid calls/s, errors, CPU per call
 * of the gateway and of the driver, commits, host steal, integrity. If the driver's CPU is full
 * while the gateway's is not, the figure is the driver's limit, not the gateway's: it says so.
 *
 * Flags (or env BENCH_<NAME>):
 *   --concurrency N      paid calls in flight (default 256)
 *   --batch N            operations per batch request, 1 to 100 (default 32); 1: every operation
 *                        on its own route, no limit on requests under way (the middleware's `batch: false`)
 *   --in-flight N        batch requests under way at once before operations wait (default 2, the middleware's)
 *   --wallets N          agent wallets (default 16)
 *   --warmup-seconds S   (default 5)   --seconds S   measured phase (default 20)
 *   --durability background|in-commit   as bench/run.ts (default background)
 *   --profile            V8 CPU profile of the gateway in bench/results/profiles/gateway-alone/
 *   --out PATH           (default bench/results/gateway-alone.json)
 *   --database URL       also run on PostgreSQL, after the SQLite baseline of the same run: each
 *                        configuration on a fresh database with a random name created on the
 *                        server of URL (its database name is not used) and dropped afterwards;
 *                        reports the gateway's CPU per call against SQLite's, the database
 *                        server's CPU per call (lib/pg.ts), round trips and commits per call
 *   --instances 1|2|1,2  with --database: PostgreSQL with one gateway, two (processes on one
 *                        database, both on CPU 0, call i sent to instance i mod 2), or both
 *                        configurations in turn (default 1,2)
 */
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AgentpayClient } from '../packages/sdk/src/client/index.js';
import { encodeHeader } from '../packages/sdk/src/protocol.js';
import { GatewayBatcher } from '../packages/sdk/src/seller/batcher.js';
import { responseHashSync } from '../packages/sdk/src/seller/sync-hash.js';
import type { Authorization, Challenge, Receipt } from '../packages/sdk/src/types.js';
import { ChildRegistry } from './lib/children.js';
import { closedLoop } from './lib/loops.js';
import { cpuTimes, machineInfo, perCpuPercent, stealPercent } from './lib/machine.js';
import { signProof } from './lib/proof.js';
import { checkIntegrity, PRICE, pinToCpus, setupMarket, type GatewayReady, type GatewayUsage } from './lib/setup.js';
import { summarize } from './lib/stats.js';
import { perCall, UsageMeter } from './lib/usage.js';
import { flagReader } from './lib/flags.js';
import { createBenchDatabase, DbMeter, type BenchDatabase } from './lib/pg.js';
import { redactUrl } from '../src/store/errors.js';

const here = dirname(fileURLToPath(import.meta.url));

const { values: flags } = parseArgs({
  options: {
    concurrency: { type: 'string' },
    batch: { type: 'string' },
    'in-flight': { type: 'string' },
    wallets: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    seconds: { type: 'string' },
    durability: { type: 'string' },
    profile: { type: 'boolean' },
    out: { type: 'string' },
    database: { type: 'string' },
    instances: { type: 'string' },
  },
});

const { opt, num } = flagReader(flags);

const cfg = {
  concurrency: num('concurrency', 256),
  batch: num('batch', 32),
  inFlight: num('in-flight', 2),
  wallets: num('wallets', 16),
  warmupSeconds: num('warmup-seconds', 5),
  seconds: num('seconds', 20),
  durability: opt('durability', 'background'),
  profile: flags.profile ?? process.env.BENCH_PROFILE === '1',
  out: resolve(opt('out', join(here, 'results', 'gateway-alone.json'))),
  database: opt('database', '') || undefined,
  instances: opt('instances', '1,2').split(',').map(Number),
};
if (cfg.instances.some((n) => n !== 1 && n !== 2)) throw new Error('--instances must be 1, 2 or 1,2 (PostgreSQL gateways on one database, calls spread over them)');
if (cfg.database && !/^postgres(ql)?:\/\//.test(cfg.database)) throw new Error('--database must be a PostgreSQL URL (postgres://user@host:5432/any): each configuration gets a fresh database on that server');
if (!cfg.database) cfg.instances = [];
if (!Number.isInteger(cfg.batch) || cfg.batch > 100) throw new Error('--batch must be a whole number from 1 to 100 (the batch route carries at most 100)');
if (cfg.durability !== 'background' && cfg.durability !== 'in-commit') throw new Error('--durability must be background or in-commit');

const log = (s: string) => console.log(`[gateway-alone ${new Date().toISOString().slice(11, 19)}] ${s}`);
const round = (x: number) => Math.round(x * 100) / 100;

/** the PostgreSQL configuration's fresh database while it runs: dropped on Ctrl-C too */
let currentDb: BenchDatabase | undefined;
const children = new ChildRegistry({ what: 'the gateway(s)', onSignal: () => currentDb?.drop() });

/** What bench/seller.ts's paid handler answers: the bytes the seller hashes for `complete`. */
const BODY = Buffer.from(JSON.stringify({ city: 'Lisbon', sunny: true, tempC: 21 }));

/** One configuration of the run: the store as shipped on SQLite, or PostgreSQL with 1 or 2 gateway instances on one fresh database. */
interface Config {
  label: string;
  database: boolean;
  instances: number;
}

const configs: Config[] = [{ label: 'sqlite', database: false, instances: 1 }];
for (const n of cfg.instances) configs.push({ label: n === 1 ? 'postgres' : `postgres x${n}`, database: true, instances: n });

async function runConfig(c: Config, pinned: boolean, cpus: number) {
  // ---- a fresh database for this configuration (PostgreSQL), its gateway(s) on CPU 0, this driver on the others ----
  const db = c.database ? await createBenchDatabase(cfg.database!) : undefined;
  currentDb = db;
  const meter = db ? await DbMeter.open(db) : undefined;
  const sharedDir = c.instances > 1 ? mkdtempSync(join(tmpdir(), 'agentpay-bench-fleet-')) : undefined;
  const group = children.group();
  try {
    const profiling = cfg.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(here, 'results', 'profiles', 'gateway-alone')}`] : [];
    const env = { BENCH_DURABILITY: cfg.durability, ...(db ? { BENCH_DATABASE_URL: db.url } : {}), ...(sharedDir ? { BENCH_DATA_DIR: sharedDir } : {}) };
    const ready: GatewayReady[] = [];
    const gateways = group.children;
    // one after the other: the first makes the dev credentials, signing key and CA in the shared data directory, the others reuse them
    for (let i = 0; i < c.instances; i++) {
      const gateway = group.own(children.spawn(`gateway ${i + 1}`, join(here, 'gateway.ts'), env, profiling));
      if (pinned) pinToCpus(gateway.pid, '0');
      ready.push((await gateway.ready) as unknown as GatewayReady);
    }
    const g = ready[0]!;
    log(`[${c.label}] gateway pid ${gateways.map((x) => x.pid).join(', ')} at ${ready.map((r) => r.baseUrl).join(', ')}${pinned ? ' on CPU 0' : ''}${db ? `; database ${db.name}` : ''}`);
    const market = await setupMarket(g, cfg.wallets);
    const capabilityId = market.capability.id;

    // ---- the seller middleware's gateway client, as shipped, counting its requests; one per instance, calls spread over them ----
    let gatewayRequests = 0;
    const batchers = ready.map((r) => {
      const seller = new AgentpayClient({ baseUrl: r.baseUrl, apiKey: g.creds.provider.apiKey, ca: g.ca });
      const raw = seller.http.raw.bind(seller.http);
      seller.http.raw = ((...args: Parameters<typeof raw>) => {
        gatewayRequests++;
        return raw(...args);
      }) as typeof seller.http.raw;
      // --batch 1: the middleware with `batch: false` (core.ts), every operation on its own route at once
      return new GatewayBatcher(seller, cfg.batch === 1 ? { maxInFlight: Infinity } : { maxOperations: cfg.batch, maxInFlight: cfg.inFlight });
    });
    const wallets = market.wallets.map((w) => ({ walletId: w.walletId, key: createPrivateKey(w.privateKeyPem) }));

    // call i on instance i mod n: its three operations on one instance, as a seller behind a load balancer with keep-alive sends them
    async function paidCall(i: number): Promise<void> {
      const w = wallets[i % wallets.length]!;
      const batcher = batchers[i % batchers.length]!;
      const { challenge } = (await batcher.run({ op: 'challenge', capabilityId })) as { challenge: Challenge };
      if (challenge.amountMinor !== PRICE) throw new Error(`challenge for ${challenge.amountMinor}, expected ${PRICE}`);
      const payment = encodeHeader(signProof(w.key, w.walletId, challenge));
      const auth = (await batcher.run({ op: 'authorize', capabilityId, payment })) as Authorization;
      const { receipt } = (await batcher.run({ op: 'complete', transactionId: auth.transactionId, responseHash: responseHashSync(BODY) })) as { receipt: Receipt };
      if (receipt.status !== 'success' || receipt.transactionId !== auth.transactionId) throw new Error(`complete answered a ${receipt.status} receipt for ${receipt.transactionId}`);
    }

    const driverMeter = new UsageMeter();
    let paidCalls = 0;
    async function phase(name: string, seconds: number) {
      await Promise.all(gateways.map((x) => x.request('usage'))); // start the meters
      driverMeter.take();
      gatewayRequests = 0;
      const db0 = await meter?.sample();
      const times0 = cpuTimes();
      const r = await closedLoop(paidCall, cfg.concurrency, seconds * 1000);
      const gws = await Promise.all(gateways.map((x) => x.request<GatewayUsage & { queries?: number; rollbacks?: number; statements?: Record<string, number> }>('usage')));
      const driver = driverMeter.take();
      const times1 = cpuTimes();
      const dbUsage = meter && db0 ? await meter.since(db0) : undefined;
      const steal = stealPercent(times0, times1);
      // the gateway's core (cpu0) busy and stolen: a core neither busy nor stolen is one the gateway waited on
      const perCpu = perCpuPercent(times0, times1);
      paidCalls += r.completed;
      const latency = summarize(r.latencies);
      const sum = (f: (u: (typeof gws)[number]) => number) => gws.reduce((a, u) => a + f(u), 0);
      const gw = {
        cpuMs: sum((u) => u.cpuMs),
        cpuCores: round(sum((u) => u.cpuCores)),
        eventLoopUtilization: gws.map((u) => u.eventLoopUtilization).join('+'),
        commits: sum((u) => u.commits),
        transactions: sum((u) => u.transactions),
        meanCommitMs: round(sum((u) => u.meanCommitMs * u.commits) / Math.max(1, sum((u) => u.commits))),
        maxCommitMs: Math.max(...gws.map((u) => u.maxCommitMs)),
        tlsHandshakes: sum((u) => u.tlsHandshakes),
        ...(c.database ? { queries: sum((u) => u.queries ?? 0), rollbacks: sum((u) => u.rollbacks ?? 0) } : {}),
        perInstance: gws,
      };
      const perCallOf = (n: number) => (r.completed ? Math.round((n / r.completed) * 1000) / 1000 : 0);
      const p = {
        name,
        concurrency: cfg.concurrency,
        seconds: Math.round(r.elapsedMs / 10) / 100,
        completed: r.completed,
        errors: r.errors,
        errorSamples: r.errorSamples,
        callsPerSecond: Math.round((r.completed / r.elapsedMs) * 1000),
        latency,
        gatewayRequests,
        operationsPerRequest: gatewayRequests ? round((3 * r.completed + r.errors) / gatewayRequests) : 0,
        transactionsPerCommit: gw.commits ? round(gw.transactions / gw.commits) : 0,
        stealPercent: steal,
        perCpuPercent: perCpu,
        cpu: { gateway: gw, driver, ...(dbUsage ? { database: dbUsage } : {}) },
        cpuMsPerCall: { gateway: perCall(gw, r.completed), driver: perCall(driver, r.completed), ...(dbUsage ? { database: perCall(dbUsage, r.completed) } : {}) },
        perCall: {
          transactions: perCallOf(gw.transactions),
          commits: perCallOf(gw.commits),
          ...(c.database ? { roundTrips: perCallOf(gw.queries ?? 0), retries: perCallOf(gw.rollbacks ?? 0), serverCommits: perCallOf(dbUsage?.commits ?? 0) } : {}),
        },
        // PostgreSQL: each statement's round trips per paid call, all instances
        ...(c.database ? { statementsPerCall: statementsPerCall(gws.map((u) => u.statements ?? {}), r.completed) } : {}),
      };
      log(`[${c.label}] ${name}: ${p.completed} calls in ${p.seconds}s = ${p.callsPerSecond}/s, p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, errors ${p.errors}`
        + ` | CPU ms/call: gateway ${p.cpuMsPerCall.gateway}, driver ${p.cpuMsPerCall.driver}${dbUsage ? `, database ${p.cpuMsPerCall.database} (${dbUsage.backends} backends)` : ''}`
        + ` | CPU cores: gateway ${gw.cpuCores} (loop ${gw.eventLoopUtilization}), driver ${driver.cpuCores} (loop ${driver.eventLoopUtilization})`
        + ` | ${gatewayRequests} gateway requests (${p.operationsPerRequest} operations each)`
        + ` | commits ${gw.commits} (${p.transactionsPerCommit} tx each, mean ${gw.meanCommitMs} ms, max ${gw.maxCommitMs} ms)`
        + (c.database ? ` | per call: ${p.perCall.roundTrips} round trips, ${p.perCall.commits} commits (server counted ${p.perCall.serverCommits}), ${p.perCall.retries} rollbacks` : '')
        + ` | steal ${steal ?? '?'} %`
        + (perCpu ? ` | per CPU busy/steal %: ${perCpu.map((x, i) => `cpu${i} ${x.busy}/${x.steal}`).join(', ')}` : ''));
      for (const e of p.errorSamples) log(`  error: ${e}`);
      return p;
    }

    const warmup = await phase('warm-up', cfg.warmupSeconds);
    const measured = await phase('measured', cfg.seconds);

    const integrity = await checkIntegrity(market, paidCalls);
    log(`[${c.label}] integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}: ${paidCalls} complete paid calls counted, wallets spent ${integrity.spentMinor} (expected ${integrity.expectedMinor}), ${integrity.heldMinor} still held`);
    const gwCores = measured.cpu.gateway.cpuCores;
    const driverCores = measured.cpu.driver.cpuCores;
    return {
      label: c.label,
      database: c.database ? 'postgres' : 'sqlite',
      instances: c.instances,
      summary: {
        paidCallsPerSecond: measured.callsPerSecond,
        errors: warmup.errors + measured.errors,
        cpuMsPerCall: measured.cpuMsPerCall,
        perCall: measured.perCall,
        cpuCores: { gateway: gwCores, driver: driverCores },
        limit: c.instances === 1 ? limitOf(gwCores, driverCores, measured.perCpuPercent?.[0]) : 'n/a (instances share CPU 0)',
        transactionsPerCommit: measured.transactionsPerCommit,
        operationsPerRequest: measured.operationsPerRequest,
        stealPercentMeasured: measured.stealPercent,
        perCpuPercentMeasured: measured.perCpuPercent,
        gatewayTlsHandshakes: measured.cpu.gateway.tlsHandshakes,
        integrityOk: integrity.ok,
      },
      integrity,
      phases: [warmup, measured],
    };
  } finally {
    await group.stop();
    await meter?.close();
    await db?.drop();
    currentDb = undefined;
    if (sharedDir) rmSync(sharedDir, { recursive: true, force: true });
  }
}

async function main(): Promise<boolean> {
  const loadBefore = os.loadavg();
  const timesBefore = cpuTimes();
  const cpus = os.availableParallelism();
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${cpus} CPUs; configurations: ${configs.map((c) => c.label).join(', ')}`);
  const pinned = cpus > 1;
  if (pinned) pinToCpus(process.pid, cpus > 2 ? `1-${cpus - 1}` : '1');
  else log('one CPU only: gateway and driver share it, the figure is not the gateway alone');

  const runs: Array<Awaited<ReturnType<typeof runConfig>>> = [];
  for (const c of configs) runs.push(await runConfig(c, pinned, cpus));
  const base = runs[0]!.summary;
  // PostgreSQL against SQLite measured in this run: the ratio is the figure (the machine's speed cancels out)
  const ratios = runs.slice(1).map((r) => ({
    label: r.label,
    gatewayCpuPerCallVsSqlite: round(r.summary.cpuMsPerCall.gateway / base.cpuMsPerCall.gateway),
    paidCallsPerSecondVsSqlite: round(r.summary.paidCallsPerSecond / base.paidCallsPerSecond),
  }));

  const result = {
    when: new Date().toISOString(),
    machine: { ...machineInfo(loadBefore, stealPercent(timesBefore, cpuTimes())), pinned },
    config: { ...cfg, database: cfg.database ? redact(cfg.database) : undefined, priceMinor: PRICE, command: `npx tsx bench/gateway-alone.ts${process.argv.length > 2 ? ` ${process.argv.slice(2).map((a) => (a === cfg.database ? redact(a) : a)).join(' ')}` : ''}` },
    summary: runs[0]!.summary, // the SQLite gateway, as before this file knew PostgreSQL
    ratios,
    runs,
  };
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');

  const line = (r: (typeof runs)[number]) => {
    const s = r.summary;
    const m = r.phases[1]!;
    return `  ${r.label.padEnd(12)} ${String(s.paidCallsPerSecond).padStart(6)}/s   gateway ${String(s.cpuMsPerCall.gateway).padStart(6)} ms`
      + `   database ${s.cpuMsPerCall.database !== undefined ? String(s.cpuMsPerCall.database).padStart(6) + ' ms' : '     -   '}`
      + `   round trips ${s.perCall.roundTrips ?? '-'}   commits ${s.perCall.commits} (${s.transactionsPerCommit} tx each)   p50 ${m.latency.p50Ms} ms   errors ${s.errors}   integrity ${s.integrityOk ? 'ok' : 'MISMATCH'}`;
  };
  const ok = runs.every((r) => r.integrity.ok && r.summary.errors === 0);
  console.log(`
agentpay gateway alone (${pinned ? 'gateway(s) on CPU 0, driver on the rest' : 'not pinned'}; ${cfg.concurrency} calls in flight, ${cfg.batch === 1 ? 'every operation on its own route' : `batches of up to ${cfg.batch}, ${cfg.inFlight} under way`}; ${cfg.seconds} s measured per configuration; load before ${loadBefore[0]!.toFixed(2)})
  configuration   paid calls     CPU per paid call, measured phase
${runs.map(line).join('\n')}${ratios.length ? `
  against SQLite in this run: ${ratios.map((x) => `${x.label}: gateway CPU per call ${x.gatewayCpuPerCallVsSqlite}x, calls/s ${x.paidCallsPerSecondVsSqlite}x`).join('; ')}` : ''}
  limit (sqlite): ${base.limit}; CPU cores busy: gateway ${base.cpuCores.gateway}, driver ${base.cpuCores.driver}
  errors: ${runs.reduce((a, r) => a + r.summary.errors, 0)}; integrity: ${ok ? 'ok' : 'MISMATCH'}
  written to ${cfg.out}
`);
  return ok;
}

const redact = redactUrl;

/**
 * Who held the rate: the gateway (its core full), other work on the gateway's CPU or the host
 * taking it (this machine is shared: then the figure is not the gateway alone), the driver, or
 * nobody (the gateway waited: commits, batch round trips).
 */
function limitOf(gatewayCores: number, driverCores: number, cpu0: { busy: number; steal: number } | undefined): string {
  if (gatewayCores >= 0.9) return 'gateway';
  const others = cpu0 ? cpu0.busy / 100 - gatewayCores : 0;
  if (others >= 0.15) return `other processes on the gateway's CPU (${Math.round(others * 100)} % of it): not a gateway-alone figure, run again on a quiet machine`;
  if (cpu0 && cpu0.steal >= 10) return `the host (${cpu0.steal} % of the gateway's CPU stolen): run again at low steal`;
  if (driverCores >= 0.9) return 'driver: the gateway could settle more';
  return 'neither core full: the gateway waited (commits, batch round trips)';
}

await children.runMain('gateway-alone bench', main);

/** Each statement's count per paid call, summed over the instances, most frequent first. */
function statementsPerCall(all: Record<string, number>[], calls: number): Record<string, number> {
  const total = new Map<string, number>();
  for (const one of all) for (const [k, n] of Object.entries(one)) total.set(k, (total.get(k) ?? 0) + n);
  return Object.fromEntries([...total].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, calls ? Math.round((n / calls) * 1000) / 1000 : 0]));
}
