/**
 * The gateway's part of a paid call without sockets or TLS, to compare changes to the hot
 * path: one process, the real app (every plugin: transport check, rate limit, auth,
 * validation, error handling) driven through fastify's inject, a real SQLite file with
 * synchronous=FULL and group commit. A round issues N challenges, then N authorizations,
 * then N completes, `--concurrency` at a time, and measures the CPU time of each stage; the
 * buyer's signing happens between stages and is not counted.
 *
 *   npx tsx bench/hotpath.ts [--calls 2000] [--rounds 5] [--concurrency 32] [--batch N] [--direct] [--profile]
 *
 * `--batch N` sends the operations N at a time through POST /v1/x402/batch, as a busy
 * seller's middleware does, instead of one request each. `--direct` calls the payment service
 * itself (no fastify, no JSON, no authentication): the domain's and the store's share.
 * `--profile` writes a V8 CPU profile of the measured rounds to bench/results/profiles/.
 *
 * Prints CPU microseconds per paid call (median of the rounds) and writes
 * bench/results/hotpath.json. The gateway runs with trustProxy so that an injected
 * request can say x-forwarded-proto: https.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createPrivateKey } from 'node:crypto';
import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { generateEd25519 } from '../src/core/ed25519.js';
import { encodeHeader } from '../packages/sdk/src/protocol.js';
import { signProof } from './lib/proof.js';
import { ensureDevCredentials } from '../src/gateway/dev-credentials.js';
import { startGateway } from '../src/gateway/server.js';
import { authenticate } from '../src/domain/tenancy/api-keys.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' }, wallets: { type: 'string' }, out: { type: 'string' }, batch: { type: 'string' }, direct: { type: 'boolean' }, profile: { type: 'boolean' } } });
const N = Number(values.calls ?? 2000);
const ROUNDS = Number(values.rounds ?? 5);
const K = Number(values.concurrency ?? 32);
const WALLETS = Number(values.wallets ?? 16);
const BATCH = Number(values.batch ?? 1);
const DIRECT = values.direct ?? false;

/** --profile: a V8 CPU profile of the measured rounds only (not start-up or warm-up), main thread. */
const profiler = (() => {
  const session = new Session();
  const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
  return {
    async start() {
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
    },
    async stop(): Promise<string> {
      const { profile } = await post('Profiler.stop');
      const file = join(here, 'results', 'profiles', 'hotpath.cpuprofile');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      return file;
    },
  };
})();

const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-hotpath-'));
const gw = await startGateway({
  dataDir, port: 0, httpPort: null, logger: false,
  config: { trustProxy: true, rateLimit: { max: 100_000_000, windowMs: 1000, signupMax: 10, signupWindowMs: 60_000, paymentMax: 100_000_000 } },
});
try {
  const creds = await ensureDevCredentials(gw.services.ctx, dataDir);
  const call = async (method: 'GET' | 'POST', url: string, key: string, body?: unknown) => {
    const res = await gw.app.inject({ method, url, headers: { 'x-api-key': key, 'x-forwarded-proto': 'https', ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) });
    if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, any>;
  };
  const provider = creds.provider.apiKey;
  const cap = (await call('POST', '/v1/capabilities', provider, { name: 'Hot path', description: 'hot path bench', protocol: 'rest', priceMinor: '100', category: 'weather', endpoint: 'https://127.0.0.1/forecast' })).capability;
  const wallets: Array<{ walletId: string; key: ReturnType<typeof createPrivateKey> }> = [];
  for (let i = 0; i < WALLETS; i++) {
    const pair = generateEd25519();
    const w = (await call('POST', '/v1/wallets', creds.workspace.apiKey, { ownerType: 'agent', ownerId: `hot-${i}`, publicKeyPem: pair.publicKeyPem })).wallet;
    await call('POST', `/v1/wallets/${w.id}/fund`, creds.workspace.apiKey, { amountMinor: '1000000000000' });
    wallets.push({ walletId: w.id, key: createPrivateKey(pair.privateKeyPem) });
  }

  // operations waiting for their batch; sent when BATCH have gathered or on the next turn of the loop
  let waiting: Array<{ body: Record<string, unknown>; resolve: (v: Record<string, any>) => void; reject: (e: unknown) => void }> = [];
  const flush = () => {
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    call('POST', '/v1/x402/batch', provider, { operations: batch.map((w) => w.body) }).then(({ results }) => {
      (results as Array<{ status: number; body: Record<string, any> }>).forEach((r, j) => {
        if (r.status >= 400) batch[j]!.reject(new Error(`batch operation: ${r.status} ${JSON.stringify(r.body)}`));
        else batch[j]!.resolve(r.body);
      });
    }, (e) => batch.forEach((w) => w.reject(e)));
  };
  const batched = (body: Record<string, unknown>) => new Promise<Record<string, any>>((resolve, reject) => {
    waiting.push({ body, resolve, reject });
    if (waiting.length >= BATCH) flush();
    else if (waiting.length === 1) setImmediate(flush);
  });

  // --direct: the payment service itself, no HTTP layer (what the routes cost is the difference)
  const payments = gw.services.payments;
  const providerPrincipal = await gw.services.ctx.store.read((r) => authenticate(r, gw.services.ctx.clock, provider));
  const direct = async (kind: string, body: Record<string, any>): Promise<Record<string, any>> => {
    switch (kind) {
      case 'challenge': return { challenge: await payments.challenge(providerPrincipal, body.capabilityId) };
      case 'authorize': return payments.authorize(providerPrincipal, body as never) as never;
      default: return { receipt: await payments.complete(providerPrincipal, body as never) };
    }
  };

  /** Runs fn for 0..n-1, k at a time; returns CPU and wall milliseconds. */
  async function stage<T>(n: number, fn: (i: number) => Promise<T>): Promise<{ out: T[]; cpuMs: number; sysMs: number; wallMs: number }> {
    const out: T[] = new Array(n);
    let next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: K }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }));
    const cpu = process.cpuUsage(cpu0);
    return { out, cpuMs: (cpu.user + cpu.system) / 1000, sysMs: cpu.system / 1000, wallMs: performance.now() - t0 };
  }

  const rounds: Array<{ challengeUs: number; authorizeUs: number; completeUs: number; totalUs: number; systemUs: number; wallMsPerCall: number }> = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    // one operation per request, or BATCH of them per POST /v1/x402/batch
    const op = (kind: string, body: Record<string, unknown>) => {
      if (DIRECT) return direct(kind, body);
      if (BATCH <= 1) return call('POST', `/v1/x402/${kind}`, provider, body);
      return batched({ op: kind, ...body });
    };
    const ch = await stage(N, () => op('challenge', { capabilityId: cap.id }));
    const proofs = ch.out.map(({ challenge }, i) => {
      const w = wallets[i % wallets.length]!;
      return encodeHeader(signProof(w.key, w.walletId, challenge));
    });
    const au = await stage(N, (i) => op('authorize', { capabilityId: cap.id, payment: proofs[i] }));
    const co = await stage(N, (i) => op('complete', { transactionId: au.out[i]!.transactionId, responseHash: `sha256:${'ab'.repeat(32)}` }));
    const us = (ms: number) => Math.round((ms / N) * 1000);
    const row = { challengeUs: us(ch.cpuMs), authorizeUs: us(au.cpuMs), completeUs: us(co.cpuMs), totalUs: us(ch.cpuMs + au.cpuMs + co.cpuMs), systemUs: us(ch.sysMs + au.sysMs + co.sysMs), wallMsPerCall: Math.round(((ch.wallMs + au.wallMs + co.wallMs) / N) * 1000) / 1000 };
    if (r === 0) {
      console.log(`warm-up round: ${JSON.stringify(row)}`);
      if (values.profile) await profiler.start();
      continue;
    }
    rounds.push(row);
    console.log(`round ${r}: ${JSON.stringify(row)}`);
  }
  if (values.profile) console.log(`CPU profile of the measured rounds: ${await profiler.stop()}`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const result = {
    when: new Date().toISOString(),
    calls: N, roundCount: ROUNDS, concurrency: K, batch: BATCH,
    median: {
      challengeUs: median(rounds.map((x) => x.challengeUs)),
      authorizeUs: median(rounds.map((x) => x.authorizeUs)),
      completeUs: median(rounds.map((x) => x.completeUs)),
      totalUs: median(rounds.map((x) => x.totalUs)),
    },
    rounds,
  };
  console.log(`gateway CPU per paid call (median of ${ROUNDS} rounds of ${N}): ${result.median.totalUs} us = challenge ${result.median.challengeUs} + authorize ${result.median.authorizeUs} + complete ${result.median.completeUs}`);
  const out = values.out ?? join(here, 'results', 'hotpath.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
} finally {
  await gw.close();
  rmSync(dataDir, { recursive: true, force: true });
}
