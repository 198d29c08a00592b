/**
 * The bench's seller process: fastify on 127.0.0.1 (plain HTTP: the buyer-to-seller hop
 * is not the gateway's cost, and both routes below share it) with the seller middleware.
 *   GET /forecast        paid: 402 challenge, authorize, handler, complete, receipt
 *   GET /free/forecast   the same handler with payments off (the unpaid baseline)
 * and, for `bench/sessions.ts`, payment sessions checked by the SDK's SessionChecker alone:
 *   POST /session/open      the buyer's signed open, passed to the gateway (one trip), the grant kept
 *   GET /session/forecast   the same handler, paid with a voucher (header x-agentpay-voucher): checked
 *                           and persisted by the seller (BENCH_VOUCHER_STORE file|memory), a seller-
 *                           signed receipt in x-agentpay-session-receipt; a refusal is a 402 with the state
 *   claims                  every BENCH_CLAIM_MS (default 1000) the highest voucher of each session,
 *                           100 sessions per request; IPC `finishSessions` claims and closes them all
 */
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { agentpaySeller } from '../packages/sdk/src/seller/fastify.js';
import { AgentpayClient } from '../packages/sdk/src/client/index.js';
import { decodeHeader, encodeHeader } from '../packages/sdk/src/protocol.js';
import { MemoryVoucherStore, SessionChecker, type VoucherStore } from '../packages/sdk/src/seller/sessions.js';
import { FileVoucherStore } from '../packages/sdk/src/seller/voucher-file-store.js';
import { responseHashSync } from '../packages/sdk/src/seller/sync-hash.js';
import type { SessionOpen, Voucher } from '../packages/sdk/src/contract/sessions.js';
import { generateEd25519 } from '../src/core/ed25519.js';
import { createHash } from 'node:crypto';
import { ready, serve } from './lib/ipc.js';
import { UsageMeter } from './lib/usage.js';

const env = (k: string) => {
  const v = process.env[k];
  if (!v) throw new Error(`seller: ${k} is not set`);
  return v;
};

// off: every gateway call on its own request; a number: batched with that many requests in flight
const batchSetting = process.env.BENCH_SELLER_BATCH ?? 'default';
const batch = batchSetting === 'off' ? false as const : batchSetting === 'default' ? undefined : { maxInFlight: Number(batchSetting) };

let sellerErrors = 0;
const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });
await app.register(agentpaySeller, {
  gatewayUrl: env('BENCH_GATEWAY_URL'),
  apiKey: env('BENCH_PROVIDER_KEY'),
  ca: env('BENCH_CA'),
  capabilityId: env('BENCH_CAPABILITY_ID'),
  ...(batch !== undefined ? { batch } : {}),
  onError: (e, c) => {
    // counted and shown once in a while, never per request (that would be the bottleneck)
    if (sellerErrors++ % 1000 === 0) console.error(`seller: ${c.stage} failed (${sellerErrors} so far):`, e);
  },
});

const forecast = async () => ({ city: 'Lisbon', sunny: true, tempC: 21 });
app.get('/forecast', forecast);
app.get('/free/forecast', { config: { agentpay: false } }, forecast);

// ---- payment sessions (bench/sessions.ts) ----
const gateway = new AgentpayClient({ baseUrl: env('BENCH_GATEWAY_URL'), apiKey: env('BENCH_PROVIDER_KEY'), ca: env('BENCH_CA') });
const platformKeys = new Map<string, Promise<string>>();
const platformKey = (id: string) => {
  let k = platformKeys.get(id);
  if (!k) platformKeys.set(id, (k = gateway.platform.receiptKey(id).then((r) => r.publicKeyPem)));
  return k;
};
const voucherDir = process.env.BENCH_VOUCHER_STORE === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'agentpay-bench-vouchers-'));
const voucherStore: VoucherStore = voucherDir ? new FileVoucherStore(voucherDir) : new MemoryVoucherStore();
const checker = new SessionChecker({ providerId: process.env.BENCH_PROVIDER_ID ?? '', sellerPrivateKeyPem: generateEd25519().privateKeyPem, platformKey, store: voucherStore });
const sessionIds = new Set<string>();
const claimStats = { requests: 0, claims: 0, claimed: 0, refused: 0, opens: 0, closes: 0 };
const claimErrors: string[] = [];
const capabilityId = env('BENCH_CAPABILITY_ID');
const PRICE = process.env.BENCH_PRICE ?? '100';
/** what the handler answers, serialized as fastify does: the bytes the receipt covers */
const requestHashOf = (method: string, url: string) => `sha256:${createHash('sha256').update(`${method} ${url}`).digest('hex')}`;

app.post('/session/open', { config: { agentpay: false } }, async (req) => {
  const { open } = req.body as { open: SessionOpen };
  const opened = await gateway.sessions.open({ open, sellerPublicKey: await checker.publicKeyPem() });
  await checker.acceptGrant(opened.grant);
  sessionIds.add(opened.grant.sessionId);
  claimStats.opens++;
  return { grant: opened.grant };
});
app.get('/session/forecast', { config: { agentpay: false } }, async (req, reply) => {
  const header = req.headers['x-agentpay-voucher'];
  if (typeof header !== 'string') return reply.code(402).send({ error: { code: 'VOUCHER_REQUIRED' } });
  const voucher = decodeHeader<Voucher>(header);
  const requestHash = requestHashOf(req.method, req.url);
  const d = await checker.check(voucher, { priceMinor: PRICE, requestHash, capabilityId });
  if (d.kind === 'refuse') return reply.code(402).send({ error: { code: d.code, message: d.message }, state: d.state });
  const body = JSON.stringify(await forecast());
  const receipt = await checker.settle(d, { ok: true, responseHash: responseHashSync(Buffer.from(body)) });
  return reply.header('content-type', 'application/json; charset=utf-8').header('x-agentpay-session-receipt', encodeHeader(receipt)).send(body);
});

/** Claims the highest voucher of every session with something new, 100 per request. */
let claiming: Promise<void> | undefined;
async function claimAll(): Promise<void> {
  const all = await checker.claims();
  for (let i = 0; i < all.length; i += 100) {
    const chunk = all.slice(i, i + 100);
    claimStats.requests++;
    const out = await gateway.sessions.claim(chunk);
    for (const [j, o] of out.entries()) {
      claimStats.claims++;
      const c = chunk[j]!;
      if (o.status === 200) {
        const b = o.body as { status: string };
        if (b.status === 'claimed') claimStats.claimed++;
        await checker.claimed(c.sessionId, c.voucher.cumulativeMinor);
      } else {
        claimStats.refused++;
        if (claimErrors.length < 5) claimErrors.push(JSON.stringify(o).slice(0, 300));
      }
    }
  }
}
const claimOnce = () => (claiming ??= claimAll().catch((e: unknown) => { if (claimErrors.length < 5) claimErrors.push(String(e)); }).finally(() => { claiming = undefined; }));
const claimTimer = setInterval(() => void claimOnce(), Number(process.env.BENCH_CLAIM_MS ?? 1000));
claimTimer.unref();

await app.listen({ host: '127.0.0.1', port: 0 });
const usage = new UsageMeter();
serve({
  usage: () => ({ ...usage.take(), sellerErrors, sessions: { ...claimStats, errors: claimErrors.slice() } }),
  /** the last claims, then every session closed (the rest back to the buyer); answers what was claimed */
  finishSessions: async () => {
    await claiming;
    await claimOnce();
    const closed: Array<{ id: string; status: string; claimedMinor: string; feeMinor: string; heldMinor: string }> = [];
    for (const id of sessionIds) {
      const c = await gateway.sessions.close(id);
      claimStats.closes++;
      closed.push({ id, status: c.status, claimedMinor: c.claimedMinor, feeMinor: c.feeMinor, heldMinor: c.heldMinor });
    }
    sessionIds.clear();
    return { closed, errors: claimErrors.slice() };
  },
  stop: async () => {
    clearInterval(claimTimer);
    if (voucherDir) rmSync(voucherDir, { recursive: true, force: true });
    await app.close();
    setImmediate(() => process.exit(0));
  },
});
process.on('SIGTERM', () => void app.close().finally(() => {
  if (voucherDir) rmSync(voucherDir, { recursive: true, force: true });
  process.exit(0);
}));
ready({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, pid: process.pid });
