/**
 * The bench's load generator: agent wallets buying from the seller, closed-loop (N calls
 * always in flight: throughput) or open-loop (calls start on a fixed schedule whatever the
 * answers do: latency without coordinated omission; a call's latency counts from its
 * scheduled start; lib/loops.ts).
 *
 * Two buyers, both doing every step of a complete paid call (docs/protocol.md):
 *   sdk   createBuyer from src/sdk/buyer as shipped: challenge verified, proof signed and
 *         receipt verified with @noble/ed25519 (pure JS), sellers called with undici fetch
 *         over a keep-alive agent.
 *   node  the same steps and checks written against node:crypto (src/core/ed25519.ts, the
 *         gateway's own strict verifier) and undici.request over a keep-alive agent, so that
 *         buyer CPU takes less of a machine it shares with the gateway.
 * The unpaid baseline uses the same HTTP client as the paid calls of the same buyer.
 *
 * `session` calls (bench/sessions.ts): the same seller's handler paid through a payment session
 * (the SDK's openRequest/BuyerSession): a call takes a session of this process's pool to itself
 * (one call at a time per session, so vouchers never overtake each other), or opens one through
 * the seller (POST /session/open: the one gateway trip) when all are busy; it signs a voucher,
 * calls GET /session/forecast with it and checks the seller's receipt against the bytes received.
 */
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { parsePublicKeyPem, verifyObject } from '../src/core/ed25519.js';
import { createBuyer, type Buyer } from '../packages/sdk/src/buyer/index.js';
import { openRequest, type BuyerSession } from '../packages/sdk/src/buyer/session.js';
import type { SessionGrant, SessionReceipt, SessionState } from '../packages/sdk/src/contract/sessions.js';
import { AgentpayClient } from '../packages/sdk/src/client/index.js';
import { decodeHeader, encodeHeader, isPriceChallenge, isReceipt, PAYMENT_HEADER, RECEIPT_HEADER, type PriceChallenge } from '../packages/sdk/src/protocol.js';
import { ready, serve } from './lib/ipc.js';
import { closedLoop, openLoop, type Call } from './lib/loops.js';
import { signProof } from './lib/proof.js';
import { UsageMeter } from './lib/usage.js';

export type { RunResult } from './lib/loops.js';

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
  /** sessions: the seller's provider id and capability, and the cap each session holds */
  providerId?: string;
  capabilityId?: string;
  sessionCapMinor?: string;
}

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
      const proof = signProof(w.key, w.walletId, challenge);
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

/** Paid calls through payment sessions: a pool of open sessions, each used by one call at a time. */
function sessionCalls(s: Setup): { session: Call; opened: () => number; spentMinor: () => bigint } {
  const gateway = new AgentpayClient({ baseUrl: s.gatewayUrl, ca: s.ca });
  const keys = new Map<string, Promise<string>>();
  const platformKey = (id: string) => {
    let k = keys.get(id);
    if (!k) keys.set(id, (k = gateway.platform.receiptKey(id).then((r) => r.publicKeyPem)));
    return k;
  };
  const free: BuyerSession[] = [];
  let opened = 0;
  let attempts = 0;
  /** what this process's verified receipts charged */
  let spent = 0n;
  const price = BigInt(s.maxPriceMinor);
  async function open(): Promise<BuyerSession> {
    const w = s.wallets[attempts++ % s.wallets.length]!;
    const { open, session: pending } = await openRequest({
      walletId: w.walletId, privateKeyPem: w.privateKeyPem, providerId: s.providerId!, capabilityId: s.capabilityId!, capMinor: s.sessionCapMinor!,
      currency: 'USD', expiresAt: new Date(Date.now() + 6 * 60 * 60 * 1000).toISOString(),
    });
    const res = await request(`${s.sellerUrl}/session/open`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ open }) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`session open answered ${res.statusCode}: ${text.slice(0, 200)}`);
    const { grant } = JSON.parse(text) as { grant: SessionGrant };
    const started = await pending.start(grant, await platformKey(grant.signingKeyId));
    opened++;
    return started;
  }
  return {
    opened: () => opened,
    spentMinor: () => spent,
    async session(i) {
      const paying = free.pop() ?? (await open());
      try {
        const path = `/session/forecast?n=${i}`;
        const requestHash = `sha256:${createHash('sha256').update(`GET ${path}`).digest('hex')}`;
        const voucher = await paying.voucher(s.maxPriceMinor, requestHash);
        const res = await request(`${s.sellerUrl}${path}`, { dispatcher: agent, headers: { 'x-agentpay-voucher': encodeHeader(voucher) } });
        const bytes = Buffer.from(await res.body.arrayBuffer());
        if (res.statusCode === 402) {
          const b = JSON.parse(bytes.toString('utf8')) as { error?: { code?: string }; state?: SessionState | null };
          if (b.state) paying.resync(b.state);
          throw new Error(`session call refused: ${b.error?.code}`);
        }
        if (res.statusCode !== 200) throw new Error(`session call answered ${res.statusCode}: ${bytes.toString('utf8').slice(0, 200)}`);
        const header = res.headers['x-agentpay-session-receipt'];
        if (typeof header !== 'string') throw new Error('session call without a receipt');
        const receipt = decodeHeader<SessionReceipt>(header);
        if (!(await paying.verifyReceipt(receipt, `sha256:${createHash('sha256').update(bytes).digest('hex')}`))) throw new Error('session receipt does not verify');
        if (BigInt(receipt.chargedMinor) !== price) throw new Error(`session receipt charged ${receipt.chargedMinor}, expected ${price}`);
        paying.settled(receipt);
        spent += price;
      } finally {
        free.push(paying);
      }
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

let calls: { paid: Call; unpaid: Call } | undefined;
let sessions: ReturnType<typeof sessionCalls> | undefined;
const usage = new UsageMeter();

serve({
  setup: async (m) => {
    const s = m as unknown as Setup & { type: string };
    calls = s.kind === 'sdk' ? sdkCalls(s) : nodeCalls(s);
    if (s.providerId) sessions = sessionCalls(s);
    return { kind: s.kind };
  },
  /** sessions this process opened, and what its verified session receipts charged */
  sessionStats: () => ({ opened: sessions?.opened() ?? 0, spentMinor: (sessions?.spentMinor() ?? 0n).toString() }),
  run: async (m) => {
    if (!calls) throw new Error('setup first');
    if (m.session && !sessions) throw new Error('setup without sessions');
    const call = m.session ? sessions!.session : m.paid ? calls.paid : calls.unpaid;
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
