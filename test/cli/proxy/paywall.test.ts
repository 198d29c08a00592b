/**
 * `agentpay proxy` in process (startPaywall, the function the command runs) in front of an
 * unmodified upstream (./upstream.ts: a plain node:http server that knows nothing of agentpay),
 * with the real HTTPS test gateway and the SDK's buyer paying through it. Runs on SQLite and,
 * with AGENTPAY_TEST_BACKEND=postgres, on PostgreSQL (the money moves in the gateway's store).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../../packages/sdk/src/buyer/index.js';
import { decodeHeader, encodeHeader, RECEIPT_HEADER, type Receipt } from '../../../packages/sdk/src/protocol.js';
import { CliError } from '../../../src/cli/errors/index.js';
import { parseProxyConfig, routeTable, type RouteTable } from '../../../src/cli/paywall/routes.js';
import { startPaywall, type PaywallOptions, type RunningPaywall } from '../../../src/cli/paywall/server.js';
import { expectLedgerConsistent, fundedAgent, publish, sha256, type AgentWallet } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { until } from '../../helpers/wait.js';
import { deadPort, startUpstream, STREAM_FIRST, STREAM_REST, type Upstream } from './upstream.js';

let t: TestGateway;
let upstream: Upstream;
let proxy: RunningPaywall;
let capA: string; // 100 a call
let capB: string; // 250 a call
const logs: string[] = [];
const started: RunningPaywall[] = [];

function tableOf(routes: Record<string, string>, extra: { capability?: string; passUnknown?: boolean } = {}): RouteTable {
  return routeTable({ config: parseProxyConfig(JSON.stringify({ routes }), 'proxy.json'), configFile: 'proxy.json', ...extra });
}

async function start(o: Partial<PaywallOptions> & { table: RouteTable }): Promise<RunningPaywall> {
  const p = await startPaywall({
    upstream: new URL(upstream.url),
    host: '127.0.0.1',
    port: 0,
    gatewayUrl: t.baseUrl,
    apiKey: t.creds.provider.apiKey,
    ca: t.ca,
    timeoutMs: 30_000,
    configFile: 'proxy.json',
    log: (line) => logs.push(line),
    ...o,
  });
  started.push(p);
  return p;
}

const buyerFor = (a: AgentWallet, maxPriceMinor = '1000') => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor });
const balance = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;
const providerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const seenAt = (path: string) => upstream.seen.filter((s) => new URL(s.url, 'http://x').pathname === path);

/** Fails, naming what it waited for, if `p` does not settle within `ms` (the proxy held back what it should stream). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

beforeAll(async () => {
  t = await startTestGateway();
  capA = await publish(t, '100', 'Forecast through the proxy');
  capB = await publish(t, '250', 'Reports through the proxy');
  upstream = await startUpstream();
  proxy = await start({
    table: tableOf({
      'GET /forecast': capA,
      'POST /echo': capA,
      'GET /boom': capA,
      'GET /missing': capA,
      'GET /stream-paid': capA,
      'POST /upload-paid': capA,
      'GET /slow': capA,
      '/reports/*': capB,
      'GET /health': 'free',
      'GET /stream-free': 'free',
      'POST /upload-free': 'free',
    }),
  });
});
afterAll(async () => {
  for (const p of started) await p.close();
  await upstream?.close();
  await t?.close();
});

describe('agentpay proxy in front of an unmodified API', () => {
  it('answers an unpaid call 402 in every dialect, without reaching the upstream', async () => {
    const before = upstream.seen.length;
    const res = await fetch(`${proxy.url}/forecast?city=Porto`);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string }; challenge: { capabilityId: string; amountMinor: string } };
    expect(body.error.code).toBe('PAYMENT_REQUIRED');
    expect(body.challenge).toMatchObject({ capabilityId: capA, amountMinor: '100' });
    // x402 v2 and the Payment scheme, from the same seller core
    expect(res.headers.get('payment-required')).toBeTruthy();
    expect(res.headers.get('www-authenticate')).toMatch(/^Payment /);
    const x402 = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString('utf8')) as { accepts: Array<{ scheme: string; resource?: string }>; resource?: { url: string } };
    expect(x402.accepts[0]!.scheme).toBe('agentpay');
    expect(upstream.seen.length).toBe(before);
  });

  it('forwards a paid call with method, path, query, headers and body as sent, and returns the upstream answer with the receipt', async () => {
    const a = await fundedAgent(t, '1000');
    const sellerBefore = await providerBalance();
    const res = await buyerFor(a).fetch(`${proxy.url}/forecast?city=Porto&units=metric&units=si`, {
      headers: { 'x-custom': 'abc', authorization: 'Bearer for-the-upstream', cookie: 'session=1', accept: 'application/json' },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ city: 'Porto', sunny: true, query: { city: 'Porto', units: 'si' } });
    // the upstream's own headers come back, repeated ones too
    expect(res.headers.get('x-upstream')).toBe('yes');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.receipt).toMatchObject({ status: 'success', capabilityId: capA, responseHash: sha256(text), amount: { amountMinor: '100', currency: 'USD' } });

    const [paidCall] = seenAt('/forecast').slice(-1);
    expect(paidCall!.method).toBe('GET');
    expect(paidCall!.url).toBe('/forecast?city=Porto&units=metric&units=si');
    expect(paidCall!.headers).toMatchObject({ 'x-custom': 'abc', authorization: 'Bearer for-the-upstream', cookie: 'session=1', accept: 'application/json', host: upstream.host });
    expect(paidCall!.headers['x-payment']).toBeUndefined();
    expect(paidCall!.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(paidCall!.headers['x-forwarded-host']).toBe(new URL(proxy.url).host);
    // only the paid call reached it: the unpaid first try was answered 402 by the proxy
    expect(seenAt('/forecast').filter((s) => s.url.includes('units=metric'))).toHaveLength(1);

    expect(await balance(a.walletId)).toBe('900');
    expect((await providerBalance()) - sellerBefore).toBe(97n);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('forwards a paid POST body byte for byte with its content type, and the upstream status', async () => {
    const a = await fundedAgent(t, '1000');
    const payload = JSON.stringify({ note: 'zürich ☀️', n: [1, 2, 3] });
    const res = await buyerFor(a).fetch(`${proxy.url}/echo?x=1`, { method: 'POST', body: payload, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.status).toBe(201);
    const text = await res.text();
    const echoed = JSON.parse(text) as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(echoed).toMatchObject({ method: 'POST', url: '/echo?x=1', body: payload });
    expect(echoed.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(echoed.headers['content-length']).toBe(String(Buffer.byteLength(payload)));
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256(text) });
    expect(await balance(a.walletId)).toBe('900');
  });

  it('refunds the buyer when the upstream answers 500: its answer goes back with a failed receipt, the money stays', async () => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${proxy.url}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'the database is down' });
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(text) });
    expect(seenAt('/boom')).toHaveLength(1);
    expect(await balance(a.walletId)).toBe('1000');
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('fails a 4xx of the upstream as a client error: refunded, passed back as is', async () => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${proxy.url}/missing`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'no such city' });
    expect(res.receipt?.status).toBe('failed');
    expect(await balance(a.walletId)).toBe('1000');
  });

  it('answers 502 and refunds when the upstream cannot be reached', async () => {
    const down = await start({ upstream: new URL(`http://127.0.0.1:${await deadPort()}`), table: tableOf({ 'GET /forecast': capA }) });
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${down.url}/forecast`);
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(text).not.toContain('127.0.0.1'); // the upstream's address is the seller's business
    expect(res.receipt).toMatchObject({ status: 'failed', responseHash: sha256(text) });
    expect(await balance(a.walletId)).toBe('1000');
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect(logs.some((l) => l.includes('(--upstream) failed: ECONNREFUSED'))).toBe(true);
  });

  it('answers 504 and refunds when the upstream takes longer than the time limit', async () => {
    const slow = await start({ table: tableOf({ 'GET /slow': capA }), timeoutMs: 400 });
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${slow.url}/slow`);
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('HANDLER_TIMEOUT');
    expect(res.receipt?.status).toBe('failed');
    expect(await balance(a.walletId)).toBe('1000');
    // the request to the upstream is given up, not left open
    await until(() => upstream.slowClosed() === 1, 'the proxy to close its request to /slow');
  });

  it('sells a pattern route with its own capability and price', async () => {
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${proxy.url}/reports/2026/q1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ report: '2026/q1' });
    expect(res.receipt).toMatchObject({ status: 'success', capabilityId: capB, amount: { amountMinor: '250' } });
    expect(await balance(a.walletId)).toBe('750');
  });

  it('passes a free route through with no payment and no receipt', async () => {
    const res = await fetch(`${proxy.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    expect(res.headers.get(RECEIPT_HEADER)).toBeNull();
    expect(seenAt('/health').length).toBeGreaterThan(0);
    const head = await fetch(`${proxy.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(seenAt('/health').at(-1)!.method).toBe('HEAD');
    // HEAD on a sold route: nothing to pay for, refused by the seller core
    expect((await fetch(`${proxy.url}/forecast`, { method: 'HEAD' })).status).toBe(405);
  });

  it('answers 404 for a route the config does not list, without reaching the upstream; --pass-unknown forwards it free', async () => {
    const res = await fetch(`${proxy.url}/admin/users`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect(seenAt('/admin/users')).toHaveLength(0);
    // a listed path with an unlisted method is unlisted too
    expect((await fetch(`${proxy.url}/forecast`, { method: 'DELETE' })).status).toBe(404);

    const passing = await start({ table: tableOf({ 'GET /forecast': capA }, { passUnknown: true }) });
    const through = await fetch(`${passing.url}/admin/users`);
    expect(through.status).toBe(200);
    expect(await through.text()).toBe('upstream /admin/users');
    expect(seenAt('/admin/users')).toHaveLength(1);
    expect((await fetch(`${passing.url}/forecast`)).status).toBe(402);
  });

  it('sells every route with --capability alone (no config file)', async () => {
    const all = await start({ table: routeTable({ capability: capB }) });
    expect((await fetch(`${all.url}/anything/at/all`)).status).toBe(402);
    const a = await fundedAgent(t, '1000');
    const res = await buyerFor(a).fetch(`${all.url}/health`);
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success', capabilityId: capB });
  });

  it('streams a free route both ways: the first bytes pass before the other side has sent the rest', async () => {
    // the answer: its first chunk reaches the client while the upstream holds back the rest
    const got: Buffer[] = [];
    const answer = new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${proxy.url}/stream-free`, resolve).on('error', reject));
    const res = await within(answer, 10_000, 'the free stream\'s headers');
    const first = new Promise<void>((resolve) => res.once('data', (c: Buffer) => {
      got.push(c);
      resolve();
    }));
    await within(first, 10_000, 'the first chunk of the free stream');
    expect(Buffer.concat(got).toString()).toBe(STREAM_FIRST);
    const rest = new Promise<void>((resolve) => {
      res.on('data', (c: Buffer) => got.push(c));
      res.on('end', resolve);
    });
    upstream.release();
    await rest;
    expect(Buffer.concat(got).toString()).toBe(STREAM_FIRST + STREAM_REST.join(''));

    // the request body: the upstream has its first chunk while the client has not sent the rest
    const arrived = upstream.firstChunk();
    const req = http.request(`${proxy.url}/upload-free`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' } });
    const done = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode!, body }));
      });
      req.on('error', reject);
    });
    req.write(Buffer.from('first chunk;'));
    expect((await within(arrived, 10_000, 'the first chunk of the upload at the upstream')).toString()).toBe('first chunk;');
    req.end(Buffer.from('second chunk'));
    const up = await done;
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body)).toEqual({ bytes: 24, sha256: createHash('sha256').update('first chunk;second chunk').digest('hex') });
  });

  it('on a paid route streams the request body to the upstream and sends the whole chunked answer with its receipt', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    // a paid answer streamed by the upstream in several chunks: hashed and receipted whole
    const paidStream = buyer.fetch(`${proxy.url}/stream-paid`);
    await until(() => seenAt('/stream-paid').length === 1, 'the paid stream request at the upstream');
    upstream.release();
    const res = await paidStream;
    const text = await res.text();
    expect(text).toBe(STREAM_FIRST + STREAM_REST.join(''));
    expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256(text) });

    // a paid upload, streamed: the proof is made first (402, signed), then the body goes in chunks
    const unpaid = await fetch(`${proxy.url}/upload-paid`, { method: 'POST', body: 'x' });
    expect(unpaid.status).toBe(402);
    const challenge = await buyer.payer.verifiedChallenge(await unpaid.json());
    const proof = await buyer.payer.signProof(challenge!, { maxPriceMinor: '1000' });
    const arrived = upstream.firstChunk();
    const req = http.request(`${proxy.url}/upload-paid`, { method: 'POST', headers: { 'x-payment': encodeHeader(proof), 'content-type': 'application/octet-stream' } });
    const done = new Promise<{ status: number; body: string; receipt: string | undefined }>((resolve, reject) => {
      req.on('response', (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode!, body, receipt: r.headers[RECEIPT_HEADER] as string | undefined }));
      });
      req.on('error', reject);
    });
    const big = Buffer.alloc(256 * 1024, 7);
    req.write(Buffer.from('paid first;'));
    expect((await within(arrived, 10_000, 'the first chunk of the paid upload at the upstream')).toString()).toBe('paid first;');
    req.end(big);
    const up = await done;
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body)).toEqual({ bytes: 11 + big.length, sha256: createHash('sha256').update(Buffer.concat([Buffer.from('paid first;'), big])).digest('hex') });
    const receipt = decodeHeader<Receipt>(up.receipt!);
    expect(receipt).toMatchObject({ status: 'success', responseHash: sha256(up.body) });
    expect(seenAt('/upload-paid').at(-1)!.headers['x-payment']).toBeUndefined();
    expect(await balance(a.walletId)).toBe('800');
  });

  it('answers a retry with the same idempotency key from the first answer: the upstream runs once, the buyer pays once', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    const init = { method: 'POST', body: '{"order":42}', headers: { 'content-type': 'application/json', 'idempotency-key': `order-42-${a.walletId}` } };
    const first = await buyer.fetch(`${proxy.url}/echo`, init);
    const firstText = await first.text();
    expect(first.status).toBe(201);
    const calls = seenAt('/echo').length;
    const again = await buyer.fetch(`${proxy.url}/echo`, init);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstText);
    expect(seenAt('/echo').length).toBe(calls);
    expect(seenAt('/echo').at(-1)!.body.toString()).toBe('{"order":42}');
    expect(await balance(a.walletId)).toBe('900');
    // the body is part of the request's fingerprint: the same key with another body is refused, nothing charged
    const other = await buyer.fetch(`${proxy.url}/echo`, { ...init, body: '{"order":43}' }).catch((e: unknown) => e);
    expect(other).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(seenAt('/echo').length).toBe(calls);
    expect(await balance(a.walletId)).toBe('900');
  });

  it('logs one line per request: what was paid, refunded or answered 402', () => {
    expect(logs.some((l) => /^GET \/forecast 402 payment required \d+ ms$/.test(l))).toBe(true);
    expect(logs.some((l) => /^GET \/forecast 200 paid 100 USD minor units \(receipt rcp_\w+\) \d+ ms$/.test(l))).toBe(true);
    expect(logs.some((l) => /^GET \/boom 500 not charged, refunded \(receipt rcp_\w+, failed\) \d+ ms$/.test(l))).toBe(true);
    expect(logs.some((l) => /^GET \/health 200 free \d+ ms$/.test(l))).toBe(true);
  });
});

describe('agentpay proxy checks its capabilities before it listens', () => {
  it('refuses a capability the gateway does not have, naming where it was configured', async () => {
    const err = await start({ table: tableOf({ 'GET /forecast': 'cap_doesnotexist' }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).code).toBe('CAPABILITY_NOT_FOUND');
    expect((err as CliError).message).toContain('route "GET /forecast" of proxy.json');
  });

  it("refuses another provider's capability, and a key that is not a provider's", async () => {
    const other = await t.newProvider({ name: 'Someone Else' });
    const theirs = (await other.client.capabilities.publish({ name: 'Theirs', description: 'not ours', protocol: 'rest', priceMinor: '5', category: 'weather', endpoint: 'https://127.0.0.1/x' })).capability.id;
    const err = await start({ table: routeTable({ capability: theirs }) }).catch((e: unknown) => e);
    expect((err as CliError).message).toMatch(new RegExp(`capability ${theirs} \\(--capability\\) cannot be sold: .*another provider`));
    const wrongKey = await start({ table: routeTable({ capability: capA }), apiKey: t.creds.workspace.apiKey }).catch((e: unknown) => e);
    expect(wrongKey).toBeInstanceOf(CliError);
    expect((wrongKey as CliError).tryNext).toContain('agentpay dev env --role seller');
  });
});
