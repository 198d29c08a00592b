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
 */
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AgentpayClient } from '../src/sdk/client/index.js';
import { encodeHeader } from '../src/sdk/protocol.js';
import { GatewayBatcher } from '../src/sdk/seller/batcher.js';
import { responseHashSync } from '../src/sdk/seller/core.js';
import type { Authorization, Challenge, Receipt } from '../src/sdk/types.js';
import { Child } from './lib/ipc.js';
import { closedLoop } from './lib/loops.js';
import { cpuTimes, machineInfo, perCpuPercent, stealPercent } from './lib/machine.js';
import { signProof } from './lib/proof.js';
import { checkIntegrity, PRICE, pinToCpus, setupMarket, type GatewayReady, type GatewayUsage } from './lib/setup.js';
import { summarize } from './lib/stats.js';
import { perCall, UsageMeter } from './lib/usage.js';
import { flagReader } from './lib/flags.js';

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
};
if (!Number.isInteger(cfg.batch) || cfg.batch > 100) throw new Error('--batch must be a whole number from 1 to 100 (the batch route carries at most 100)');
if (cfg.durability !== 'background' && cfg.durability !== 'in-commit') throw new Error('--durability must be background or in-commit');

const log = (s: string) => console.log(`[gateway-alone ${new Date().toISOString().slice(11, 19)}] ${s}`);
const round = (x: number) => Math.round(x * 100) / 100;

let gateway: Child | undefined;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    console.error(`\n${sig}: stopping the gateway`);
    void (gateway?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

/** What bench/seller.ts's paid handler answers: the bytes the seller hashes for `complete`. */
const BODY = Buffer.from(JSON.stringify({ city: 'Lisbon', sunny: true, tempC: 21 }));

async function main(): Promise<boolean> {
  const loadBefore = os.loadavg();
  const timesBefore = cpuTimes();
  const cpus = os.availableParallelism();
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${cpus} CPUs`);

  // ---- the gateway on CPU 0, this driver on the others ----
  const profiling = cfg.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(here, 'results', 'profiles', 'gateway-alone')}`] : [];
  gateway = new Child('gateway', join(here, 'gateway.ts'), { BENCH_DURABILITY: cfg.durability }, profiling);
  const pinned = cpus > 1;
  if (pinned) {
    pinToCpus(gateway.pid, '0');
    pinToCpus(process.pid, cpus > 2 ? `1-${cpus - 1}` : '1');
  } else log('one CPU only: gateway and driver share it, the figure is not the gateway alone');
  const g = (await gateway.ready) as unknown as GatewayReady;
  log(`gateway pid ${gateway.pid} at ${g.baseUrl}${pinned ? ' on CPU 0' : ''}; driver pid ${process.pid}${pinned ? ` on CPU ${cpus > 2 ? `1-${cpus - 1}` : '1'}` : ''}`);
  const market = await setupMarket(g, cfg.wallets);
  const capabilityId = market.capability.id;
  log(`capability ${capabilityId} at ${PRICE} minor units; ${cfg.wallets} agent wallets funded`);

  // ---- the seller middleware's gateway client, as shipped, counting its requests ----
  const seller = new AgentpayClient({ baseUrl: g.baseUrl, apiKey: g.creds.provider.apiKey, ca: g.ca });
  let gatewayRequests = 0;
  const raw = seller.http.raw.bind(seller.http);
  seller.http.raw = ((...args: Parameters<typeof raw>) => {
    gatewayRequests++;
    return raw(...args);
  }) as typeof seller.http.raw;
  // --batch 1: the middleware with `batch: false` (core.ts), every operation on its own route at once
  const batcher = new GatewayBatcher(seller, cfg.batch === 1 ? { maxInFlight: Infinity } : { maxOperations: cfg.batch, maxInFlight: cfg.inFlight });
  const wallets = market.wallets.map((w) => ({ walletId: w.walletId, key: createPrivateKey(w.privateKeyPem) }));

  async function paidCall(i: number): Promise<void> {
    const w = wallets[i % wallets.length]!;
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
    await gateway!.request('usage'); // start the meters
    driverMeter.take();
    gatewayRequests = 0;
    const times0 = cpuTimes();
    const r = await closedLoop(paidCall, cfg.concurrency, seconds * 1000);
    const gw = await gateway!.request<GatewayUsage>('usage');
    const driver = driverMeter.take();
    const times1 = cpuTimes();
    const steal = stealPercent(times0, times1);
    // the gateway's core (cpu0) busy and stolen: a core neither busy nor stolen is one the gateway waited on
    const perCpu = perCpuPercent(times0, times1);
    paidCalls += r.completed;
    const latency = summarize(r.latencies);
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
      cpu: { gateway: gw, driver },
      cpuMsPerCall: { gateway: perCall(gw, r.completed), driver: perCall(driver, r.completed) },
    };
    log(`${name}: ${p.completed} calls in ${p.seconds}s = ${p.callsPerSecond}/s, p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, errors ${p.errors}`
      + ` | CPU ms/call: gateway ${p.cpuMsPerCall.gateway}, driver ${p.cpuMsPerCall.driver}`
      + ` | CPU cores: gateway ${gw.cpuCores} (loop ${gw.eventLoopUtilization}), driver ${driver.cpuCores} (loop ${driver.eventLoopUtilization})`
      + ` | ${gatewayRequests} gateway requests (${p.operationsPerRequest} operations each)`
      + ` | commits ${gw.commits} (${p.transactionsPerCommit} tx each, mean ${gw.meanCommitMs} ms, max ${gw.maxCommitMs} ms) | steal ${steal ?? '?'} %`
      + (perCpu ? ` | per CPU busy/steal %: ${perCpu.map((c, i) => `cpu${i} ${c.busy}/${c.steal}`).join(', ')}` : ''));
    for (const e of p.errorSamples) log(`  error: ${e}`);
    return p;
  }

  const warmup = await phase('warm-up', cfg.warmupSeconds);
  const measured = await phase('measured', cfg.seconds);

  const integrity = await checkIntegrity(market, paidCalls);
  log(`integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}: ${paidCalls} complete paid calls counted, wallets spent ${integrity.spentMinor} (expected ${integrity.expectedMinor}), ${integrity.heldMinor} still held`);

  const gwCores = measured.cpu.gateway.cpuCores;
  const driverCores = measured.cpu.driver.cpuCores;
  const limit = limitOf(gwCores, driverCores, measured.perCpuPercent?.[0]);
  const result = {
    when: new Date().toISOString(),
    machine: { ...machineInfo(loadBefore, stealPercent(timesBefore, cpuTimes())), pinned },
    config: { ...cfg, priceMinor: PRICE, command: `npx tsx bench/gateway-alone.ts${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}` },
    summary: {
      paidCallsPerSecond: measured.callsPerSecond,
      errors: warmup.errors + measured.errors,
      cpuMsPerCall: measured.cpuMsPerCall,
      cpuCores: { gateway: gwCores, driver: driverCores },
      limit,
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
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');

  console.log(`
agentpay gateway alone (${pinned ? 'gateway on CPU 0, driver on the rest' : 'not pinned'}; ${cfg.concurrency} calls in flight, ${cfg.batch === 1 ? 'every operation on its own route' : `batches of up to ${cfg.batch}, ${cfg.inFlight} under way`}; load before ${loadBefore[0]!.toFixed(2)}, host steal ${measured.stealPercent ?? '?'} % during the measured phase)
  complete paid calls/s:          ${measured.callsPerSecond}   (${measured.completed} in ${measured.seconds} s, p50 ${measured.latency.p50Ms} ms, p99 ${measured.latency.p99Ms} ms)
  CPU per paid call:              gateway ${measured.cpuMsPerCall.gateway} ms, driver ${measured.cpuMsPerCall.driver} ms
  CPU cores busy:                 gateway ${gwCores}, driver ${driverCores}: limit ${limit}${measured.perCpuPercent ? `
  per CPU busy / stolen:          ${measured.perCpuPercent.map((c, i) => `cpu${i} ${c.busy} % / ${c.steal} %`).join(', ')}` : ''}
  commits:                        ${measured.cpu.gateway.commits}, ${measured.transactionsPerCommit} transactions each (mean ${measured.cpu.gateway.meanCommitMs} ms)
  gateway requests:               ${measured.gatewayRequests}, ${measured.operationsPerRequest} operations each; TLS handshakes so far ${measured.cpu.gateway.tlsHandshakes}
  errors: ${result.summary.errors}; integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}
  written to ${cfg.out}
`);
  return integrity.ok && result.summary.errors === 0;
}

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

let ok = false;
try {
  ok = await main();
} catch (e) {
  console.error('gateway-alone bench failed:', e);
} finally {
  await gateway?.stop();
}
process.exit(ok ? 0 : 1);
