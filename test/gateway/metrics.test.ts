/**
 * GET /metrics: Prometheus text format (parsed here line by line against the format's grammar),
 * with the named series after real paid calls, refunds, a breaker pause and a rate-limited
 * request; behind its setting: off (no route), loopback (this machine, not forwarded), or a
 * bearer token. Each gateway has a registry of its own. A ManualClock moves time. Runs on the
 * test backend (AGENTPAY_TEST_BACKEND=postgres: the PostgreSQL store's holds and commit times).
 */
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromLoopback } from '../../src/gateway/routes/metrics.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { recordEvent } from '../../src/domain/platform/events.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { ManualClock, startTestGateway, testBackend, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, hashOf, newBuyer, newSeller, paidCall } from '../payments/helpers.js';
import { startReceiver } from '../webhooks/receiver.js';

const TOKEN = 'metrics-token-0123456789abcdef';

function get(t: TestGateway, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(path, t.baseUrl);
  return new Promise((resolve, reject) => {
    const req = https.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', ca: t.ca, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Sample { name: string; labels: Record<string, string>; value: number }
interface Family { name: string; type: string; help: string; samples: Sample[] }

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'], counter: [''], gauge: [''], untyped: [''] };

function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  // Prometheus reads values with Go's ParseFloat: NaN in any case (prom-client writes "Nan", e.g. an event-loop
  // percentile of the process metrics before it has a sample)
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`not a sample value: ${s}`);
  return Number(s);
}

/** Labels `{a="x",b="y\"z"}` per the text format: escapes \\, \" and \n only. */
function parseLabels(s: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    if (s[i] === '}') return { labels, rest: s.slice(i + 1) };
    const eq = s.indexOf('=', i);
    const name = s.slice(i, eq);
    if (!LABEL.test(name) || s[eq + 1] !== '"') throw new Error(`bad label in: ${line}`);
    let j = eq + 2;
    let v = '';
    for (; s[j] !== '"'; j++) {
      if (j >= s.length) throw new Error(`unterminated label value in: ${line}`);
      if (s[j] === '\\') {
        j++;
        const e = s[j];
        if (e === 'n') v += '\n';
        else if (e === '\\' || e === '"') v += e;
        else throw new Error(`bad escape in: ${line}`);
      } else v += s[j];
    }
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = v;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') throw new Error(`expected , or } in: ${line}`);
  }
}

/** Parses the Prometheus text exposition format 0.0.4, throwing on any line that breaks its grammar. */
function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      const f = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.includes(rest)) throw new Error(`bad type: ${line}`);
        if (f.samples.length) throw new Error(`TYPE after samples: ${line}`);
        f.type = rest;
      } else f.help = rest;
      families.set(name, f);
      current = f;
      continue;
    }
    const nameEnd = line.search(/[{ ]/);
    const name = line.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`bad sample name: ${line}`);
    let rest = line.slice(nameEnd);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`bad sample: ${line}`);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp: ${line}`);
    const value = parseValue(parts[0]!);
    // a sample belongs to the family declared last, under one of its type's names
    if (!current || !SUFFIXES[current.type]!.some((s) => current!.name + s === name)) throw new Error(`sample outside its family: ${line}`);
    current.samples.push({ name, labels, value });
  }
  // histograms: cumulative buckets ending in +Inf, which equals _count
  for (const f of families.values()) {
    if (f.type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of f.samples.filter((x) => x.name.endsWith('_bucket'))) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`bucket without le in ${f.name}`);
      const k = JSON.stringify(rest);
      series.set(k, [...(series.get(k) ?? []), s]);
    }
    for (const [k, buckets] of series) {
      const values = buckets.map((b) => b.value);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(buckets.at(-1)!.labels.le).toBe('+Inf');
      const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === k);
      expect(count?.value).toBe(buckets.at(-1)!.value);
    }
  }
  return families;
}

/** The value of one series; 0 when a labelled counter has not been incremented for these labels (not exported yet). */
/** A wallet's balance and held amount summed from its ledger entries, through the store (either backend). */
async function walletSums(t: TestGateway, walletId: string): Promise<{ balance: bigint; held: bigint }> {
  const entries = await t.gw.store.read((r) => r.ledger.list(walletId));
  return { balance: entries.reduce((s, e) => s + e.amountMinor, 0n), held: entries.reduce((s, e) => s + e.holdMinor, 0n) };
}

function value(families: Map<string, Family>, family: string, sample: string, labels: Record<string, string> = {}): number | undefined {
  const f = families.get(family);
  if (!f) return undefined;
  return f.samples.find((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('the exposition parser of this test', () => {
  it('accepts the format and refuses what breaks its grammar', () => {
    const ok = '# HELP a_total A thing.\n# TYPE a_total counter\na_total{x="q\\"z",y="2"} 3\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1.5\nh_count 2\n';
    const m = parseExposition(ok);
    expect(m.get('a_total')).toMatchObject({ type: 'counter', help: 'A thing.', samples: [{ labels: { x: 'q"z', y: '2' }, value: 3 }] });
    for (const bad of ['a 1', '# TYPE a counter\na{x=1} 1\n', '# TYPE a counter\na one\n', '# TYPE a counter\nb 1\n', '# TYPE a kind\n', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 3\n']) {
      expect(() => parseExposition(bad), bad).toThrow();
    }
  });
});

describe('GET /metrics with a token', () => {
  const clock = new ManualClock(Date.now());
  let t: TestGateway;
  let other: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ clock, config: { metrics: { mode: 'token', token: TOKEN }, rateLimit: { max: 40, windowMs: 60_000, signupMax: 10, signupWindowMs: 60_000 } } });
    other = await startTestGateway({ config: { metrics: { mode: 'loopback' } } });
    // the timers of this gateway would move what the test measures: it runs them itself
    await t.gw.services.sweeper.stop();
    await t.gw.services.rails.jobs.stop();
  });
  afterAll(async () => {
    await t?.close();
    await other?.close();
  });

  it('refuses a request without the token or with a wrong one (401, www-authenticate)', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: TOKEN }] as Record<string, string>[]) {
      const res = await get(t, '/metrics', headers);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.body).not.toContain('agentpay_');
    }
  });

  it('counts the open payment sessions and what they still hold: the cap, less each claim, nothing once closed', async () => {
    const seller = await newSeller(t, '10');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const gauges = async () => {
      const m = parseExposition((await get(t, '/metrics', { authorization: `Bearer ${TOKEN}` })).body);
      expect(m.get('agentpay_sessions_open')?.type).toBe('gauge');
      expect(m.get('agentpay_session_holds_minor')?.type).toBe('gauge');
      return [value(m, 'agentpay_sessions_open', 'agentpay_sessions_open'), value(m, 'agentpay_session_holds_minor', 'agentpay_session_holds_minor', { currency: 'USD' }) ?? 0];
    };
    const before = await gauges();
    const sessionKey = generateEd25519();
    const unsigned = {
      version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: seller.id, capabilityId: seller.capabilityId, capMinor: '600', currency: 'USD',
      expiresAt: new Date(clock.now() + 3_600_000).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `metrics-${Math.random().toString(36).slice(2)}`,
      signedAt: new Date(clock.now()).toISOString(),
    };
    const { session } = await seller.client.sessions.open({ open: { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) }, sellerPublicKey: generateEd25519().publicKeyPem });
    expect(await gauges()).toEqual([before[0]! + 1, before[1]! + 600]);
    const v = { sessionId: session.id, cumulativeMinor: '250', sequence: 25, requestHash: `sha256:${'1'.repeat(64)}` };
    await seller.client.sessions.claim([{ sessionId: session.id, voucher: { ...v, signature: signObject(sessionKey.privateKeyPem, v) } }]);
    expect(await gauges()).toEqual([before[0]! + 1, before[1]! + 350]);
    await seller.client.sessions.close(session.id);
    expect(await gauges()).toEqual(before);
    expect(await walletSums(t, buyer.walletId)).toEqual({ balance: 750n, held: 0n });
  });

  it('exposes the named series in Prometheus text format after real paid calls', async () => {
    const seller = await newSeller(t, '100');
    const buyer = await newBuyer(t, t.workspace, '10000');
    // two complete paid calls
    await paidCall(seller.client, seller.capabilityId, buyer);
    await paidCall(seller.client, seller.capabilityId, buyer);
    // three provider errors in a row pause the seller for this wallet; a fourth authorize is refused
    for (let i = 0; i < 3; i++) {
      const auth = await authorizeCall(seller.client, seller.capabilityId, buyer);
      await seller.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', responseHash: hashOf('boom') });
    }
    await expect(authorizeCall(seller.client, seller.capabilityId, buyer)).rejects.toMatchObject({ code: 'WALLET_PROVIDER_PAUSED' });
    // one authorized and left open: a hold outstanding, then refunded by the sweeper
    const buyer2 = await newBuyer(t, t.workspace, '1000');
    const open = await authorizeCall(seller.client, seller.capabilityId, buyer2);
    expect(await walletSums(t, buyer2.walletId)).toEqual({ balance: 1000n, held: 100n });
    // a rate-limited request: a fresh key spends its 40
    const spender = await t.newProvider();
    let limited = 0;
    for (let i = 0; i < 41; i++) if ((await spender.client.http.raw('GET', '/v1/capabilities')).status === 429) limited++;
    expect(limited).toBe(1);
    // the rail job runs now
    await t.gw.services.rails.jobs.runOnce(() => {});
    // a webhook endpoint that answers 500: one failed delivery attempt, counted through onDeliveryFailed
    const rx = await startReceiver();
    try {
      rx.status = 500;
      const ws = await t.newWorkspace('Hooked Workspace');
      await ws.client.webhooks.create({ url: rx.url });
      await t.gw.store.tx((r) => recordEvent(r, t.gw.services.ctx, ws.id, 'payout.returned', { n: 1 }));
      expect(await t.gw.services.webhookDeliverer.runOnce()).toEqual({ attempted: 1, delivered: 0, failed: 1 });
    } finally {
      await rx.close();
    }

    const res = await get(t, '/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parseExposition(res.body);
    for (const [name, type] of [
      ['agentpay_paid_calls_total', 'counter'], ['agentpay_payment_operations_total', 'counter'], ['agentpay_authorize_duration_seconds', 'histogram'],
      ['agentpay_complete_duration_seconds', 'histogram'], ['agentpay_store_commit_duration_seconds', 'histogram'], ['agentpay_store_sync_duration_seconds', 'histogram'],
      ['agentpay_holds_outstanding', 'gauge'], ['agentpay_holds_outstanding_minor', 'gauge'], ['agentpay_sweeper_refunds_total', 'counter'],
      ['agentpay_breaker_pauses_total', 'counter'], ['agentpay_rate_limited_requests_total', 'counter'], ['agentpay_rail_job_lag_seconds', 'gauge'],
      ['agentpay_webhook_delivery_failures_total', 'counter'], ['agentpay_process_cpu_seconds_total', 'counter'],
    ] as const) {
      expect(m.get(name)?.type, name).toBe(type);
      expect(m.get(name)!.help.length, name).toBeGreaterThan(10);
    }
    expect(value(m, 'agentpay_paid_calls_total', 'agentpay_paid_calls_total', { outcome: 'completed' })).toBe(2);
    expect(value(m, 'agentpay_paid_calls_total', 'agentpay_paid_calls_total', { outcome: 'failed_provider_error' })).toBe(3);
    expect(value(m, 'agentpay_paid_calls_total', 'agentpay_paid_calls_total', { outcome: 'refused' })).toBe(1);
    expect(value(m, 'agentpay_payment_operations_total', 'agentpay_payment_operations_total', { operation: 'authorize', result: 'WALLET_PROVIDER_PAUSED' })).toBe(1);
    expect(value(m, 'agentpay_payment_operations_total', 'agentpay_payment_operations_total', { operation: 'authorize', result: 'ok' })).toBe(6);
    expect(value(m, 'agentpay_authorize_duration_seconds', 'agentpay_authorize_duration_seconds_count', { result: 'ok' })).toBe(6);
    expect(value(m, 'agentpay_authorize_duration_seconds', 'agentpay_authorize_duration_seconds_sum', { result: 'ok' })).toBeGreaterThan(0);
    expect(value(m, 'agentpay_complete_duration_seconds', 'agentpay_complete_duration_seconds_count', { result: 'ok' })).toBe(2);
    expect(value(m, 'agentpay_store_commit_duration_seconds', 'agentpay_store_commit_duration_seconds_count')).toBeGreaterThan(0);
    // SQLite syncs its log after COMMIT; PostgreSQL inside COMMIT (no samples)
    if (testBackend() === 'sqlite') expect(value(m, 'agentpay_store_sync_duration_seconds', 'agentpay_store_sync_duration_seconds_count')).toBeGreaterThan(0);
    else expect(value(m, 'agentpay_store_sync_duration_seconds', 'agentpay_store_sync_duration_seconds_count') ?? 0).toBe(0);
    expect(value(m, 'agentpay_holds_outstanding', 'agentpay_holds_outstanding')).toBe(1);
    expect(value(m, 'agentpay_holds_outstanding_minor', 'agentpay_holds_outstanding_minor', { currency: 'USD' })).toBe(100);
    expect(value(m, 'agentpay_breaker_pauses_total', 'agentpay_breaker_pauses_total')).toBe(1);
    expect(value(m, 'agentpay_rate_limited_requests_total', 'agentpay_rate_limited_requests_total', { limit: 'general' })).toBe(1);
    expect(value(m, 'agentpay_sweeper_refunds_total', 'agentpay_sweeper_refunds_total')).toBe(0);
    expect(value(m, 'agentpay_rail_job_lag_seconds', 'agentpay_rail_job_lag_seconds')).toBe(0);
    expect(value(m, 'agentpay_webhook_delivery_failures_total', 'agentpay_webhook_delivery_failures_total')).toBe(1);

    // the in-flight time passes: the sweeper refunds the open one; the rail job has not run for 16 minutes
    clock.advance(16 * 60 * 1000);
    await t.gw.services.sweeper.sweepOnce();
    expect(await walletSums(t, buyer2.walletId)).toEqual({ balance: 1000n, held: 0n });
    if (testBackend() === 'sqlite') expectLedgerConsistent(t); // reads the SQLite file
    const after = parseExposition((await get(t, '/metrics', { authorization: `Bearer ${TOKEN}` })).body);
    expect(value(after, 'agentpay_sweeper_refunds_total', 'agentpay_sweeper_refunds_total')).toBe(1);
    expect(value(after, 'agentpay_paid_calls_total', 'agentpay_paid_calls_total', { outcome: 'expired' })).toBe(1);
    expect(value(after, 'agentpay_holds_outstanding', 'agentpay_holds_outstanding')).toBe(0);
    expect(value(after, 'agentpay_rail_job_lag_seconds', 'agentpay_rail_job_lag_seconds')).toBe(16 * 60);
    expect(open.transactionId).toMatch(/^txn_/);

    // the other gateway in this process has a registry of its own: none of this is in it
    const mine = parseExposition((await get(other, '/metrics')).body);
    expect(value(mine, 'agentpay_paid_calls_total', 'agentpay_paid_calls_total', { outcome: 'completed' })).toBeUndefined();
    expect(value(mine, 'agentpay_webhook_delivery_failures_total', 'agentpay_webhook_delivery_failures_total')).toBe(0);
  });
});

describe('GET /metrics settings', () => {
  let off: TestGateway;
  let loopback: TestGateway;
  beforeAll(async () => {
    off = await startTestGateway();
    loopback = await startTestGateway({ config: { metrics: { mode: 'loopback' }, trustProxy: true } });
  });
  afterAll(async () => {
    await off?.close();
    await loopback?.close();
  });

  it('off (the default): there is no such route', async () => {
    const res = await get(off, '/metrics');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'NOT_FOUND', message: 'no route GET /metrics' });
  });

  it('loopback: served to this machine, not to a request a proxy forwarded (answered as no route)', async () => {
    const res = await get(loopback, '/metrics');
    expect(res.status).toBe(200);
    expect(parseExposition(res.body).get('agentpay_paid_calls_total')?.type).toBe('counter');
    const forwarded = await get(loopback, '/metrics', { 'x-forwarded-for': '203.0.113.7' });
    expect(forwarded.status).toBe(404);
    expect(JSON.parse(forwarded.body).error).toMatchObject({ code: 'NOT_FOUND', message: 'no route GET /metrics' });
    // the peer address decides, not a header
    const peer = (remoteAddress: string, headers: Record<string, string> = {}) => fromLoopback({ socket: { remoteAddress }, headers } as never);
    expect([peer('127.0.0.1'), peer('::1'), peer('::ffff:127.0.0.1')]).toEqual([true, true, true]);
    expect([peer('10.0.0.5'), peer('::ffff:10.0.0.5'), peer('2001:db8::1'), peer('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' })]).toEqual([false, false, false, false]);
  });

  it('refuses a token mode without a token of at least 16 characters', () => {
    expect(() => resolveConfig({ metrics: { mode: 'token', token: 'short' } })).toThrow('metrics.token must be at least 16 characters');
    expect(() => resolveConfig({ metrics: { mode: 'token' } })).toThrow('metrics.token must be at least 16 characters');
    expect(() => resolveConfig({ metrics: { mode: 'open' as never } })).toThrow('metrics.mode must be off, loopback or token');
  });
});
