/**
 * The retention duty (docs/deploy.md § Retention), with a moved clock: finished deliveries and
 * alert mails go after their days, events after theirs unless a pending delivery still needs
 * them, expired idempotency keys at once; the ledger, transactions and everything else stay.
 * It runs by itself as the gateway's `retention` duty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/platform/events.js';
import { DEFAULT_RETENTION } from '../../src/domain/platform/retention.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { buy, newSeller, workspaceWithAgent } from '../policies/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock(Date.now());
let t: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const store = () => t.gw.store;
const ctx = () => t.gw.services.ctx;

describe('the retention duty', () => {
  it('deletes finished deliveries and mails after 30 days, events after 90 unless still needed, expired keys at once, and nothing else', async () => {
    expect(DEFAULT_RETENTION).toMatchObject({ webhookDeliveriesDays: 30, railEventsDays: 90, alertMailsDays: 30 });
    // money that moved: a purchase, with its ledger entries, transaction and receipt
    const seller = await newSeller(t);
    const capabilityId = await seller.publish({ priceMinor: '25' });
    const ws = await workspaceWithAgent(t);
    const transactionId = await buy(seller, capabilityId, ws.buyer);
    const money = () => store().read(async (r) => ({
      ledger: await r.ledger.list(ws.buyer.walletId),
      transaction: await r.transactions.get(transactionId),
      receipts: await r.receipts.byTransaction(transactionId),
      wallets: await r.wallets.listByTenant(ws.id),
      endpoints: await r.webhookEndpoints.listByTenant(ws.id),
    }));

    // a delivered delivery and a sent alert mail of one event
    const { endpoint } = await ws.client.webhooks.create({ url: rx.url });
    const delivered = await store().tx((r) => recordEvent(r, ctx(), ws.id, 'payout.returned', { n: 1 }));
    expect(await t.gw.services.webhookDeliverer.runOnce()).toMatchObject({ delivered: 1 });
    await t.gw.services.alertMailer.runOnce();
    const [d1] = (await ws.client.webhooks.deliveries(endpoint.id)).deliveries;
    expect(d1).toMatchObject({ eventId: delivered.id, state: 'delivered' });
    expect((await store().read((r) => r.alertMails.byEvent(delivered.id)))?.state).not.toBe('pending');

    // a delivery still pending (its receiver is gone): its event must outlive the 90 days
    const gone = await startReceiver();
    await gone.close();
    const other = await t.newWorkspace('Unreachable');
    const { endpoint: dead } = await other.client.webhooks.create({ url: gone.url });
    const needed = await store().tx((r) => recordEvent(r, ctx(), other.id, 'deposit.credited', { n: 2 }));
    await t.gw.services.webhookDeliverer.runOnce();
    const [pending] = (await other.client.webhooks.deliveries(dead.id)).deliveries;
    expect(pending!.state).toBe('pending');

    // idempotency keys: one that runs out tomorrow, one in a year
    const key = (k: string, expiresAt: number) => ({
      walletId: ws.buyer.walletId, capabilityId, key: k, requestHash: 'h', transactionId: `txn_retention_${k}`, state: 'completed' as const,
      responseStatus: null, responseContentType: null, responseBody: null, createdAt: clock.now(), expiresAt,
    });
    await store().tx(async (r) => {
      await r.paymentIdempotency.insert(key('soon', clock.now() + DAY));
      await r.paymentIdempotency.insert(key('later', clock.now() + 365 * DAY));
    });
    const idem = (k: string) => store().read((r) => r.paymentIdempotency.get(ws.buyer.walletId, capabilityId, k));
    const still = () => store().read(async (r) => ({
      delivery: await r.webhookDeliveries.get(d1!.id),
      mail: await r.alertMails.byEvent(delivered.id),
      event: await r.railEvents.get(delivered.id),
      needed: await r.railEvents.get(needed.id),
      pending: await r.webhookDeliveries.get(pending!.id),
    }));
    const retention = t.gw.services.retention;
    const before = await money();
    expect(before.ledger.length).toBeGreaterThan(0);
    expect(before.receipts.length).toBe(1);

    clock.advance(2 * DAY);
    let ran = await retention.runOnce();
    expect(ran.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(await idem('soon')).toBeUndefined();
    expect(await idem('later')).toBeDefined();
    expect(Object.values(await still()).every((x) => x !== undefined)).toBe(true);

    clock.advance(29 * DAY); // 31 days on
    ran = await retention.runOnce();
    expect(ran.webhookDeliveries).toBeGreaterThanOrEqual(1);
    expect(ran.alertMails).toBeGreaterThanOrEqual(1);
    let now = await still();
    expect(now.delivery).toBeUndefined();
    expect(now.mail).toBeUndefined();
    expect(now.event).toBeDefined();
    expect(now.pending).toBeDefined();

    clock.advance(60 * DAY); // 91 days on
    ran = await retention.runOnce();
    expect(ran.railEvents).toBeGreaterThanOrEqual(1);
    now = await still();
    expect(now.event).toBeUndefined();
    expect(now.needed).toBeDefined(); // a pending delivery still has to send it
    expect(now.pending).toBeDefined();
    expect(await idem('later')).toBeDefined();

    // the money and everything else as they were
    expect(await money()).toEqual(before);
    // running again changes nothing (safe to run twice)
    expect(await retention.runOnce()).toEqual({ webhookDeliveries: 0, railEvents: 0, alertMails: 0, idempotencyKeys: 0 });
  });

  it('is configured under retention.*, each checked', () => {
    expect(resolveConfig({ retention: { webhookDeliveriesDays: 7, intervalMs: 0 } }).retention).toEqual({ webhookDeliveriesDays: 7, intervalMs: 0 });
    expect(() => resolveConfig({ retention: { railEventsDays: 0 } })).toThrow(/retention\.railEventsDays must be a whole number of days from 1/);
    expect(() => resolveConfig({ retention: { deliveries: 3 } as never })).toThrow(/retention\.deliveries is not a setting/);
  });

  it('runs by itself as the fleet duty "retention", at retention.intervalMs', async () => {
    const own = new ManualClock(Date.now());
    const g = await startTestGateway({ clock: own, config: { retention: { intervalMs: 20, railEventsDays: 1 } } });
    try {
      const ws = await g.newWorkspace('Forgetful');
      const e = await g.gw.store.tx((r) => recordEvent(r, g.gw.services.ctx, ws.id, 'deposit.credited', { n: 1 }));
      own.advance(2 * DAY);
      const end = Date.now() + 10_000;
      while (await g.gw.store.read((r) => r.railEvents.get(e.id))) {
        if (Date.now() > end) throw new Error('the retention duty did not run');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await g.close();
    }
  });
});
