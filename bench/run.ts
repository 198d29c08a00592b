/**
 * `npm run bench`: a gateway, a seller and buyers, each in its own process on this
 * machine (127.0.0.1 only), then:
 *   1. warm-up (paid and unpaid, closed loop)
 *   2. unpaid max: the seller's free twin route, closed loop (context)
 *   3. paid max: complete paid calls per second, closed loop with --concurrency in flight
 *   4. latency at half the paid max (or --rate), open loop at a fixed rate:
 *      the unpaid route, then the paid route; added latency = paid - unpaid (p50, p99)
 *   5. integrity: the wallets paid exactly price x completed calls, no hold is left
 * Prints a summary and writes it as JSON to bench/results/latest.json (or --out).
 * Every child is stopped by its PID at the end, also on Ctrl-C.
 *
 * Flags (or env BENCH_<NAME>, e.g. BENCH_MAX_SECONDS=30):
 *   --buyer node|sdk        node: node:crypto buyer (default); sdk: createBuyer as shipped
 *   --buyers N              buyer processes (default 1)
 *   --concurrency N         paid calls in flight in the closed-loop phases (default 256: fewer leave the CPUs idle while calls wait for commits)
 *   --wallets N             agent wallets (default 16), spread over the buyers
 *   --warmup-seconds S      (default 5)   --unpaid-max-seconds S (default 5)
 *   --max-seconds S         (default 20)  --latency-seconds S    (default 15, per route)
 *   --rate R                open-loop rate instead of half the measured max
 *   --out PATH              (default bench/results/latest.json)
 *   --profile               V8 CPU profiles of the gateway and the seller in bench/results/profiles/
 *   --seller-batch off|N    the seller's gateway calls: off (one request each), or batched with up
 *                           to N requests in flight (default: the middleware's default, 2)
 *   --durability background|in-commit   how the gateway's commits reach the disk (default background)
 *   --pin                   gateway on CPU 0, seller and buyers on the other CPUs (taskset), to see
 *                           the gateway with a core of its own
 *   --database URL          after the SQLite run, the same phases on PostgreSQL: each configuration on a
 *                           fresh database with a random name on the server of URL, dropped afterwards;
 *                           adds the database server's CPU per call (lib/pg.ts), round trips and commits
 *                           per call, and the gateway's CPU per call against SQLite's of this run
 *   --instances 1|2|1,2     with --database: one gateway, two gateway processes on one database (a seller
 *                           per instance, buyer i buying from seller i mod 2, at least 2 buyers), or both
 *                           in turn (default 1,2)
 *   --sessions              instead: paid calls through payment sessions against per-call payments in the
 *                           same run (bench/sessions.ts, its own flags: --seconds, --rounds, --claim-ms, ...)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BuyerKind, RunResult } from './buyer.js';
import type { Child } from './lib/ipc.js';
import { ChildRegistry } from './lib/children.js';
import { cpuTimes, machineInfo, stealPercent } from './lib/machine.js';
import { checkIntegrity, FUNDING, PRICE, pinToCpus, setupMarket, type GatewayReady, type GatewayUsage } from './lib/setup.js';
import { summarize, type LatencySummary } from './lib/stats.js';
import { perCall, type Usage } from './lib/usage.js';
import { flagReader } from './lib/flags.js';
import { createBenchDatabase, DbMeter, type BenchDatabase, type DbUsage } from './lib/pg.js';
import { redactUrl } from '../src/store/errors.js';

const here = dirname(fileURLToPath(import.meta.url));

// `npm run bench -- --sessions`: the sessions bench, with its own flags; it exits when done
if (process.argv.includes('--sessions')) await import('./sessions.js');

const { values: flags } = parseArgs({
  options: {
    buyer: { type: 'string' },
    buyers: { type: 'string' },
    concurrency: { type: 'string' },
    wallets: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    'unpaid-max-seconds': { type: 'string' },
    'max-seconds': { type: 'string' },
    'latency-seconds': { type: 'string' },
    rate: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'boolean' },
    pin: { type: 'boolean' },
    'seller-batch': { type: 'string' },
    durability: { type: 'string' },
    database: { type: 'string' },
    instances: { type: 'string' },
  },
});

const { opt, num } = flagReader(flags);

const cfg = {
  buyer: opt('buyer', 'node') as BuyerKind,
  buyers: num('buyers', 1),
  concurrency: num('concurrency', 256),
  wallets: num('wallets', 16),
  warmupSeconds: num('warmup-seconds', 5),
  unpaidMaxSeconds: num('unpaid-max-seconds', 5),
  maxSeconds: num('max-seconds', 20),
  latencySeconds: num('latency-seconds', 15),
  rate: (flags.rate ?? process.env.BENCH_RATE) !== undefined ? num('rate', 1) : undefined,
  out: resolve(opt('out', join(here, 'results', 'latest.json'))),
  profile: flags.profile ?? process.env.BENCH_PROFILE === '1',
  pin: flags.pin ?? process.env.BENCH_PIN === '1',
  sellerBatch: opt('seller-batch', 'default'),
  durability: opt('durability', 'background'),
  database: opt('database', '') || undefined,
  instances: opt('instances', '1,2').split(',').map(Number),
};
if (cfg.instances.some((n) => n !== 1 && n !== 2)) throw new Error('--instances must be 1, 2 or 1,2 (PostgreSQL gateways on one database)');
if (cfg.database && !/^postgres(ql)?:\/\//.test(cfg.database)) throw new Error('--database must be a PostgreSQL URL (postgres://user@host:5432/any): each configuration gets a fresh database on that server');
if (!cfg.database) cfg.instances = [];
if (cfg.durability !== 'background' && cfg.durability !== 'in-commit') throw new Error('--durability must be background or in-commit');
if (!/^(off|default|[1-9][0-9]*)$/.test(cfg.sellerBatch)) throw new Error('--seller-batch must be off or a positive number');
if (cfg.buyer !== 'node' && cfg.buyer !== 'sdk') throw new Error('--buyer must be node or sdk');

/** the PostgreSQL configuration's fresh database while it runs: dropped on Ctrl-C too */
let currentDb: BenchDatabase | undefined;
const children = new ChildRegistry({ what: 'the bench processes', onSignal: () => currentDb?.drop() });

function spawn(name: string, script: string, env: Record<string, string> = {}, profile = false): Child {
  // one profile per thread (tsx's loader has its own), named by V8 with the pid: the main thread's is the big one
  const profiling = profile ? ['--cpu-prof', `--cpu-prof-dir=${join(here, 'results', 'profiles', script.replace('.ts', ''))}`] : [];
  const c = children.spawn(name, join(here, script), env, profiling);
  if (cfg.pin && c.proc.pid) {
    // the gateway alone on CPU 0; everything else shares the rest (threads follow their process)
    const cpus = script === 'gateway.ts' ? '0' : os.cpus().length > 1 ? `1-${os.cpus().length - 1}` : '0';
    pinToCpus(c.proc.pid, cpus);
  }
  return c;
}

const log = (s: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);

interface PhaseResult {
  name: string;
  route: 'paid' | 'unpaid';
  loop: 'closed' | 'open';
  concurrency?: number;
  targetRate?: number;
  seconds: number;
  completed: number;
  errors: number;
  errorSamples: string[];
  dropped: number;
  callsPerSecond: number;
  latency: LatencySummary;
  cpu: { gateway: GatewayUsage & { queries?: number; rollbacks?: number }; gateways: GatewayUsage[]; seller: Usage; buyers: Usage[]; database?: DbUsage };
  /** CPU milliseconds each process spent per completed call: stable even when other work shares the machine */
  cpuMsPerCall: { gateway: number; seller: number; buyers: number; database?: number };
  /** PostgreSQL: queries the gateways sent (round trips), commits they asked for, commits the server counted, rollbacks (retries) */
  perCall?: { roundTrips: number; commits: number; serverCommits: number; rollbacks: number };
}

/** One configuration of the run: SQLite as shipped, or PostgreSQL with 1 or 2 gateway processes on one fresh database. */
interface Config {
  label: string;
  database: boolean;
  instances: number;
}
const configs: Config[] = [{ label: 'sqlite', database: false, instances: 1 }];
for (const n of cfg.instances) configs.push({ label: n === 1 ? 'postgres' : `postgres x${n}`, database: true, instances: n });

async function runConfig(c: Config) {
  const db = c.database ? await createBenchDatabase(cfg.database!) : undefined;
  currentDb = db;
  const meter = db ? await DbMeter.open(db) : undefined;
  const sharedDir = c.instances > 1 ? mkdtempSync(join(tmpdir(), 'agentpay-bench-fleet-')) : undefined;
  const group = children.group();
  const own = (ch: Child) => group.own(ch);
  try {
    // ---- gateway(s), and what the bench buys ----
    const env = { BENCH_DURABILITY: cfg.durability, ...(db ? { BENCH_DATABASE_URL: db.url } : {}), ...(sharedDir ? { BENCH_DATA_DIR: sharedDir } : {}) };
    const gateways: Child[] = [];
    const ready: GatewayReady[] = [];
    for (let i = 0; i < c.instances; i++) { // one after the other: the first makes the shared data directory's keys and credentials
      const gw = own(spawn(`gateway ${i + 1}`, 'gateway.ts', env, cfg.profile));
      gateways.push(gw);
      ready.push((await gw.ready) as unknown as GatewayReady);
    }
    const g = ready[0]!;
    log(`[${c.label}] gateway pid ${gateways.map((x) => x.pid).join(', ')} at ${ready.map((r) => r.baseUrl).join(', ')}${db ? `; database ${db.name}` : ''}`);
    const market = await setupMarket(g, cfg.wallets);
    const { capability, wallets } = market;
    log(`[${c.label}] capability ${capability.id} at ${PRICE} minor units; ${cfg.wallets} agent wallets funded with ${FUNDING} each`);

    // ---- a seller per gateway instance, and buyers (buyer i buys from seller i mod instances) ----
    const sellers = ready.map((r, i) => own(spawn(`seller ${i + 1}`, 'seller.ts', {
      BENCH_GATEWAY_URL: r.baseUrl,
      BENCH_PROVIDER_KEY: g.creds.provider.apiKey,
      BENCH_CA: g.ca,
      BENCH_CAPABILITY_ID: capability.id,
      BENCH_SELLER_BATCH: cfg.sellerBatch,
    }, cfg.profile)));
    const sellerUrls = await Promise.all(sellers.map(async (s) => ((await s.ready) as { url: string }).url));
    log(`[${c.label}] seller pid ${sellers.map((s) => s.pid).join(', ')} at ${sellerUrls.join(', ')}`);
    const buyerCount = Math.max(cfg.buyers, c.instances);
    const buyers = Array.from({ length: buyerCount }, (_, i) => own(spawn(`buyer ${i + 1}`, 'buyer.ts')));
    await Promise.all(buyers.map((b) => b.ready));
    await Promise.all(buyers.map((b, i) =>
      b.request('setup', { kind: cfg.buyer, gatewayUrl: ready[i % ready.length]!.baseUrl, ca: g.ca, sellerUrl: sellerUrls[i % sellerUrls.length], maxPriceMinor: PRICE, wallets: wallets.filter((_, j) => j % buyerCount === i) }),
    ));
    log(`[${c.label}] ${buyerCount} buyer process(es) (pid ${buyers.map((b) => b.pid).join(', ')}), buyer: ${cfg.buyer}`);

    const paidCompleted = { total: 0 };
    async function phase(name: string, route: 'paid' | 'unpaid', load: { concurrency: number } | { rate: number }, seconds: number): Promise<PhaseResult> {
      const durationMs = seconds * 1000;
      await Promise.all([...gateways, ...sellers, ...buyers].map((x) => x.request('usage'))); // start the meters
      const db0 = await meter?.sample();
      const each = 'rate' in load ? { rate: load.rate / buyers.length } : { concurrency: Math.max(1, Math.round(load.concurrency / buyers.length)) };
      const results = await Promise.all(buyers.map((b) => b.request<RunResult>('run', { paid: route === 'paid', durationMs, ...each })));
      const gws = await Promise.all(gateways.map((x) => x.request<GatewayUsage & { queries?: number; rollbacks?: number }>('usage')));
      const sellerUsages = await Promise.all(sellers.map((x) => x.request<Usage>('usage')));
      const buyerUsage = await Promise.all(buyers.map((x) => x.request<Usage>('usage')));
      const dbUsage = meter && db0 ? await meter.since(db0) : undefined;
      const completed = results.reduce((a, r) => a + r.completed, 0);
      if (route === 'paid') paidCompleted.total += completed;
      const elapsedMs = Math.max(...results.map((r) => r.elapsedMs));
      const sum = <T,>(xs: T[], f: (u: T) => number) => xs.reduce((a, u) => a + f(u), 0);
      const commits = sum(gws, (u) => u.commits);
      const gwUsage = {
        cpuMs: sum(gws, (u) => u.cpuMs), cpuCores: round(sum(gws, (u) => u.cpuCores)), wallMs: gws[0]!.wallMs,
        eventLoopUtilization: round(sum(gws, (u) => u.eventLoopUtilization) / gws.length),
        commits, transactions: sum(gws, (u) => u.transactions),
        meanCommitMs: commits ? round(sum(gws, (u) => u.meanCommitMs * u.commits) / commits) : 0,
        maxCommitMs: Math.max(...gws.map((u) => u.maxCommitMs)), tlsHandshakes: sum(gws, (u) => u.tlsHandshakes),
        ...(c.database ? { queries: sum(gws, (u) => u.queries ?? 0), rollbacks: sum(gws, (u) => u.rollbacks ?? 0) } : {}),
      };
      const sellerUsage = { cpuMs: sum(sellerUsages, (u) => u.cpuMs), cpuCores: round(sum(sellerUsages, (u) => u.cpuCores)), eventLoopUtilization: sellerUsages[0]!.eventLoopUtilization, wallMs: sellerUsages[0]!.wallMs };
      const perCallOf = (n: number) => (completed ? Math.round((n / completed) * 1000) / 1000 : 0);
      const p: PhaseResult = {
        name,
        route,
        loop: 'rate' in load ? 'open' : 'closed',
        ...('rate' in load ? { targetRate: load.rate } : { concurrency: load.concurrency }),
        seconds: Math.round(elapsedMs / 10) / 100,
        completed,
        errors: results.reduce((a, r) => a + r.errors, 0),
        errorSamples: [...new Set(results.flatMap((r) => r.errorSamples))],
        dropped: results.reduce((a, r) => a + r.dropped, 0),
        callsPerSecond: Math.round((completed / elapsedMs) * 1000),
        latency: summarize(results.flatMap((r) => r.latencies)),
        cpu: { gateway: gwUsage, gateways: gws, seller: sellerUsage, buyers: buyerUsage, ...(dbUsage ? { database: dbUsage } : {}) },
        cpuMsPerCall: {
          gateway: perCall(gwUsage, completed),
          seller: perCall(sellerUsage, completed),
          buyers: perCall({ cpuMs: buyerUsage.reduce((a, u) => a + u.cpuMs, 0) }, completed),
          ...(dbUsage ? { database: perCall(dbUsage, completed) } : {}),
        },
        ...(c.database ? { perCall: { roundTrips: perCallOf(gwUsage.queries ?? 0), commits: perCallOf(commits), serverCommits: perCallOf(dbUsage?.commits ?? 0), rollbacks: perCallOf(gwUsage.rollbacks ?? 0) } } : {}),
      };
      const lat = p.latency;
      log(`[${c.label}] ${name}: ${p.completed} calls in ${p.seconds}s = ${p.callsPerSecond}/s, p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms, errors ${p.errors}${p.dropped ? `, dropped ${p.dropped}` : ''}`
        + ` | CPU ms/call: gateway ${p.cpuMsPerCall.gateway}, seller ${p.cpuMsPerCall.seller}, buyers ${p.cpuMsPerCall.buyers}${dbUsage ? `, database ${p.cpuMsPerCall.database}` : ''}`
        + ` | CPU cores: gateway ${gwUsage.cpuCores}, seller ${sellerUsage.cpuCores}, buyers ${buyerUsage.map((u) => u.cpuCores).join('+')}`
        + ` | gateway commits ${commits} (${gwUsage.transactions} tx, mean ${gwUsage.meanCommitMs} ms, max ${gwUsage.maxCommitMs} ms)`
        + (p.perCall ? ` | per call: ${p.perCall.roundTrips} round trips, ${p.perCall.commits} commits (server counted ${p.perCall.serverCommits}), ${p.perCall.rollbacks} rollbacks` : ''));
      for (const e of p.errorSamples) log(`  error: ${e}`);
      return p;
    }

    const phases: PhaseResult[] = [];
    phases.push(await phase('warm-up paid', 'paid', { concurrency: cfg.concurrency }, cfg.warmupSeconds));
    phases.push(await phase('warm-up unpaid', 'unpaid', { concurrency: cfg.concurrency }, Math.min(2, cfg.warmupSeconds)));
    const unpaidMax = await phase('unpaid max (closed loop)', 'unpaid', { concurrency: cfg.concurrency }, cfg.unpaidMaxSeconds);
    phases.push(unpaidMax);
    const paidMax = await phase('paid max (closed loop)', 'paid', { concurrency: cfg.concurrency }, cfg.maxSeconds);
    phases.push(paidMax);
    const rate = cfg.rate ?? Math.max(1, Math.round(paidMax.callsPerSecond / 2));
    const unpaidAtRate = await phase(`unpaid at ${rate}/s (open loop)`, 'unpaid', { rate }, cfg.latencySeconds);
    phases.push(unpaidAtRate);
    const paidAtRate = await phase(`paid at ${rate}/s (open loop)`, 'paid', { rate }, cfg.latencySeconds);
    phases.push(paidAtRate);

    // ---- integrity: what the buyers counted is what the ledger says ----
    const integrity = await checkIntegrity(market, paidCompleted.total);
    log(`[${c.label}] integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}: buyers counted ${paidCompleted.total} complete paid calls, wallets spent ${integrity.spentMinor} (expected ${integrity.expectedMinor}), ${integrity.heldMinor} still held`);

    const gwHandshakes = (await Promise.all(gateways.map((x) => x.request<{ tlsHandshakes: number }>('usage')))).reduce((a, u) => a + u.tlsHandshakes, 0);
    const added = { p50Ms: round(paidAtRate.latency.p50Ms - unpaidAtRate.latency.p50Ms), p99Ms: round(paidAtRate.latency.p99Ms - unpaidAtRate.latency.p99Ms) };
    return {
      label: c.label,
      database: c.database ? 'postgres' : 'sqlite',
      instances: c.instances,
      buyers: buyerCount,
      summary: {
        paidCallsPerSecond: paidMax.callsPerSecond,
        unpaidCallsPerSecond: unpaidMax.callsPerSecond,
        halfLoadRate: rate,
        unpaidAtHalfLoad: pick(unpaidAtRate.latency),
        paidAtHalfLoad: pick(paidAtRate.latency),
        addedLatencyAtHalfLoad: added,
        gatewayCpuCoresAtMax: paidMax.cpu.gateway.cpuCores,
        cpuMsPerCallAtMax: paidMax.cpuMsPerCall,
        ...(paidMax.perCall ? { perCallAtMax: paidMax.perCall } : {}),
        gatewayTlsHandshakes: gwHandshakes,
        errors: phases.reduce((a, p) => a + p.errors, 0),
        integrityOk: integrity.ok,
      },
      integrity,
      phases,
    };
  } finally {
    await group.stop();
    await meter?.close();
    await db?.drop();
    currentDb = undefined;
    if (sharedDir) rmSync(sharedDir, { recursive: true, force: true });
  }
}

async function main() {
  const loadBefore = os.loadavg();
  const timesBefore = cpuTimes();
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${os.availableParallelism()} CPUs; configurations: ${configs.map((c) => c.label).join(', ')}`);

  const runs: Array<Awaited<ReturnType<typeof runConfig>>> = [];
  for (const c of configs) runs.push(await runConfig(c));
  const base = runs[0]!.summary;
  // PostgreSQL against the SQLite baseline of this run: the ratio is the figure (the machine's speed of the hour cancels out)
  const ratios = runs.slice(1).map((r) => ({
    label: r.label,
    gatewayCpuPerCallVsSqlite: round(r.summary.cpuMsPerCallAtMax.gateway / base.cpuMsPerCallAtMax.gateway),
    paidCallsPerSecondVsSqlite: round(r.summary.paidCallsPerSecond / base.paidCallsPerSecond),
  }));

  const steal = stealPercent(timesBefore, cpuTimes());
  const ok = runs.every((r) => r.integrity.ok && r.summary.errors === 0);
  const result = {
    when: new Date().toISOString(),
    machine: machineInfo(loadBefore, steal),
    config: { ...cfg, database: cfg.database ? redactUrl(cfg.database) : undefined, priceMinor: PRICE, command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).map((a) => (a === cfg.database ? redactUrl(a) : a)).join(' ')}` : ''}` },
    summary: base, // the SQLite run, as before the bench knew PostgreSQL
    integrity: runs[0]!.integrity,
    phases: runs[0]!.phases,
    ratios,
    runs: runs.slice(1), // the PostgreSQL configurations, if any
  };
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');

  for (const r of runs) {
    const s = r.summary;
    const cpu = s.cpuMsPerCallAtMax;
    console.log(`
agentpay bench [${r.label}${r.instances > 1 ? `, ${r.instances} gateway instances` : ''}] (${cfg.buyer} buyer, ${r.buyers} buyer process(es), ${cfg.wallets} wallets, ${os.availableParallelism()} CPUs, load before ${loadBefore[0]!.toFixed(2)}, host steal during the run ${steal ?? '?'} %)
  complete paid calls/s (closed loop, ${cfg.concurrency} in flight): ${s.paidCallsPerSecond}   [gateway CPU ${s.gatewayCpuCoresAtMax} cores]
  CPU per paid call at the max: gateway ${cpu.gateway} ms, seller ${cpu.seller} ms, buyers ${cpu.buyers} ms${cpu.database !== undefined ? `, database server ${cpu.database} ms` : ''}${s.perCallAtMax ? `
  per paid call at the max: ${s.perCallAtMax.roundTrips} round trips, ${s.perCallAtMax.commits} commits (server counted ${s.perCallAtMax.serverCommits}), ${s.perCallAtMax.rollbacks} rollbacks` : ''}
  unpaid calls/s, same seller (closed loop):              ${s.unpaidCallsPerSecond}
  open loop at ${s.halfLoadRate}/s:            p50        p99
    unpaid                      ${pad(s.unpaidAtHalfLoad.p50Ms)} ${pad(s.unpaidAtHalfLoad.p99Ms)}
    paid                        ${pad(s.paidAtHalfLoad.p50Ms)} ${pad(s.paidAtHalfLoad.p99Ms)}
    added by the gateway        ${pad(s.addedLatencyAtHalfLoad.p50Ms)} ${pad(s.addedLatencyAtHalfLoad.p99Ms)}
  errors: ${s.errors}; integrity: ${r.integrity.ok ? 'ok' : 'MISMATCH'}; gateway TLS handshakes: ${s.gatewayTlsHandshakes}`);
  }
  if (ratios.length) console.log(`
  against SQLite in this run: ${ratios.map((x) => `${x.label}: gateway CPU per paid call ${x.gatewayCpuPerCallVsSqlite}x, paid calls/s ${x.paidCallsPerSecondVsSqlite}x`).join('; ')}`);
  console.log(`  written to ${cfg.out}\n`);
  return ok;
}

const round = (x: number) => Math.round(x * 100) / 100;
const pad = (ms: number) => `${ms.toFixed(2)} ms`.padStart(10);
const pick = (l: LatencySummary) => ({ p50Ms: l.p50Ms, p99Ms: l.p99Ms, count: l.count });

await children.runMain('bench', main);
