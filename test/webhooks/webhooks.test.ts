/**
 * Webhooks against a real gateway and a real receiver on 127.0.0.1: an endpoint registered
 * through the API gets a tenant's events as signed POSTs that the SDK's check accepts; a failing
 * endpoint is retried with backoff (the clock is moved, nothing sleeps), in order, for at least
 * 24 hours; deliveries are listed and can be replayed; a tenant sees only its own endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/platform/events.js';
import { EgressPolicy, httpSender, parseWebhookKey, RETRY_WINDOW_MS, retryDelayMs, SecretBox, WebhookDeliverer, type DeliveryFailure } from '../../src/domain/platform/webhooks/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { SIGNATURE_HEADER, signWebhookPayload, verifyWebhookSignature, WebhookSignatureError } from '../../packages/sdk/src/webhooks.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { heldApproval } from '../policies/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

const clock = new ManualClock(Date.now());
let t: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock, config: { webhooks: { deliveryIntervalMs: 0 } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const deliverer = () => t.gw.services.webhookDeliverer;

/** An event of `tenantId` recorded the way the domain records them. */
async function record(tenantId: string, n: number) {
  const ctx = t.gw.services.ctx;
  return t.gw.store.tx((r) => recordEvent(r, ctx, tenantId, 'payout.returned', { n }));
}

async function rejection(p: Promise<unknown>): Promise<WebhookSignatureError> {
  const e = await p.then(() => { throw new Error('the check accepted it'); }, (err: unknown) => err);
  expect(e).toBeInstanceOf(WebhookSignatureError);
  return e as WebhookSignatureError;
}

describe('a registered endpoint', () => {
  it('gets an approval.requested of a policy hold as a signed POST that the SDK check accepts, and nothing else does', async () => {
    const ws = await t.newWorkspace('Hooked Workspace');
    const created = await ws.client.webhooks.create({ url: rx.url, description: 'mine' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.endpoint).toMatchObject({ url: rx.url, description: 'mine', eventTypes: null });
    // the secret is shown once: not in the list or a read
    expect(JSON.stringify(await ws.client.webhooks.list())).not.toContain(created.secret);
    expect(JSON.stringify(await ws.client.webhooks.get(created.endpoint.id))).not.toContain(created.secret);

    const approvalId = await heldApproval(t, ws);
    const before = rx.received.length;
    expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
    const got = rx.received.slice(before);
    expect(got).toHaveLength(1);
    const { rawBody, headers } = got[0]!;
    expect(headers['content-type']).toBe('application/json');
    const header = String(headers[SIGNATURE_HEADER]);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const event = await verifyWebhookSignature(rawBody, header, created.secret, { now: clock.now() });
    const { events } = await ws.client.rail.events();
    expect(event).toEqual(events[0]);
    expect(event.type).toBe('approval.requested');
    expect(event.data.approvalId).toBe(approvalId);
    expect(headers['agentpay-event-id']).toBe(event.id);

    // a wrong secret, a changed body, a stale or future timestamp, a missing header
    const other = (await ws.client.webhooks.create({ url: rx.url })).secret;
    expect((await rejection(verifyWebhookSignature(rawBody, header, other, { now: clock.now() }))).reason).toBe('signature_mismatch');
    expect((await rejection(verifyWebhookSignature(rawBody.replace(approvalId, 'apr_forged'), header, created.secret, { now: clock.now() }))).reason).toBe('signature_mismatch');
    expect((await rejection(verifyWebhookSignature(rawBody, header, created.secret, { now: clock.now() + 301_000 }))).reason).toBe('timestamp_out_of_tolerance');
    expect((await rejection(verifyWebhookSignature(rawBody, header, created.secret, { now: clock.now() - 301_000 }))).reason).toBe('timestamp_out_of_tolerance');
    expect((await rejection(verifyWebhookSignature(rawBody, undefined, created.secret))).reason).toBe('malformed_header');
    // during a rotation: either of two secrets, and a header with two v1 entries
    await expect(verifyWebhookSignature(rawBody, header, [other, created.secret], { now: clock.now() })).resolves.toMatchObject({ id: event.id });
    const two = await signWebhookPayload(rawBody, [other, created.secret], Math.floor(clock.now() / 1000));
    await expect(verifyWebhookSignature(rawBody, two, created.secret, { now: clock.now() })).resolves.toMatchObject({ id: event.id });

    const { deliveries } = await ws.client.webhooks.deliveries(created.endpoint.id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ eventId: event.id, eventType: 'approval.requested', state: 'delivered', lastStatus: 200, nextAttemptAt: null, replayOf: null });
    expect(deliveries[0]!.attempts).toEqual([expect.objectContaining({ status: 200, error: null })]);
  });

  it('gets only the event types it asked for', async () => {
    const ws = await t.newWorkspace('Picky Workspace');
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url, eventTypes: ['payout.returned'] });
    await heldApproval(t, ws); // approval.requested: not wanted
    await record(ws.id, 1);
    const { deliveries } = await ws.client.webhooks.deliveries(endpoint.id);
    expect(deliveries.map((d) => d.eventType)).toEqual(['payout.returned']);
    await deliverer().runOnce();
  });

  it('refuses a URL that is not http(s), or carries a password, naming the field', async () => {
    for (const url of ['ftp://127.0.0.1/hook', 'not a url', 'https://user:pw@example.com/hook']) {
      const e = await t.workspace.webhooks.create({ url }).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(AgentpayError);
      expect((e as AgentpayError).code).toBe('VALIDATION_FAILED');
      expect((e as AgentpayError).details.field).toBe('url');
    }
    const e = await t.workspace.webhooks.create({ url: rx.url, eventTypes: ['no.such'] as never }).catch((err: unknown) => err);
    expect((e as AgentpayError).code).toBe('VALIDATION_FAILED');
  });
});

describe('a failing endpoint', () => {
  it('is retried with growing, jittered delays, and the next event waits for the one before it', async () => {
    const ws = await t.newWorkspace('Flaky Workspace');
    const { endpoint, secret } = await ws.client.webhooks.create({ url: rx.url });
    const failures: DeliveryFailure[] = [];
    deliverer().onDeliveryFailed = (f) => failures.push(f);
    try {
      const e1 = await record(ws.id, 1);
      const e2 = await record(ws.id, 2);
      rx.status = 500;
      const before = rx.received.length;

      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 0, failed: 1 });
      // not due again until the backoff has passed, and e2 is held behind e1
      expect((await deliverer().runOnce()).attempted).toBe(0);
      let [d2, d1] = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
      expect(d1).toMatchObject({ eventId: e1.id, state: 'pending', lastStatus: 500 });
      expect(d1!.attempts[0]!.error).toBe('the endpoint answered 500');
      const wait = Date.parse(d1!.nextAttemptAt!) - clock.now();
      expect(wait).toBeGreaterThanOrEqual(15_000);
      expect(wait).toBeLessThanOrEqual(30_000);
      expect(d2).toMatchObject({ eventId: e2.id, state: 'pending', attempts: [] });
      expect(failures).toEqual([expect.objectContaining({ endpointId: endpoint.id, deliveryId: d1!.id, attempt: 1, status: 500, gaveUp: false, tenantId: ws.id })]);

      clock.advance(wait);
      rx.status = 200;
      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
      [d2, d1] = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
      expect([d1!.state, d2!.state]).toEqual(['delivered', 'delivered']);
      expect(d1!.attempts.map((a) => a.status)).toEqual([500, 200]);

      const ids = await Promise.all(rx.received.slice(before).map(async (r) => (await verifyWebhookSignature(r.rawBody, String(r.headers[SIGNATURE_HEADER]), secret, { now: clock.now() })).id));
      expect(ids).toEqual([e1.id, e1.id, e2.id]);
    } finally {
      deliverer().onDeliveryFailed = undefined;
      rx.status = 200;
    }
  });

  it('is tried for at least 24 hours, then given up, and the next event goes out', async () => {
    const ws = await t.newWorkspace('Dead Workspace');
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url });
    const failures: DeliveryFailure[] = [];
    deliverer().onDeliveryFailed = (f) => failures.push(f);
    try {
      const e1 = await record(ws.id, 1);
      const start = clock.now();
      rx.status = 503;
      const delays: number[] = [];
      for (let i = 0; i < 100; i++) {
        await deliverer().runOnce();
        const d = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries[0]!;
        if (d.state !== 'pending') break;
        const wait = Date.parse(d.nextAttemptAt!) - clock.now();
        delays.push(wait);
        clock.advance(wait);
      }
      const d1 = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries[0]!;
      expect(d1.state).toBe('failed');
      expect(d1.eventId).toBe(e1.id);
      expect(Date.parse(d1.attempts.at(-1)!.at) - start).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
      // each delay within its jitter band: [half, whole] of 30 s doubled per attempt, at most an hour
      delays.forEach((ms, i) => {
        const base = Math.min(30_000 * 2 ** i, 3_600_000);
        expect(ms, `delay ${i + 1}`).toBeGreaterThanOrEqual(base / 2);
        expect(ms, `delay ${i + 1}`).toBeLessThanOrEqual(base);
      });
      expect(failures.at(-1)).toMatchObject({ gaveUp: true, attempt: d1.attempts.length });
      expect(failures.filter((f) => f.gaveUp)).toHaveLength(1);

      // given up: the endpoint's next event is no longer held behind it
      rx.status = 200;
      const e2 = await record(ws.id, 2);
      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
      const latest = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries[0]!;
      expect(latest).toMatchObject({ eventId: e2.id, state: 'delivered' });
    } finally {
      deliverer().onDeliveryFailed = undefined;
      rx.status = 200;
    }
  });

  it('retryDelayMs doubles from 30 s to an hour, jittered between half and all of it', () => {
    expect([1, 2, 3, 8, 9, 40].map((n) => retryDelayMs(n, () => 1))).toEqual([30_000, 60_000, 120_000, 3_600_000, 3_600_000, 3_600_000]);
    expect([1, 2, 8].map((n) => retryDelayMs(n, () => 0))).toEqual([15_000, 30_000, 1_800_000]);
  });
});

describe('two deliverers at once (two gateways on one database)', () => {
  it('send each delivery once and never one of an endpoint before the one before it', async () => {
    const ws = await t.newWorkspace('Twice');
    const { endpoint, secret } = await ws.client.webhooks.create({ url: rx.url });
    const events = [];
    for (let i = 1; i <= 4; i++) events.push(await record(ws.id, i));
    const box = new SecretBox(parseWebhookKey(t.gw.services.config.webhooks!.secretKey!, 'key'));
    // a sandbox gateway's policy: the receiver is on loopback
    const other = new WebhookDeliverer({ ctx: t.gw.services.ctx, box, send: httpSender({ egress: new EgressPolicy({ allowLoopback: true }) }) });
    const before = rx.received.length;
    for (let round = 0; round < 6; round++) await Promise.all([deliverer().runOnce(), other.runOnce()]);
    const got = rx.received.slice(before).filter((x) => x.headers['agentpay-delivery-id']);
    const ids = await Promise.all(got.map(async (r) => (await verifyWebhookSignature(r.rawBody, String(r.headers[SIGNATURE_HEADER]), secret, { now: clock.now() })).id));
    expect(ids).toEqual(events.map((e) => e.id));
    expect((await ws.client.webhooks.deliveries(endpoint.id)).deliveries.map((d) => d.state)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });
});

describe('a replay', () => {
  it('sends a delivered event again as a new delivery, listed beside the first', async () => {
    const ws = await t.newWorkspace('Replay Workspace');
    const { endpoint, secret } = await ws.client.webhooks.create({ url: rx.url });
    const e = await record(ws.id, 1);
    await deliverer().runOnce();
    const first = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries[0]!;
    expect(first.state).toBe('delivered');

    const res = await ws.client.http.raw<{ delivery: { id: string; replayOf: string; state: string } }>('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${first.id}/retry`);
    expect(res.status).toBe(202);
    expect(res.body.delivery).toMatchObject({ replayOf: first.id, state: 'pending' });
    const before = rx.received.length;
    expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
    const got = rx.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['agentpay-delivery-id']).toBe(res.body.delivery.id);
    expect((await verifyWebhookSignature(got[0]!.rawBody, String(got[0]!.headers[SIGNATURE_HEADER]), secret, { now: clock.now() })).id).toBe(e.id);

    const { deliveries } = await ws.client.webhooks.deliveries(endpoint.id);
    expect(deliveries.map((d) => [d.id, d.state])).toEqual([[res.body.delivery.id, 'delivered'], [first.id, 'delivered']]);
    expect((await ws.client.webhooks.delivery(endpoint.id, first.id)).delivery.id).toBe(first.id);
    // pages
    const page = await ws.client.webhooks.deliveries(endpoint.id, { limit: 1 });
    expect(page.deliveries.map((d) => d.id)).toEqual([res.body.delivery.id]);
    expect((await ws.client.webhooks.deliveries(endpoint.id, { limit: 1, after: page.nextCursor! })).deliveries.map((d) => d.id)).toEqual([first.id]);
  });
});

describe('tenancy', () => {
  it("another tenant gets 404 for an endpoint, its deliveries and replays, and sees none in its list", async () => {
    const a = await t.newWorkspace('Owner');
    const b = await t.newProvider({ name: 'Stranger' });
    const { endpoint } = await a.client.webhooks.create({ url: rx.url });
    await record(a.id, 1);
    const [d] = (await a.client.webhooks.deliveries(endpoint.id)).deliveries;
    for (const call of [
      () => b.client.webhooks.get(endpoint.id),
      () => b.client.webhooks.deliveries(endpoint.id),
      () => b.client.webhooks.delivery(endpoint.id, d!.id),
      () => b.client.webhooks.retry(endpoint.id, d!.id),
      () => b.client.webhooks.delete(endpoint.id),
    ]) {
      const e = await call().catch((err: unknown) => err);
      expect((e as AgentpayError).status).toBe(404);
    }
    expect((await b.client.webhooks.list()).endpoints).toEqual([]);
    // b's own events never go to a's endpoint
    await record(b.id, 2);
    expect((await a.client.webhooks.deliveries(endpoint.id)).deliveries).toHaveLength(1);
    await deliverer().runOnce();
  });

  it('delete removes the endpoint and what it still had to send', async () => {
    const ws = await t.newWorkspace('Leaving');
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url });
    await record(ws.id, 1);
    expect(await ws.client.webhooks.delete(endpoint.id)).toMatchObject({ deleted: true, endpoint: { id: endpoint.id } });
    expect((await ws.client.webhooks.get(endpoint.id).catch((e: unknown) => e) as AgentpayError).status).toBe(404);
    const before = rx.received.length;
    await deliverer().runOnce();
    expect(rx.received.length).toBe(before);
  });
});

describe('a secret', () => {
  it('rotated: deliveries carry one signature per secret until the old one expires, then only the new one', async () => {
    const ws = await t.newWorkspace('Rotating');
    const { endpoint, secret: old } = await ws.client.webhooks.create({ url: rx.url });
    const rotated = await ws.client.webhooks.rotateSecret(endpoint.id, { keepPreviousForSeconds: 3600 });
    expect(rotated.secret).not.toBe(old);
    expect(Date.parse(rotated.endpoint.previousSecretExpiresAt!)).toBe(clock.now() + 3_600_000);

    const sent = async () => {
      const e = await record(ws.id, 1);
      const before = rx.received.length;
      await deliverer().runOnce();
      const got = rx.received.slice(before).find((x) => x.headers['agentpay-event-id'] === e.id)!;
      return { raw: got.rawBody, header: String(got.headers[SIGNATURE_HEADER]) };
    };
    const during = await sent();
    expect(during.header.match(/v1=/g)).toHaveLength(2);
    for (const s of [old, rotated.secret]) await expect(verifyWebhookSignature(during.raw, during.header, s, { now: clock.now() })).resolves.toBeDefined();

    clock.advance(3_600_000);
    expect((await ws.client.webhooks.get(endpoint.id)).endpoint.previousSecretExpiresAt).toBeNull();
    const after = await sent();
    expect(after.header.match(/v1=/g)).toHaveLength(1);
    await expect(verifyWebhookSignature(after.raw, after.header, rotated.secret, { now: clock.now() })).resolves.toBeDefined();
    expect((await rejection(verifyWebhookSignature(after.raw, after.header, old, { now: clock.now() }))).reason).toBe('signature_mismatch');

    const e = await ws.client.webhooks.rotateSecret(endpoint.id, { keepPreviousForSeconds: 8 * 86_400 }).catch((err: unknown) => err);
    expect((e as AgentpayError).code).toBe('VALIDATION_FAILED');
  });

  it('is stored encrypted (never in clear in the database), under a key kept 0600 in the data directory, and still signs after a restart', async () => {
    const { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-hooks-'));
    const own = new ManualClock(Date.now());
    let g = await startTestGateway({ dataDir, clock: own, backend: 'sqlite' });
    let secret: string;
    let endpointId: string;
    try {
      const ws = await g.newWorkspace('Restarting');
      ({ endpoint: { id: endpointId }, secret } = await ws.client.webhooks.create({ url: rx.url }));
      expect(statSync(join(dataDir, 'webhooks', 'secret-box.key')).mode & 0o777).toBe(0o600);
      await g.gw.close();
      const files = readdirSync(dataDir).filter((f) => f.endsWith('.db') || f.endsWith('-wal') || f.endsWith('.sqlite'));
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) expect(readFileSync(join(dataDir, f)).includes(Buffer.from(secret.slice('whsec_'.length))), f).toBe(false);

      g = await startTestGateway({ dataDir, clock: own, backend: 'sqlite' });
      const ctx = g.gw.services.ctx;
      const tenantId = (await g.gw.store.read((r) => r.webhookEndpoints.get(endpointId)))!.tenantId;
      const e = await g.gw.store.tx((r) => recordEvent(r, ctx, tenantId, 'payout.returned', { restart: true }));
      const before = rx.received.length;
      expect(await g.gw.services.webhookDeliverer.runOnce()).toMatchObject({ delivered: 1 });
      const got = rx.received.slice(before)[0]!;
      expect((await verifyWebhookSignature(got.rawBody, String(got.headers[SIGNATURE_HEADER]), secret, { now: own.now() })).id).toBe(e.id);
    } finally {
      await g.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
