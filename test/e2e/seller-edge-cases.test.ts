/**
 * Paid calls at the edges of HTTP, over the real HTTPS gateway and real sellers on 127.0.0.1:
 * a slow POST (its handler deadline), bodyless statuses (204, 304), web streams and Responses
 * returned to fastify, a seller that compresses what the buyer accepts, and fastify routes
 * registered before the plugin. Each paid case ends with the buyer's balance: a completed call
 * charged once, a failed one refunded with no hold left.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, type Buyer } from '../../packages/sdk/src/buyer/index.js';
import { encodeHeader, PAYMENT_HEADER } from '../../packages/sdk/src/protocol.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { paid } from '../../packages/sdk/src/seller/node.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, publish, sha256, type AgentWallet } from './helpers.js';

const LIMIT_MS = 300;
const SLOW_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestGateway;
let capabilityId: string;
let sellerOptions: { gatewayUrl: string; apiKey: string; ca: string; capabilityId: string; handlerTimeoutMs: number };
let app: FastifyInstance;
let nodeSeller: http.Server;
let sellerFetch: typeof fetch;
const urls = { fastify: '', node: '' };
/** slow POST handler runs that reached their end */
let slowPostsFinished = 0;
/** told when a slow POST handler starts, i.e. once its call is authorized */
let onSlowStart: (() => void) | undefined;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  sellerFetch = fetchTrusting(t.ca);
  sellerOptions = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, handlerTimeoutMs: LIMIT_MS };

  app = Fastify({ https: { cert: t.gw.tls!.cert, key: t.gw.tls!.key } });
  await app.register(agentpaySeller, sellerOptions);
  app.post('/slow', async () => {
    onSlowStart?.();
    await sleep(SLOW_MS);
    slowPostsFinished++;
    return { late: true };
  });
  app.get('/no-content', async (_request, reply) => reply.code(204).send('never sent, so never hashed'));
  app.get('/not-modified', async (_request, reply) => reply.code(304).header('etag', '"v1"').send('never sent, so never hashed'));
  app.get('/web-stream', async (_request, reply) => reply.type('text/plain').send(new Response('from a web stream').body));
  app.get('/web-response', async () => new Response('{"made":true}', { status: 201, headers: { 'content-type': 'application/json', 'x-from': 'response' } }));
  // what @fastify/compress does: gzip when the request accepts it, as an onSend hook before agentpay's
  await app.register(async (child) => {
    child.addHook('onSend', async (request, reply, payload) => {
      if (!String(request.headers['accept-encoding'] ?? '').includes('gzip') || reply.statusCode !== 200) return payload;
      reply.header('content-encoding', 'gzip').removeHeader('content-length');
      return gzipSync(Buffer.from(String(payload)));
    });
    child.get('/compressed', async () => ({ compressible: 'yes '.repeat(50) }));
    child.get('/compressed-free', { config: { agentpay: false } }, async () => ({ compressible: 'yes '.repeat(50) }));
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  urls.fastify = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  nodeSeller = http.createServer(paid((req, res) => {
    if (req.url === '/no-content') {
      res.writeHead(204, { 'content-length': '27' });
      res.end('never sent, so never hashed');
    } else if (req.url === '/not-modified') {
      res.writeHead(304, { etag: '"v1"' });
      res.end('never sent, so never hashed');
    } else {
      res.statusCode = 404;
      res.end('not found');
    }
  }, sellerOptions));
  await new Promise<void>((r) => nodeSeller.listen(0, '127.0.0.1', r));
  urls.node = `http://127.0.0.1:${(nodeSeller.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  nodeSeller?.closeAllConnections();
  await new Promise((r) => nodeSeller?.close(r));
  await t?.close();
});

const buyerFor = (a: AgentWallet): Buyer => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: sellerFetch });
const balanceOf = (a: AgentWallet) => t.workspace.wallets.balance(a.walletId);
const charged = { balanceMinor: '900', availableMinor: '900', currency: 'USD' };
const untouched = { balanceMinor: '1000', availableMinor: '1000', currency: 'USD' };

describe('a paid fastify POST whose handler outlives handlerTimeoutMs', () => {
  it('is answered 504 HANDLER_TIMEOUT with a failed receipt, and the buyer is refunded with no hold', async () => {
    const a = await fundedAgent(t, '1000');
    const started = Date.now();
    const res = await buyerFor(a).fetch(`${urls.fastify}/slow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"city":"Faro"}' });
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(SLOW_MS); // answered in the handler's place
    expect(await res.json()).toMatchObject({ error: { code: 'HANDLER_TIMEOUT' } });
    expect(res.receipt).toMatchObject({ status: 'failed', capabilityId });
    expect(await balanceOf(a)).toEqual(untouched);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('is failed even when the buyer has gone: the hold is released at the deadline, and the late answer charges nothing', async () => {
    const a = await fundedAgent(t, '1000');
    const payer = buyerFor(a).payer;
    const unpaid = await sellerFetch(`${urls.fastify}/slow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const proof = await payer.signProof((await payer.verifiedChallenge(await unpaid.json()))!);
    const finished = slowPostsFinished;
    const handlerStarted = new Promise<void>((r) => (onSlowStart = r));
    const gone = new AbortController();
    const call = sellerFetch(`${urls.fastify}/slow`, { method: 'POST', headers: { 'content-type': 'application/json', [PAYMENT_HEADER]: encodeHeader(proof) }, body: '{}', signal: gone.signal }).catch(() => 'aborted');
    await handlerStarted; // authorized: the hold is placed and the handler runs
    onSlowStart = undefined;
    gone.abort();
    expect(await call).toBe('aborted');
    expect((await balanceOf(a)).availableMinor).toBe('900');

    await until(async () => (await balanceOf(a)).availableMinor === '1000' || slowPostsFinished !== finished, 'the hold released at the deadline');
    expect(slowPostsFinished).toBe(finished); // released before the handler ended, not by its answer
    expect(await balanceOf(a)).toEqual(untouched);

    await until(() => slowPostsFinished !== finished, 'the slow handler to end');
    await sleep(100);
    expect(await balanceOf(a)).toEqual(untouched);
    const entries = await t.workspace.wallets.ledger(a.walletId);
    expect(entries.filter((e) => e.type === 'refund')).toHaveLength(1);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe.each(['fastify', 'node'] as const)('a paid %s call answered without a body', (adapter) => {
  it.each([['/no-content', 204], ['/not-modified', 304]] as const)('%s: the receipt covers the empty body sent, no content-length, the buyer charged once', async (path, status) => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${urls[adapter]}${path}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-length')).toBeNull();
    if (status === 304) expect(res.headers.get('etag')).toBe('"v1"');
    expect(new Uint8Array(await res.arrayBuffer())).toHaveLength(0);
    expect(res.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, responseHash: sha256('') });
    expect(await balanceOf(a)).toEqual(charged);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('a paid fastify handler that sends web stream types', () => {
  it('sells a web ReadableStream: read whole, hashed and sent', async () => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${urls.fastify}/web-stream`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('from a web stream');
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256('from a web stream') });
    expect(await balanceOf(a)).toEqual(charged);
  });

  it('sells a web Response with its status, headers and body', async () => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${urls.fastify}/web-response`);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-from')).toBe('response');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ made: true });
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256('{"made":true}') });
    expect(await balanceOf(a)).toEqual(charged);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('a seller that compresses what the request accepts', () => {
  it('would gzip for fetch\'s default accept-encoding, but the buyer asks for the paid answer uncompressed, so its receipt verifies', async () => {
    const free = await sellerFetch(`${urls.fastify}/compressed-free`);
    expect(free.headers.get('content-encoding')).toBe('gzip');
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${urls.fastify}/compressed`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBeNull();
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ compressible: 'yes '.repeat(50) });
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256(body) });
    expect(await balanceOf(a)).toEqual(charged);
  });
});

describe('fastify routes registered before the agentpaySeller plugin', () => {
  it('are not sold: served free, with no challenge and no hold, even with a proof', async () => {
    const early = Fastify();
    let ran = 0;
    early.get('/before', async () => {
      ran++;
      return { before: true };
    });
    await early.register(agentpaySeller, sellerOptions);
    early.get('/after', async () => ({ after: true }));
    await early.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(early.server.address() as AddressInfo).port}`;
      const a = await fundedAgent(t, '1000');
      const free = await buyerFor(a).fetch(`${url}/before`);
      expect(free.status).toBe(200);
      expect(free.receipt).toBeNull();
      expect(await free.json()).toEqual({ before: true });
      // a proof sent anyway is not used
      const challenge = await t.provider.payments.challenge(capabilityId);
      const proof = await buyerFor(a).payer.signProof(challenge);
      const withProof = await fetch(`${url}/before`, { headers: { [PAYMENT_HEADER]: encodeHeader(proof) } });
      expect(withProof.status).toBe(200);
      expect(ran).toBe(2);
      expect(await balanceOf(a)).toEqual(untouched);
      // the route registered after it is sold
      const sold = await buyerFor(a).fetch(`${url}/after`);
      expect(sold.receipt?.status).toBe('success');
      expect(await balanceOf(a)).toEqual(charged);
    } finally {
      await early.close();
    }
  });

  it('refuse to start when one declares config.agentpay, naming the route', async () => {
    const early = Fastify();
    early.get('/premium', { config: { agentpay: { capabilityId } } }, async () => ({ deep: true }));
    early.get('/health', async () => 'ok'); // free, before the plugin: fine
    await early.register(agentpaySeller, sellerOptions);
    await expect(early.ready()).rejects.toThrow(/GET \/premium declares config\.agentpay but was registered before the agentpaySeller plugin.*register the plugin first/);
    await early.close();
  });

  it('registering the plugin twice on one instance is refused', async () => {
    const twice = Fastify();
    await twice.register(agentpaySeller, sellerOptions);
    await expect(twice.register(agentpaySeller, sellerOptions)).rejects.toThrow(/already registered/);
    await twice.close();
  });
});
