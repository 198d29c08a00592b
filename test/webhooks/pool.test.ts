/**
 * Deliveries cannot stall or pile up (docs/api/webhooks.md § Deadlines and caps): an attempt
 * ends by its hard deadline however slowly a receiver drips, the status line decides, a slow
 * receiver holds one worker while other tenants' deliveries keep going out, and replays and
 * pending deliveries are capped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/platform/events.js';
import { EgressPolicy, httpSender, MAX_DELIVERIES_PER_EVENT, MAX_PENDING_PER_ENDPOINT, parseWebhookKey, SecretBox, WebhookDeliverer } from '../../src/domain/platform/webhooks/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startDripReceiver, startReceiver, type Receiver } from './receiver.js';

/** the attempt deadline here; the drips last well past it */
const DEADLINE_MS = 1200;
const clock = new ManualClock(Date.now());
let t: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock, config: { webhooks: { deliveryIntervalMs: 0, timeoutMs: DEADLINE_MS } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const deliverer = () => t.gw.services.webhookDeliverer;
const record = (tenantId: string, n: number) => t.gw.store.tx((r) => recordEvent(r, t.gw.services.ctx, tenantId, 'payout.returned', { n }));

describe('an attempt', () => {
  it('is decided by the status line: a 200 whose body drips is delivered at once', async () => {
    const drip = await startDripReceiver('body', 200, 10_000);
    try {
      const ws = await t.newWorkspace('Dripping Body');
      const { endpoint } = await ws.client.webhooks.create({ url: drip.url });
      await record(ws.id, 1);
      const started = performance.now();
      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 1, failed: 0 });
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
      expect((await ws.client.webhooks.deliveries(endpoint.id)).deliveries[0]).toMatchObject({ state: 'delivered', lastStatus: 200 });
    } finally {
      await drip.close();
    }
  });

  it('ends at its hard deadline when even the status line drips, however long the drip goes on', async () => {
    const drip = await startDripReceiver('status', 150, 10_000);
    try {
      const ws = await t.newWorkspace('Dripping Status');
      const { endpoint } = await ws.client.webhooks.create({ url: drip.url });
      await record(ws.id, 1);
      const started = performance.now();
      expect(await deliverer().runOnce()).toEqual({ attempted: 1, delivered: 0, failed: 1 });
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(took).toBeLessThan(DEADLINE_MS + 1000);
      const [d] = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
      expect(d).toMatchObject({ state: 'pending', lastStatus: null });
      expect(d!.attempts[0]!.error).toBe(`no answer within ${DEADLINE_MS} ms`);
    } finally {
      await drip.close();
    }
  });
});

describe('a receiver that drips for far longer than the deadline', () => {
  it("holds one worker only: another tenant's delivery arrives within a moment of its event", async () => {
    // one byte every 300 ms, for 8 s: no idle timeout would ever fire
    const drip = await startDripReceiver('status', 300, 8000);
    const slow = await t.newWorkspace('Slow Receiver');
    const fast = await t.newWorkspace('Fast Receiver');
    await slow.client.webhooks.create({ url: drip.url });
    const { endpoint } = await fast.client.webhooks.create({ url: rx.url });
    deliverer().start(25);
    try {
      // the slow tenant's events first, so its attempts are in flight when the other's comes
      for (let i = 0; i < 3; i++) await record(slow.id, i);
      await until(() => drip.hits >= 1);
      const before = rx.received.length;
      const event = await record(fast.id, 1);
      const recorded = performance.now();
      await until(() => rx.received.slice(before).some((x) => x.headers['agentpay-event-id'] === event.id));
      // well within the deadline the slow attempt still has to run: nothing waited for it
      expect(performance.now() - recorded).toBeLessThan(DEADLINE_MS);
      expect(deliverer().busy).toBeGreaterThanOrEqual(1);
      // recorded as delivered once the attempt's answer is written (a moment after the receiver had it)
      await until(async () => (await fast.client.webhooks.deliveries(endpoint.id)).deliveries[0]!.state === 'delivered');
      expect((await fast.client.webhooks.deliveries(endpoint.id)).deliveries[0]).toMatchObject({ eventId: event.id, state: 'delivered' });
    } finally {
      await deliverer().stop();
      await drip.close();
    }
  });
});

describe('the workers', () => {
  it('are shared fairly: a tenant whose receivers all hang holds at most half of them, one per endpoint', async () => {
    const drip = await startDripReceiver('status', 300, 8000);
    const greedy = await t.newWorkspace('Many Slow Endpoints');
    for (let i = 0; i < 3; i++) await greedy.client.webhooks.create({ url: `${drip.url}?n=${i}` });
    const fair = await t.newWorkspace('Fair Share');
    const { endpoint } = await fair.client.webhooks.create({ url: rx.url });
    const box = new SecretBox(parseWebhookKey(t.gw.services.config.webhooks!.secretKey!, 'key'));
    const pool = new WebhookDeliverer({ ctx: t.gw.services.ctx, box, send: httpSender({ egress: new EgressPolicy({ allowLoopback: true }) }), timeoutMs: DEADLINE_MS, concurrency: 4 });
    try {
      for (let i = 0; i < 4; i++) await record(greedy.id, i); // three endpoints, each with four events
      await record(fair.id, 1);
      const dispatched = await pool.dispatch();
      // two for the greedy tenant (half of four), one for the other, nothing else due: 3 busy
      expect(dispatched).toBe(3);
      expect(pool.busy).toBe(3);
      // another dispatch adds nothing: the greedy tenant's third endpoint waits while its two attempts hang
      expect(await pool.dispatch()).toBe(0);
      await until(async () => (await fair.client.webhooks.deliveries(endpoint.id)).deliveries[0]!.state === 'delivered');
    } finally {
      await pool.stop();
      await drip.close();
    }
    expect(pool.busy).toBe(0);
  });
});

describe('the caps', () => {
  it(`300 retries of one delivery leave at most ${MAX_DELIVERIES_PER_EVENT} deliveries, the rest refused with 409`, async () => {
    const ws = await t.newWorkspace('Retrier');
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url });
    await record(ws.id, 1);
    const [first] = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
    let refused = 0;
    const ids = [first!.id];
    // as an attacker would: 25 at once, each naming the original or a replay (replays of replays count too)
    for (let round = 0; round < 12; round++) {
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) =>
        ws.client.webhooks.retry(endpoint.id, ids[(round * 25 + i) % ids.length]!).catch((e: unknown) => e)));
      for (const res of answers) {
        if (res instanceof AgentpayError) {
          expect([res.status, res.code]).toEqual([409, 'CONFLICT']);
          expect(res.details.limit).toBe(MAX_DELIVERIES_PER_EVENT);
          refused++;
        } else {
          ids.push((res as { delivery: { id: string } }).delivery.id);
        }
      }
    }
    const rows = await t.gw.store.read((r) => r.webhookDeliveries.listByEndpoint(endpoint.id, { limit: 1000 }));
    expect(rows.length).toBe(MAX_DELIVERIES_PER_EVENT);
    expect(refused).toBe(300 - (MAX_DELIVERIES_PER_EVENT - 1));
    // a delivery of another event is not affected
    await record(ws.id, 2);
    expect(await t.gw.store.read((r) => r.webhookDeliveries.countPending(endpoint.id))).toBe(MAX_DELIVERIES_PER_EVENT + 1);
  });

  it(`an endpoint with ${MAX_PENDING_PER_ENDPOINT} deliveries waiting: the next event's delivery is failed at once and replays are refused`, async () => {
    const ws = await t.newWorkspace('Backlog');
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url });
    // a full queue, put straight into the store (1000 events through the domain take long on PostgreSQL)
    const first = await record(ws.id, 0);
    await t.gw.store.tx(async (r) => {
      const [d] = await r.webhookDeliveries.listByEndpoint(endpoint.id, { limit: 1 });
      for (let i = 1; i < MAX_PENDING_PER_ENDPOINT; i++) await r.webhookDeliveries.insert({ ...d!, id: `${d!.id}_${i}`, seq: -i });
    });
    expect(first.id).toBeDefined();
    const over = await record(ws.id, MAX_PENDING_PER_ENDPOINT);
    const [newest] = (await ws.client.webhooks.deliveries(endpoint.id, { limit: 1 })).deliveries;
    expect(newest).toMatchObject({ eventId: over.id, state: 'failed', nextAttemptAt: null });
    expect(newest!.attempts[0]!.error).toMatch(new RegExp(`^not sent: the endpoint already has ${MAX_PENDING_PER_ENDPOINT} deliveries waiting`));
    expect(await t.gw.store.read((r) => r.webhookDeliveries.countPending(endpoint.id))).toBe(MAX_PENDING_PER_ENDPOINT);
    const e = await ws.client.webhooks.retry(endpoint.id, newest!.id).catch((err: unknown) => err);
    expect([(e as AgentpayError).status, (e as AgentpayError).details.limit]).toEqual([409, MAX_PENDING_PER_ENDPOINT]);
    // the events themselves are all kept
    expect((await ws.client.rail.events({ limit: 1 })).events[0]!.id).toBe(over.id);
  });
});

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
