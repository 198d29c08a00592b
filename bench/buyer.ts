/**
 * The bench's load generator: agent wallets buying from the seller, closed-loop (N calls
 * always in flight: throughput) or open-loop (calls start on a fixed schedule whatever the
 * answers do: latency without coordinated omission; a call's latency counts from its
 * scheduled start).
 *
 * Two buyers, both doing every step of a complete paid call (docs/protocol.md):
 *   sdk   createBuyer from src/sdk/buyer as shipped: challenge verified, proof signed and
 *         receipt verified with @noble/ed25519 (pure JS), sellers called with undici fetch
 *         over a keep-alive agent.
 *   node  the same steps and checks written against node:crypto (src/core/ed25519.ts, the
 *         gateway's own strict verifier) and undici.request over a keep-alive agent, so that
 *         buyer CPU takes less of a machine it shares with the gateway.
 * The unpaid baseline uses the same HTTP client as the paid calls of the same buyer.
 */
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { parsePublicKeyPem, signObject, verifyObject } from '../src/core/ed25519.js';
import { createBuyer, type Buyer } from '../src/sdk/buyer/index.js';
import { AgentpayClient } from '../src/sdk/client/index.js';
import { decodeHeader, encodeHeader, isPriceChallenge, isReceipt, PAYMENT_HEADER, RECEIPT_HEADER, type PriceChallenge } from '../src/sdk/protocol.js';
import { ready, serve } from './lib/ipc.js';
import { UsageMeter } from './lib/usage.js';

export type BuyerKind = 'sdk' | 'node';

interface Wallet {
  walletId: string;
  privateKeyPem: string;
}

interface Setup {
  kind: BuyerKind;
  gatewayUrl: string;
  ca: string;
  sellerUrl: string;
  wallets: Wallet[];
  maxPriceMinor: string;
}

export interface RunResult {
  completed: number;
  errors: number;
  /** distinct error messages, first few */
  errorSamples: string[];
  /** open loop only: scheduled calls not started because too many were in flight */
  dropped: number;
  elapsedMs: number;
  /** latencies of the completed calls, ms */
  latencies: number[];
}

type Call = (i: number) => Promise<void>;

/** Keep-alive connections to the seller: one pool, reused by every call of this process. */
const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000, connections: 512 });
const keepAliveFetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher: agent } as never)) as unknown as typeof fetch;

function sdkCalls(s: Setup): { paid: Call; unpaid: Call } {
  const buyers: Buyer[] = s.wallets.map((w) =>
    createBuyer({ gatewayUrl: s.gatewayUrl, ca: s.ca, walletId: w.walletId, privateKeyPem: w.privateKeyPem, maxPriceMinor: s.maxPriceMinor, fetch: keepAliveFetch }),
  );
  return {
    async paid(i) {
      const res = await buyers[i % buyers.length]!.fetch(`${s.sellerUrl}/forecast`);
      await res.arrayBuffer(); // already read and hash-checked by the buyer; handed back unchanged
      if (res.status !== 200) throw new Error(`paid call answered ${res.status}`);
      if (res.receipt?.status !== 'success') throw new Error('paid call without a verified success receipt');
    },
    async unpaid() {
      const res = await keepAliveFetch(`${s.sellerUrl}/free/forecast`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`unpaid call answered ${res.status}`);
    },
  };
}

function nodeCalls(s: Setup): { paid: Call; unpaid: Call } {
  const gateway = new AgentpayClient({ baseUrl: s.gatewayUrl, ca: s.ca });
  const keys = new Map<string, Promise<KeyObject>>();
  const platformKey = (id: string) => {
    let k = keys.get(id);
    if (!k) {
      k = gateway.platform.receiptKey(id).then((r) => parsePublicKeyPem(r.publicKeyPem));
      keys.set(id, k);
    }
    return k;
  };
  const wallets = s.wallets.map((w) => ({ walletId: w.walletId, key: createPrivateKey(w.privateKeyPem) }));
  const ceiling = BigInt(s.maxPriceMinor);
  const paidUrl = `${s.sellerUrl}/forecast`;
  const unpaidUrl = `${s.sellerUrl}/free/forecast`;

  return {
    async paid(i) {
      const w = wallets[i % wallets.length]!;
      // 1. the unpaid call: 402 with a challenge, verified before anything is signed
      const first = await request(paidUrl, { dispatcher: agent });
      const text = await first.body.text();
      if (first.statusCode !== 402) throw new Error(`first call answered ${first.statusCode}`);
      const challenge = (JSON.parse(text) as { challenge?: unknown }).challenge;
      if (!isPriceChallenge(challenge)) throw new Error('402 without a well-formed challenge');
      if (!verifyObject(await platformKey(challenge.signingKeyId), challenge as unknown as Record<string, unknown>)) throw new Error('challenge not signed by the platform');
      if (BigInt(challenge.amountMinor) > ceiling) throw new Error('price above the ceiling');
      if (!(Date.parse(challenge.expiresAt) > Date.now())) throw new Error('challenge expired');
      // 2. the proof, signed with the agent's key
      const unsigned = { version: 1, challenge, walletId: w.walletId, signedAt: new Date().toISOString() };
      const proof = { ...unsigned, signature: signObject(w.key, unsigned) };
      // 3. the paid call, and its receipt checked against the bytes received
      const res = await request(paidUrl, { dispatcher: agent, headers: { [PAYMENT_HEADER]: encodeHeader(proof) } });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`paid call answered ${res.statusCode}: ${bytes.toString('utf8').slice(0, 200)}`);
      const header = res.headers[RECEIPT_HEADER];
      if (typeof header !== 'string') throw new Error('paid call without a receipt');
      checkReceipt(decodeHeader(header), await platformKey(decodeHeader<{ signingKeyId: string }>(header).signingKeyId), w.walletId, challenge, bytes);
    },
    async unpaid() {
      const res = await request(unpaidUrl, { dispatcher: agent });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`unpaid call answered ${res.statusCode}`);
    },
  };
}

/** The SDK buyer's receipt checks (src/sdk/buyer/index.ts verifiedReceipt), on node:crypto. */
function checkReceipt(r: unknown, key: KeyObject, walletId: string, c: PriceChallenge, bytes: Buffer): void {
  if (!isReceipt(r)) throw new Error('not a receipt');
  if (!verifyObject(key, r as unknown as Record<string, unknown>)) throw new Error('receipt not signed by the platform');
  if (r.consumerId !== walletId || r.capabilityId !== c.capabilityId || r.providerId !== c.providerId) throw new Error('receipt for another wallet, capability or seller');
  if (r.amount.amountMinor !== c.amountMinor || r.amount.currency !== c.currency) throw new Error('receipt for another amount');
  if (r.status !== 'success') throw new Error(`receipt status ${r.status}`);
  if (r.responseHash !== `sha256:${createHash('sha256').update(bytes).digest('hex')}`) throw new Error('receipt does not cover the bytes received');
}

function newResult(): RunResult & { seen: Set<string> } {
  return { completed: 0, errors: 0, errorSamples: [], dropped: 0, elapsedMs: 0, latencies: [], seen: new Set() };
}

function record(r: ReturnType<typeof newResult>, e: unknown): void {
  r.errors++;
  const m = e instanceof Error ? e.message : String(e);
  if (r.seen.size < 5 && !r.seen.has(m)) {
    r.seen.add(m);
    r.errorSamples.push(m);
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

async function closedLoop(call: Call, concurrency: number, durationMs: number): Promise<RunResult> {
  const r = newResult();
  const t0 = performance.now();
  const end = t0 + durationMs;
  let i = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now();
      try {
        await call(i++);
        r.completed++;
        r.latencies.push(round2(performance.now() - start));
      } catch (e) {
        record(r, e);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  r.elapsedMs = performance.now() - t0;
  const { seen: _s, ...out } = r;
  return out;
}

async function openLoop(call: Call, rate: number, durationMs: number, maxInFlight: number): Promise<RunResult> {
  const r = newResult();
  const interval = 1000 / rate;
  const t0 = performance.now();
  let started = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(Math.floor((now - t0) / interval) + 1, Math.ceil(durationMs / interval));
      while (started < due) {
        const scheduled = t0 + started * interval;
        const i = started++;
        if (inFlight >= maxInFlight) {
          r.dropped++;
          continue;
        }
        inFlight++;
        const p: Promise<void> = call(i).then(
          () => {
            r.completed++;
            r.latencies.push(round2(performance.now() - scheduled));
          },
          (e) => record(r, e),
        ).finally(() => {
          inFlight--;
          pending.delete(p);
        });
        pending.add(p);
      }
      if (now - t0 >= durationMs) done();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  r.elapsedMs = performance.now() - t0;
  const { seen: _s, ...out } = r;
  return out;
}

let calls: { paid: Call; unpaid: Call } | undefined;
const usage = new UsageMeter();

serve({
  setup: async (m) => {
    const s = m as unknown as Setup & { type: string };
    calls = s.kind === 'sdk' ? sdkCalls(s) : nodeCalls(s);
    return { kind: s.kind };
  },
  run: async (m) => {
    if (!calls) throw new Error('setup first');
    const call = m.paid ? calls.paid : calls.unpaid;
    const durationMs = m.durationMs as number;
    return m.rate
      ? openLoop(call, m.rate as number, durationMs, (m.maxInFlight as number | undefined) ?? 4096)
      : closedLoop(call, m.concurrency as number, durationMs);
  },
  usage: () => usage.take(),
  stop: async () => {
    await agent.close().catch(() => undefined);
    setImmediate(() => process.exit(0));
  },
});
ready({ pid: process.pid });
