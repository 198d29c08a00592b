/**
 * `npm run bench -- --sessions` (or `npx tsx bench/sessions.ts`): paid calls through payment
 * sessions against per-call payments, in the same run, with the same gateway (bench/gateway.ts,
 * HTTPS, SQLite data directory; then PostgreSQL with --database), the same seller process and
 * handler (bench/seller.ts), the same buyer processes (bench/buyer.ts, node buyer), wallets and
 * concurrency. The two modes alternate, --rounds times:
 *   per-call   GET /forecast: 402 challenge, proof, authorize, handler, complete (the middleware)
 *   session    GET /session/forecast: a voucher signed by the session key, checked and persisted by
 *              the seller alone (SessionChecker, voucher store file or memory), a seller-signed
 *              receipt; each session used by one call at a time, opened through the seller when all
 *              are busy (one gateway trip); the seller claims every --claim-ms (100 sessions a request)
 * plus the unpaid route once (the seller's floor), and an open loop at one rate (half the per-call
 * max, or --rate) for unpaid, per-call and session latency. At the end the seller claims and closes
 * every session and the ledger is checked: the buyers' wallets lost PRICE x per-call calls plus what
 * the session receipts charged, nothing is held, the seller got it less the fees, the platform the fees
 * (feeFor(PRICE) per per-call call, feeFor(claimed) per session: the per-call rule on the total).
 *
 * Per paid call: the seller's CPU (session: checking and persisting the voucher and signing the
 * receipt; per-call: the middleware's gateway trips), the gateway's CPU (session: the opens and the
 * claims amortized over the calls), the buyers' CPU, latency p50/p99, calls/s. The headline is the
 * session/per-call ratio of each, per round (the machine is shared: ratios within one run).
 *
 * Flags (or env BENCH_<NAME>):
 *   --buyers N  (default 1)   --wallets N (default 16)   --concurrency N (default 256)
 *   --warmup-seconds S (default 5)   --seconds S measured closed-loop phase, each mode each round (default 10)
 *   --rounds N (default 2)    --latency-seconds S open-loop phase per route (default 10)   --rate R
 *   --claim-ms MS             the seller's claim period (default 1000)
 *   --voucher-store file|memory   the seller's voucher store (default file: a write per call that survives the process)
 *   --database URL            after SQLite, the same on a fresh PostgreSQL database on that server (dropped afterwards)
 *   --out PATH                (default bench/results/sessions.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RunResult } from './buyer.js';
import type { Child } from './lib/ipc.js';
import { ChildRegistry } from './lib/children.js';
import { cpuTimes, machineInfo, stealPercent } from './lib/machine.js';
import { FUNDING, PRICE, setupMarket, type GatewayReady, type GatewayUsage } from './lib/setup.js';
import { summarize, type LatencySummary } from './lib/stats.js';
import { perCall, type Usage } from './lib/usage.js';
import { flagReader } from './lib/flags.js';
import { createBenchDatabase, DbMeter, type BenchDatabase, type DbUsage } from './lib/pg.js';
import { redactUrl } from '../src/store/errors.js';
import { feeFor } from '../src/core/money.js';
import { DEFAULT_CONFIG } from '../src/gateway/config.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../src/domain/tenancy/tenants.js';

const here = dirname(fileURLToPath(import.meta.url));

const { values: flags } = parseArgs({
  options: {
    sessions: { type: 'boolean' },
    buyers: { type: 'string' },
    wallets: { type: 'string' },
    concurrency: { type: 'string' },
    'warmup-seconds': { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    'latency-seconds': { type: 'string' },
    rate: { type: 'string' },
    'claim-ms': { type: 'string' },
    'voucher-store': { type: 'string' },
    database: { type: 'string' },
    out: { type: 'string' },
  },
});
const { opt, num } = flagReader(flags);
const cfg = {
  buyers: num('buyers', 1),
  wallets: num('wallets', 16),
  concurrency: num('concurrency', 256),
  warmupSeconds: num('warmup-seconds', 5),
  seconds: num('seconds', 10),
  rounds: num('rounds', 2),
  latencySeconds: num('latency-seconds', 10),
  rate: (flags.rate ?? process.env.BENCH_RATE) !== undefined ? num('rate', 1) : undefined,
  claimMs: num('claim-ms', 1000),
  voucherStore: opt('voucher-store', 'file'),
  database: opt('database', '') || undefined,
  out: resolve(opt('out', join(here, 'results', 'sessions.json'))),
};
if (cfg.voucherStore !== 'file' && cfg.voucherStore !== 'memory') throw new Error('--voucher-store must be file or memory');
if (cfg.database && !/^postgres(ql)?:\/\//.test(cfg.database)) throw new Error('--database must be a PostgreSQL URL (postgres://user@host:5432/any): the run gets a fresh database on that server');

/** each session's cap: far above what a run spends, far below a wallet's funding */
const SESSION_CAP = '1000000000';
const FEE_BPS = DEFAULT_CONFIG.feeBps;

const log = (s: string) => console.log(`[sessions ${new Date().toISOString().slice(11, 19)}] ${s}`);
const round = (x: number) => Math.round(x * 100) / 100;
const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 1000) / 1000 : NaN);

let currentDb: BenchDatabase | undefined;
const children = new ChildRegistry({ what: 'the bench processes', onSignal: () => currentDb?.drop() });
const spawn = (name: string, script: string, env: Record<string, string> = {}): Child => children.spawn(name, join(here, script), env);

type Mode = 'per-call' | 'session' | 'unpaid';
interface SessionCounters { requests: number; claims: number; claimed: number; refused: number; opens: number; closes: number; errors: string[] }
interface Phase {
  name: string;
  mode: Mode;
  loop: 'closed' | 'open';
  load: number;
  seconds: number;
  completed: number;
  errors: number;
  errorSamples: string[];
  dropped: number;
  callsPerSecond: number;
  latency: LatencySummary;
  cpuMsPerCall: { gateway: number; seller: number; buyers: number; database?: number };
  cpuCores: { gateway: number; seller: number; buyers: number };
  gatewayCommitsPerCall: number;
  /** session phases: sessions opened, claim requests and claims sent by the seller during the phase */
  sessions?: { opens: number; claimRequests: number; claims: number; callsPerClaimRequest: number };
  database?: DbUsage;
}

async function runConfig(label: string, database: boolean) {
  const db = database ? await createBenchDatabase(cfg.database!) : undefined;
  currentDb = db;
  const meter = db ? await DbMeter.open(db) : undefined;
  const group = children.group();
  const own = (c: Child) => group.own(c);
  try {
    const gw = own(spawn('gateway', 'gateway.ts', db ? { BENCH_DATABASE_URL: db.url } : {}));
    const g = (await gw.ready) as unknown as GatewayReady;
    log(`[${label}] gateway pid ${gw.pid} at ${g.baseUrl}${db ? `; database ${db.name}` : ''}`);
    const market = await setupMarket(g, cfg.wallets);
    const walletIds = market.wallets.map((w) => w.walletId);
    const sellerWallet = g.creds.provider.walletId;
    const balances = () => gw.request<Record<string, { balanceMinor: string; availableMinor: string }>>('balances', { walletIds: [...walletIds, sellerWallet, PLATFORM_REVENUE_WALLET_ID] });
    const before = await balances();
    const seller = own(spawn('seller', 'seller.ts', {
      BENCH_GATEWAY_URL: g.baseUrl, BENCH_PROVIDER_KEY: g.creds.provider.apiKey, BENCH_PROVIDER_ID: g.creds.provider.id, BENCH_CA: g.ca,
      BENCH_CAPABILITY_ID: market.capability.id, BENCH_PRICE: PRICE, BENCH_CLAIM_MS: String(cfg.claimMs), BENCH_VOUCHER_STORE: cfg.voucherStore,
    }));
    const sellerUrl = ((await seller.ready) as { url: string }).url;
    const buyers = Array.from({ length: cfg.buyers }, (_, i) => own(spawn(`buyer ${i + 1}`, 'buyer.ts')));
    await Promise.all(buyers.map((b) => b.ready));
    await Promise.all(buyers.map((b, i) => b.request('setup', {
      kind: 'node', gatewayUrl: g.baseUrl, ca: g.ca, sellerUrl, maxPriceMinor: PRICE, wallets: market.wallets.filter((_, j) => j % cfg.buyers === i),
      providerId: g.creds.provider.id, capabilityId: market.capability.id, sessionCapMinor: SESSION_CAP,
    })));
    log(`[${label}] seller pid ${seller.pid} (voucher store ${cfg.voucherStore}, claims every ${cfg.claimMs} ms); buyers pid ${buyers.map((b) => b.pid).join(', ')}`);

    const count = { perCall: 0, session: 0 };
    type SellerUsage = Usage & { sessions: SessionCounters };
    async function phase(name: string, mode: Mode, load: { concurrency: number } | { rate: number }, seconds: number): Promise<Phase> {
      await Promise.all([gw, ...buyers].map((x) => x.request('usage')));
      const s0 = await seller.request<SellerUsage>('usage');
      const db0 = await meter?.sample();
      const each = 'rate' in load ? { rate: load.rate / buyers.length } : { concurrency: Math.max(1, Math.round(load.concurrency / buyers.length)) };
      const results = await Promise.all(buyers.map((b) => b.request<RunResult>('run', { paid: mode === 'per-call', session: mode === 'session', durationMs: seconds * 1000, ...each })));
      const gu = await gw.request<GatewayUsage>('usage');
      const su = await seller.request<SellerUsage>('usage');
      const bu = await Promise.all(buyers.map((x) => x.request<Usage>('usage')));
      const dbUsage = meter && db0 ? await meter.since(db0) : undefined;
      const completed = results.reduce((a, r) => a + r.completed, 0);
      if (mode === 'per-call') count.perCall += completed;
      if (mode === 'session') count.session += completed;
      const elapsedMs = Math.max(...results.map((r) => r.elapsedMs));
      const buyerCpu = bu.reduce((a, u) => a + u.cpuMs, 0);
      const d = (k: 'requests' | 'claims' | 'opens') => su.sessions[k] - s0.sessions[k];
      const p: Phase = {
        name, mode, loop: 'rate' in load ? 'open' : 'closed', load: 'rate' in load ? load.rate : load.concurrency,
        seconds: Math.round(elapsedMs / 10) / 100,
        completed,
        errors: results.reduce((a, r) => a + r.errors, 0),
        errorSamples: [...new Set(results.flatMap((r) => r.errorSamples))],
        dropped: results.reduce((a, r) => a + r.dropped, 0),
        callsPerSecond: Math.round((completed / elapsedMs) * 1000),
        latency: summarize(results.flatMap((r) => r.latencies)),
        cpuMsPerCall: { gateway: perCall(gu, completed), seller: perCall(su, completed), buyers: perCall({ cpuMs: buyerCpu }, completed), ...(dbUsage ? { database: perCall(dbUsage, completed) } : {}) },
        cpuCores: { gateway: gu.cpuCores, seller: su.cpuCores, buyers: round(bu.reduce((a, u) => a + u.cpuCores, 0)) },
        gatewayCommitsPerCall: completed ? round(gu.commits / completed) : 0,
        ...(mode === 'session' ? { sessions: { opens: d('opens'), claimRequests: d('requests'), claims: d('claims'), callsPerClaimRequest: d('requests') ? Math.round(completed / d('requests')) : completed } } : {}),
        ...(dbUsage ? { database: dbUsage } : {}),
      };
      log(`[${label}] ${name}: ${completed} calls in ${p.seconds}s = ${p.callsPerSecond}/s, p50 ${p.latency.p50Ms} ms, p99 ${p.latency.p99Ms} ms, errors ${p.errors}${p.dropped ? `, dropped ${p.dropped}` : ''}`
        + ` | CPU ms/call: gateway ${p.cpuMsPerCall.gateway}, seller ${p.cpuMsPerCall.seller}, buyers ${p.cpuMsPerCall.buyers}${dbUsage ? `, database ${p.cpuMsPerCall.database}` : ''}`
        + ` | cores: gateway ${p.cpuCores.gateway}, seller ${p.cpuCores.seller}, buyers ${p.cpuCores.buyers} | gateway commits/call ${p.gatewayCommitsPerCall}`
        + (p.sessions ? ` | opens ${p.sessions.opens}, claim requests ${p.sessions.claimRequests} (${p.sessions.claims} claims, ${p.sessions.callsPerClaimRequest} calls each)` : ''));
      for (const e of p.errorSamples) log(`  error: ${e}`);
      return p;
    }

    const phases: Phase[] = [];
    const closed = { concurrency: cfg.concurrency };
    phases.push(await phase('warm-up per-call', 'per-call', closed, cfg.warmupSeconds));
    phases.push(await phase('warm-up session', 'session', closed, cfg.warmupSeconds));
    phases.push(await phase('warm-up unpaid', 'unpaid', closed, Math.min(2, cfg.warmupSeconds)));
    const unpaid = await phase('unpaid max (closed loop)', 'unpaid', closed, cfg.seconds);
    phases.push(unpaid);
    const rounds: Array<{ perCall: Phase; session: Phase }> = [];
    for (let r = 1; r <= cfg.rounds; r++) {
      // alternate which goes first, so that a drift of the machine's speed does not favour one mode
      const order: Mode[] = r % 2 ? ['per-call', 'session'] : ['session', 'per-call'];
      const got: Partial<Record<Mode, Phase>> = {};
      for (const m of order) {
        got[m] = await phase(`round ${r}: ${m} max (closed loop)`, m, closed, cfg.seconds);
        phases.push(got[m]!);
      }
      rounds.push({ perCall: got['per-call']!, session: got.session! });
    }
    const perCallMax = Math.min(...rounds.map((x) => x.perCall.callsPerSecond));
    const rate = cfg.rate ?? Math.max(1, Math.round(perCallMax / 2));
    const open = { rate };
    const unpaidAtRate = await phase(`unpaid at ${rate}/s (open loop)`, 'unpaid', open, cfg.latencySeconds);
    const perCallAtRate = await phase(`per-call at ${rate}/s (open loop)`, 'per-call', open, cfg.latencySeconds);
    const sessionAtRate = await phase(`session at ${rate}/s (open loop)`, 'session', open, cfg.latencySeconds);
    phases.push(unpaidAtRate, perCallAtRate, sessionAtRate);

    // ---- the end: the seller claims and closes every session; then the ledger against what the buyers were charged ----
    const stats = await Promise.all(buyers.map((b) => b.request<{ opened: number; spentMinor: string }>('sessionStats')));
    const finished = await seller.request<{ closed: Array<{ id: string; status: string; claimedMinor: string; feeMinor: string; heldMinor: string }>; errors: string[] }>('finishSessions');
    const after = await balances();
    const price = BigInt(PRICE);
    const delta = (id: string) => BigInt(after[id]!.balanceMinor) - BigInt(before[id]!.balanceMinor);
    const receiptsCharged = stats.reduce((a, s) => a + BigInt(s.spentMinor), 0n);
    const claimed = finished.closed.reduce((a, c) => a + BigInt(c.claimedMinor), 0n);
    const sessionFees = finished.closed.reduce((a, c) => a + feeFor(BigInt(c.claimedMinor), FEE_BPS), 0n);
    const feesReported = finished.closed.reduce((a, c) => a + BigInt(c.feeMinor), 0n);
    const perCallMoney = price * BigInt(count.perCall);
    const perCallFees = feeFor(price, FEE_BPS) * BigInt(count.perCall);
    const buyersSpent = -walletIds.reduce((a, id) => a + delta(id), 0n);
    const held = [...walletIds, sellerWallet, PLATFORM_REVENUE_WALLET_ID].reduce((a, id) => a + BigInt(after[id]!.balanceMinor) - BigInt(after[id]!.availableMinor), 0n);
    const checks = {
      'session receipts charged = PRICE x session calls': receiptsCharged === price * BigInt(count.session),
      'claimed at close = what the receipts charged': claimed === receiptsCharged,
      'every session closed, nothing held by it': finished.closed.every((c) => c.status === 'closed' && c.heldMinor === '0'),
      "the sessions' fees = feeFor(claimed) each": feesReported === sessionFees,
      "buyers' wallets lost per-call + session charges": buyersSpent === perCallMoney + receiptsCharged,
      'nothing held on any wallet': held === 0n,
      'platform got the fees': delta(PLATFORM_REVENUE_WALLET_ID) === perCallFees + sessionFees,
      'seller got the rest': delta(sellerWallet) === perCallMoney + receiptsCharged - perCallFees - sessionFees,
    };
    const integrity = {
      ok: Object.values(checks).every(Boolean) && finished.errors.length === 0,
      checks,
      perCallCalls: count.perCall, sessionCalls: count.session, sessionsOpened: stats.reduce((a, s) => a + s.opened, 0), sessionsClosed: finished.closed.length,
      buyersSpentMinor: buyersSpent.toString(), receiptsChargedMinor: receiptsCharged.toString(), claimedMinor: claimed.toString(),
      sellerGotMinor: delta(sellerWallet).toString(), platformGotMinor: delta(PLATFORM_REVENUE_WALLET_ID).toString(), sessionFeesMinor: sessionFees.toString(), heldMinor: held.toString(),
      claimErrors: finished.errors,
    };
    log(`[${label}] integrity: ${integrity.ok ? 'ok' : 'MISMATCH'}: ${count.perCall} per-call calls, ${count.session} session calls over ${integrity.sessionsOpened} sessions; buyers spent ${buyersSpent}, seller got ${integrity.sellerGotMinor}, platform ${integrity.platformGotMinor}, held ${held}`);
    for (const [k, v] of Object.entries(checks)) if (!v) log(`  FAILED: ${k}`);
    for (const e of finished.errors) log(`  claim error: ${e}`);

    const perRound = rounds.map(({ perCall: a, session: b }) => ({
      gatewayCpuPerCall: ratio(b.cpuMsPerCall.gateway, a.cpuMsPerCall.gateway),
      sellerCpuPerCall: ratio(b.cpuMsPerCall.seller, a.cpuMsPerCall.seller),
      buyersCpuPerCall: ratio(b.cpuMsPerCall.buyers, a.cpuMsPerCall.buyers),
      callsPerSecond: ratio(b.callsPerSecond, a.callsPerSecond),
      p50: ratio(b.latency.p50Ms, a.latency.p50Ms),
      p99: ratio(b.latency.p99Ms, a.latency.p99Ms),
    }));
    return {
      label,
      rate,
      unpaid,
      rounds,
      perRound,
      openLoop: {
        rate,
        unpaid: pickLat(unpaidAtRate), perCall: pickLat(perCallAtRate), session: pickLat(sessionAtRate),
        sessionVsPerCall: { p50: ratio(sessionAtRate.latency.p50Ms, perCallAtRate.latency.p50Ms), p99: ratio(sessionAtRate.latency.p99Ms, perCallAtRate.latency.p99Ms) },
        sessionVsUnpaid: { p50: ratio(sessionAtRate.latency.p50Ms, unpaidAtRate.latency.p50Ms), p99: ratio(sessionAtRate.latency.p99Ms, unpaidAtRate.latency.p99Ms) },
        gatewayCpuPerCall: { perCall: perCallAtRate.cpuMsPerCall.gateway, session: sessionAtRate.cpuMsPerCall.gateway },
      },
      errors: phases.reduce((a, p) => a + p.errors, 0),
      integrity,
      phases,
    };
  } finally {
    await group.stop();
    await meter?.close();
    await db?.drop();
    currentDb = undefined;
  }
}

const pickLat = (p: Phase) => ({ p50Ms: p.latency.p50Ms, p99Ms: p.latency.p99Ms, completed: p.completed, dropped: p.dropped, cpuMsPerCall: p.cpuMsPerCall });

async function main(): Promise<boolean> {
  const loadBefore = os.loadavg();
  const timesBefore = cpuTimes();
  const configs: Array<[string, boolean]> = [['sqlite', false], ...(cfg.database ? [['postgres', true] as [string, boolean]] : [])];
  log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${os.availableParallelism()} CPUs; configurations: ${configs.map((c) => c[0]).join(', ')}`);
  const runs = [];
  for (const [label, database] of configs) runs.push(await runConfig(label, database));
  const steal = stealPercent(timesBefore, cpuTimes());
  const loadAfter = os.loadavg();
  const ok = runs.every((r) => r.integrity.ok && r.errors === 0);
  const result = {
    when: new Date().toISOString(),
    machine: { ...machineInfo(loadBefore, steal), loadAverageAfter: loadAfter.map(round) },
    config: { ...cfg, database: cfg.database ? redactUrl(cfg.database) : undefined, priceMinor: PRICE, fundingMinor: FUNDING, sessionCapMinor: SESSION_CAP, feeBps: FEE_BPS },
    runs,
  };
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');

  const f = (x: number) => String(x).padStart(9);
  for (const r of runs) {
    console.log(`
agentpay sessions bench [${r.label}] (${cfg.buyers} buyer process(es), ${cfg.wallets} wallets, ${cfg.concurrency} in flight, voucher store ${cfg.voucherStore}, claims every ${cfg.claimMs} ms; load ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after; steal ${steal ?? '?'} %)
  closed loop, per paid call   calls/s    p50 ms    p99 ms   gateway CPU ms  seller CPU ms  buyers CPU ms
  unpaid (floor)           ${f(r.unpaid.callsPerSecond)} ${f(r.unpaid.latency.p50Ms)} ${f(r.unpaid.latency.p99Ms)} ${f(r.unpaid.cpuMsPerCall.gateway)}      ${f(r.unpaid.cpuMsPerCall.seller)}      ${f(r.unpaid.cpuMsPerCall.buyers)}
${r.rounds.map((x, i) => [x.perCall, x.session].map((p) => `  round ${i + 1} ${p.mode.padEnd(9)}     ${f(p.callsPerSecond)} ${f(p.latency.p50Ms)} ${f(p.latency.p99Ms)} ${f(p.cpuMsPerCall.gateway)}      ${f(p.cpuMsPerCall.seller)}      ${f(p.cpuMsPerCall.buyers)}`).join('\n')).join('\n')}
  session/per-call, per round: ${r.perRound.map((x, i) => `round ${i + 1}: gateway CPU/call ${x.gatewayCpuPerCall}, seller CPU/call ${x.sellerCpuPerCall}, calls/s ${x.callsPerSecond}, p50 ${x.p50}, p99 ${x.p99}`).join('; ')}
  open loop at ${r.rate}/s: p50/p99 ms unpaid ${r.openLoop.unpaid.p50Ms}/${r.openLoop.unpaid.p99Ms}, per-call ${r.openLoop.perCall.p50Ms}/${r.openLoop.perCall.p99Ms}, session ${r.openLoop.session.p50Ms}/${r.openLoop.session.p99Ms}; session/per-call p50 ${r.openLoop.sessionVsPerCall.p50}, p99 ${r.openLoop.sessionVsPerCall.p99}; session/unpaid p50 ${r.openLoop.sessionVsUnpaid.p50}, p99 ${r.openLoop.sessionVsUnpaid.p99}
  errors: ${r.errors}; integrity: ${r.integrity.ok ? 'ok' : 'MISMATCH'} (${r.integrity.perCallCalls} per-call + ${r.integrity.sessionCalls} session calls, ${r.integrity.sessionsOpened} sessions, claimed ${r.integrity.claimedMinor}, seller got ${r.integrity.sellerGotMinor}, platform ${r.integrity.platformGotMinor}, held ${r.integrity.heldMinor})`);
  }
  console.log(`  written to ${cfg.out}\n`);
  return ok;
}

await children.runMain('sessions bench', main);
