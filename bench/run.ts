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
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BuyerKind, RunResult } from './buyer.js';
import { Child } from './lib/ipc.js';
import { cpuTimes, machineInfo, stealPercent } from './lib/machine.js';
import { checkIntegrity, FUNDING, PRICE, pinToCpus, setupMarket, type GatewayReady, type GatewayUsage } from './lib/setup.js';
import { summarize, type LatencySummary } from './lib/stats.js';
import { perCall, type Usage } from './lib/usage.js';
import { flagReader } from './lib/flags.js';

const here = dirname(fileURLToPath(import.meta.url));

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
};
if (cfg.durability !== 'background' && cfg.durability !== 'in-commit') throw new Error('--durability must be background or in-commit');
if (!/^(off|default|[1-9][0-9]*)$/.test(cfg.sellerBatch)) throw new Error('--seller-batch must be off or a positive number');
if (cfg.buyer !== 'node' && cfg.buyer !== 'sdk') throw new Error('--buyer must be node or sdk');

const children: Child[] = [];
let stopping: Promise<void> | undefined;
const stopAll = () => (stopping ??= Promise.all(children.map((c) => c.stop())).then(() => undefined));
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    console.error(`\n${sig}: stopping the bench processes`);
    void stopAll().finally(() => process.exit(130));
  });
}

function spawn(name: string, script: string, env: Record<string, string> = {}, profile = false): Child {
  // one profile per thread (tsx's loader has its own), named by V8 with the pid: the main thread's is the big one
  const profiling = profile ? ['--cpu-prof', `--cpu-prof-dir=${join(here, 'results', 'profiles', script.replace('.ts', ''))}`] : [];
  const c = new Child(name, join(here, script), env, profiling);
  children.push(c);
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
  cpu: { gateway: GatewayUsage; seller: Usage; buyers: Usage[] };
  /** CPU milliseconds each process spent per completed call: stable even when other work shares the machine */
  cpuMsPerCall: { gateway: number; seller: number; buyers: number };
}

async function main() {
  const loadBefore = os.loadavg();
  const timesBefore = cpuTimes();
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${os.availableParallelism()} CPUs`);

  // ---- gateway, and what the bench buys ----
  const gateway = spawn('gateway', 'gateway.ts', { BENCH_DURABILITY: cfg.durability }, cfg.profile);
  const g = (await gateway.ready) as unknown as GatewayReady;
  log(`gateway pid ${gateway.pid} at ${g.baseUrl}`);
  const market = await setupMarket(g, cfg.wallets);
  const { capability, wallets } = market;
  log(`capability ${capability.id} at ${PRICE} minor units; ${cfg.wallets} agent wallets funded with ${FUNDING} each`);

  // ---- seller and buyers ----
  const seller = spawn('seller', 'seller.ts', {
    BENCH_GATEWAY_URL: g.baseUrl,
    BENCH_PROVIDER_KEY: g.creds.provider.apiKey,
    BENCH_CA: g.ca,
    BENCH_CAPABILITY_ID: capability.id,
    BENCH_SELLER_BATCH: cfg.sellerBatch,
  }, cfg.profile);
  const sellerUrl = ((await seller.ready) as { url: string }).url;
  log(`seller pid ${seller.pid} at ${sellerUrl}`);
  const buyers = Array.from({ length: cfg.buyers }, (_, i) => spawn(`buyer ${i + 1}`, 'buyer.ts'));
  await Promise.all(buyers.map((b) => b.ready));
  await Promise.all(buyers.map((b, i) =>
    b.request('setup', { kind: cfg.buyer, gatewayUrl: g.baseUrl, ca: g.ca, sellerUrl, maxPriceMinor: PRICE, wallets: wallets.filter((_, j) => j % cfg.buyers === i) }),
  ));
  log(`${cfg.buyers} buyer process(es) (pid ${buyers.map((b) => b.pid).join(', ')}), buyer: ${cfg.buyer}`);

  const paidCompleted = { total: 0 };
  async function phase(name: string, route: 'paid' | 'unpaid', load: { concurrency: number } | { rate: number }, seconds: number): Promise<PhaseResult> {
    const durationMs = seconds * 1000;
    await Promise.all([gateway, seller, ...buyers].map((c) => c.request('usage'))); // start the meters
    const each = 'rate' in load ? { rate: load.rate / buyers.length } : { concurrency: Math.max(1, Math.round(load.concurrency / buyers.length)) };
    const results = await Promise.all(buyers.map((b) => b.request<RunResult>('run', { paid: route === 'paid', durationMs, ...each })));
    const [gwUsage, sellerUsage, ...buyerUsage] = (await Promise.all([gateway, seller, ...buyers].map((c) => c.request<Usage>('usage')))) as [GatewayUsage, ...Usage[]];
    const completed = results.reduce((a, r) => a + r.completed, 0);
    if (route === 'paid') paidCompleted.total += completed;
    const elapsedMs = Math.max(...results.map((r) => r.elapsedMs));
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
      cpu: { gateway: gwUsage!, seller: sellerUsage!, buyers: buyerUsage },
      cpuMsPerCall: {
        gateway: perCall(gwUsage!, completed),
        seller: perCall(sellerUsage!, completed),
        buyers: perCall({ cpuMs: buyerUsage.reduce((a, u) => a + u.cpuMs, 0) }, completed),
      },
    };
    const lat = p.latency;
    log(`${name}: ${p.completed} calls in ${p.seconds}s = ${p.callsPerSecond}/s, p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms, errors ${p.errors}${p.dropped ? `, dropped ${p.dropped}` : ''}`
      + ` | CPU ms/call: gateway ${p.cpuMsPerCall.gateway}, seller ${p.cpuMsPerCall.seller}, buyers ${p.cpuMsPerCall.buyers}`
      + ` | CPU cores: gateway ${gwUsage!.cpuCores}, seller ${sellerUsage!.cpuCores}, buyers ${buyerUsage.map((u) => u.cpuCores).join('+')}`
      + ` | gateway commits ${gwUsage!.commits} (${gwUsage!.transactions} tx, mean ${gwUsage!.meanCommitMs} ms, max ${gwUsage!.maxCommitMs} ms)`);
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
  log(`integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}: buyers counted ${paidCompleted.total} complete paid calls, wallets spent ${integrity.spentMinor} (expected ${integrity.expectedMinor}), ${integrity.heldMinor} still held`);

  const gwHandshakes = ((await gateway.request<{ tlsHandshakes: number }>('usage')).tlsHandshakes);
  const added = { p50Ms: round(paidAtRate.latency.p50Ms - unpaidAtRate.latency.p50Ms), p99Ms: round(paidAtRate.latency.p99Ms - unpaidAtRate.latency.p99Ms) };
  const steal = stealPercent(timesBefore, cpuTimes());
  const result = {
    when: new Date().toISOString(),
    machine: machineInfo(loadBefore, steal),
    config: { ...cfg, priceMinor: PRICE, command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}` },
    summary: {
      paidCallsPerSecond: paidMax.callsPerSecond,
      unpaidCallsPerSecond: unpaidMax.callsPerSecond,
      halfLoadRate: rate,
      unpaidAtHalfLoad: pick(unpaidAtRate.latency),
      paidAtHalfLoad: pick(paidAtRate.latency),
      addedLatencyAtHalfLoad: added,
      gatewayCpuCoresAtMax: paidMax.cpu.gateway.cpuCores,
      gatewayTlsHandshakes: gwHandshakes,
      errors: phases.reduce((a, p) => a + p.errors, 0),
      integrityOk: integrity.ok,
    },
    integrity,
    phases,
  };
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');

  console.log(`
agentpay bench (${cfg.buyer} buyer, ${cfg.buyers} buyer process(es), ${cfg.wallets} wallets, ${os.availableParallelism()} CPUs, load before ${loadBefore[0]!.toFixed(2)}, host steal during the run ${steal ?? '?'} %)
  complete paid calls/s (closed loop, ${cfg.concurrency} in flight): ${paidMax.callsPerSecond}   [gateway CPU ${paidMax.cpu.gateway.cpuCores} cores]
  unpaid calls/s, same seller (closed loop):              ${unpaidMax.callsPerSecond}
  open loop at ${rate}/s:            p50        p99
    unpaid                      ${pad(unpaidAtRate.latency.p50Ms)} ${pad(unpaidAtRate.latency.p99Ms)}
    paid                        ${pad(paidAtRate.latency.p50Ms)} ${pad(paidAtRate.latency.p99Ms)}
    added by the gateway        ${pad(added.p50Ms)} ${pad(added.p99Ms)}
  errors: ${result.summary.errors}; integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}; gateway TLS handshakes: ${gwHandshakes}
  written to ${cfg.out}
`);
  return integrity.ok && result.summary.errors === 0;
}

const round = (x: number) => Math.round(x * 100) / 100;
const pad = (ms: number) => `${ms.toFixed(2)} ms`.padStart(10);
const pick = (l: LatencySummary) => ({ p50Ms: l.p50Ms, p99Ms: l.p99Ms, count: l.count });

let ok = false;
try {
  ok = await main();
} catch (e) {
  console.error('bench failed:', e);
} finally {
  await stopAll();
}
process.exit(ok ? 0 : 1);
