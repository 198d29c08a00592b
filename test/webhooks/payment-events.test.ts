/**
 * Events for every sale (docs/api/webhooks.md § Payment events), through a real gateway and a real
 * receiver on 127.0.0.1: a paid call is one payment.succeeded delivered, signed, to the seller's
 * endpoint and one to the buyer workspace's, with the receipt and the money's facts; a failed call is
 * payment.failed, an expired one payment.refunded; a completion whose database transaction dies
 * leaves neither event nor movement; `agentpay trigger` makes the payment events happen (payment.refunded by
 * the sandbox control that expires a call now, POST /v1/sandbox/transactions/:id/expire).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import { PaymentEventData } from '../../packages/sdk/src/contract/rails.js';
import { EVENT_TYPES, recordEvent } from '../../src/domain/platform/events.js';
import { NOT_YET, TRIGGERS, trigger } from '../../src/cli/webhooks.js';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, hashOf, newBuyer, newSeller, paidCall, type Buyer } from '../payments/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';
import { call } from '../helpers/matrix.js';
import { expectLedgerConsistent } from '../e2e/helpers.js';

const MINUTE = 60_000;
const clock = new ManualClock(Date.now());
let t: TestGateway;
let sellerRx: Receiver;
let buyerRx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock, config: { webhooks: { deliveryIntervalMs: 0 } } });
  sellerRx = await startReceiver('/seller');
  buyerRx = await startReceiver('/buyer');
});
afterAll(async () => {
  await sellerRx?.close();
  await buyerRx?.close();
  await t?.close();
});

interface Hooked {
  seller: Awaited<ReturnType<typeof newSeller>>;
  ws: { id: string; client: AgentpayClient };
  buyer: Buyer;
  sellerSecret: string;
  buyerSecret: string;
}

/** A fresh seller and buyer workspace, each with an endpoint on its own receiver. */
async function hooked(price = '100'): Promise<Hooked> {
  const seller = await newSeller(t, price);
  const ws = await t.newWorkspace(`Buyer ${Math.random().toString(36).slice(2, 8)}`);
  const buyer = await newBuyer(t, ws.client, '1000');
  const sellerSecret = (await seller.client.webhooks.create({ url: sellerRx.url })).secret;
  const buyerSecret = (await ws.client.webhooks.create({ url: buyerRx.url, eventTypes: ['payment.succeeded', 'payment.failed', 'payment.refunded'] })).secret;
  return { seller, ws, buyer, sellerSecret, buyerSecret };
}

/** Runs the deliverer; the events each receiver got since `marks`, checked against the endpoint's secret. */
async function delivered(h: Hooked, marks: [number, number]) {
  await t.gw.services.webhookDeliverer.runOnce();
  const check = (rx: Receiver, from: number, secret: string) => Promise.all(rx.received.slice(from).map((x) =>
    verifyWebhookSignature(x.rawBody, String(x.headers['agentpay-signature']), secret, { now: clock.now() })));
  return { seller: await check(sellerRx, marks[0], h.sellerSecret), buyer: await check(buyerRx, marks[1], h.buyerSecret) };
}

/** the contract's PaymentEventData (a JSON schema) accepts it */
const contractAccepts = (data: unknown): boolean => new Ajv.default({ strict: false }).validate(PaymentEventData, data) as boolean;

const marks = (): [number, number] => [sellerRx.received.length, buyerRx.received.length];

describe('payment events', () => {
  it('a paid call: exactly one payment.succeeded for the seller and one for the buyer workspace, with the receipt and the amounts', async () => {
    const h = await hooked('100');
    const m = marks();
    const receipt = await paidCall(h.seller.client, h.seller.capabilityId, h.buyer);
    const got = await delivered(h, m);
    expect(got.seller.map((e) => e.type)).toEqual(['payment.succeeded']);
    expect(got.buyer.map((e) => e.type)).toEqual(['payment.succeeded']);
    const data = got.seller[0]!.data;
    expect(data).toEqual({
      transactionId: receipt.transactionId,
      receiptId: receipt.id,
      capabilityId: h.seller.capabilityId,
      providerId: h.seller.id,
      workspaceId: h.ws.id,
      walletId: h.buyer.walletId,
      amountMinor: '100',
      currency: 'USD',
      feeMinor: '3',
      saleMinor: '97',
      responseHash: hashOf('{"ok":true}'),
      receipt: JSON.parse(JSON.stringify(receipt)),
    });
    expect(got.buyer[0]!.data).toEqual(data);
    expect(contractAccepts(data), 'the contract describes it').toBe(true);
    // the events the API lists are the ones delivered
    expect((await h.seller.client.rail.events({ type: 'payment.succeeded' })).events.map((e) => e.id)).toEqual([got.seller[0]!.id]);
    expect((await h.ws.client.rail.events({ type: 'payment.succeeded' })).events.map((e) => e.id)).toEqual([got.buyer[0]!.id]);
    // a repeated complete is the same receipt and no second event
    await h.seller.client.payments.complete({ transactionId: receipt.transactionId, responseHash: hashOf('{"ok":true}') });
    expect((await delivered(h, marks())).seller).toEqual([]);
  });

  it('a failed call: payment.failed with the failed receipt, the refund and the reason', async () => {
    const h = await hooked('100');
    const m = marks();
    const auth = await authorizeCall(h.seller.client, h.seller.capabilityId, h.buyer);
    const { receipt } = await h.seller.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', statusCode: 502 });
    const got = await delivered(h, m);
    expect(got.seller.map((e) => e.type)).toEqual(['payment.failed']);
    expect(got.buyer.map((e) => e.type)).toEqual(['payment.failed']);
    expect(got.seller[0]!.data).toMatchObject({
      transactionId: auth.transactionId, receiptId: receipt.id, providerId: h.seller.id, workspaceId: h.ws.id, walletId: h.buyer.walletId,
      amountMinor: '100', refundedMinor: '100', reason: 'provider_error', statusCode: 502, receipt: { id: receipt.id, status: 'failed' },
    });
    expect(contractAccepts(got.seller[0]!.data)).toBe(true);
  });

  it('an expired call: payment.refunded when the sweeper refunds the hold', async () => {
    const h = await hooked('100');
    const m = marks();
    const auth = await authorizeCall(h.seller.client, h.seller.capabilityId, h.buyer);
    clock.advance(15 * MINUTE);
    await t.gw.services.sweeper.sweepOnce();
    const got = await delivered(h, m);
    expect(got.seller.map((e) => e.type)).toEqual(['payment.refunded']);
    expect(got.buyer.map((e) => e.type)).toEqual(['payment.refunded']);
    expect(got.seller[0]!.data).toMatchObject({ transactionId: auth.transactionId, reason: 'expired', refundedMinor: '100', receipt: { status: 'failed' } });
  });

  it('a completion whose database transaction dies at the event leaves neither the event nor any movement', async () => {
    const h = await hooked('100');
    const auth = await authorizeCall(h.seller.client, h.seller.capabilityId, h.buyer);
    const before = await h.ws.client.wallets.balance(h.buyer.walletId);
    expect(before).toMatchObject({ balanceMinor: '1000', availableMinor: '900' });
    // an event id already stored (the buyer's endpoint takes payment events only): the event's insert
    // then fails in the database (a unique violation), and its transaction with it
    const ctx = t.gw.services.ctx;
    const existing = (await t.gw.store.tx((r) => recordEvent(r, ctx, h.ws.id, 'payout.returned', { n: 1 }))).id;
    const proto = await t.gw.store.read(async (r) => Object.getPrototypeOf(r.railEvents) as { insertQueued: (e: { id: string }, q: unknown) => Promise<void> });
    const original = proto.insertQueued;
    proto.insertQueued = function (this: unknown, e: { id: string }, q: unknown) { return original.call(this, { ...e, id: existing }, q); };
    const m = marks();
    try {
      await expect(h.seller.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') })).rejects.toThrow();
    } finally {
      proto.insertQueued = original;
    }
    const got = await delivered(h, m);
    expect(got.seller).toEqual([]);
    expect(got.buyer).toEqual([]);
    expect((await h.seller.client.rail.events({ type: 'payment.succeeded' })).events).toEqual([]);
    // nothing moved: the buyer still holds the price, no sale reached the seller, no receipt
    expect(await h.ws.client.wallets.balance(h.buyer.walletId)).toEqual(before);
    expect((await h.seller.client.wallets.balance(h.seller.walletId)).balanceMinor).toBe('0');
    expect((await h.seller.client.receipts.list()).receipts).toEqual([]);
    // and the call can still complete, once, with its one event
    await h.seller.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') });
    const again = await delivered(h, marks());
    expect(again.seller.map((e) => e.type)).toEqual(['payment.succeeded']);
    expect((await h.seller.client.wallets.balance(h.seller.walletId)).balanceMinor).toBe('97');
  });
});

describe('the OpenAPI document', () => {
  it('names every event type in its webhooks section, the payment events with their data', async () => {
    const res = await call(t, 'GET', '/openapi.json');
    type Schema = { $ref?: string; properties?: Record<string, Schema>; required?: string[] };
    const doc = res.body as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }>; components: { schemas: Record<string, Schema> } };
    // the contract's shapes are named in components.schemas and referred to (src/gateway/openapi-components.ts)
    const deref = (x: Schema): Schema => (x.$ref ? deref(doc.components.schemas[x.$ref.replace('#/components/schemas/', '')]!) : x);
    const hooks = doc.webhooks;
    expect(Object.keys(hooks).sort()).toEqual([...EVENT_TYPES].sort());
    const data = deref(deref(hooks['payment.succeeded']!.post.requestBody.content['application/json']!.schema).properties!.data!);
    expect(data.required).toEqual(expect.arrayContaining(['transactionId', 'receiptId', 'amountMinor', 'providerId', 'workspaceId', 'walletId', 'receipt']));
    // the x402 settlement alert's data is the contract's too
    const x402 = deref(deref(hooks['x402.settlement_failed']!.post.requestBody.content['application/json']!.schema).properties!.data!);
    expect(x402.required).toEqual(expect.arrayContaining(['authorizationId', 'stage', 'providerId', 'payer', 'value', 'amountMinor', 'attempts', 'error', 'txHash', 'retryUntil']));
  });
});

describe('agentpay trigger', () => {
  it('makes payment.succeeded, payment.failed and payment.refunded happen (the last by the sandbox expiring the call now); every event type is made', async () => {
    const seller = await t.newProvider();
    const ws = await t.newWorkspace('Trigger Workspace');
    for (const type of ['payment.succeeded', 'payment.failed', 'payment.refunded'] as const) {
      const res = await trigger(ws.client, type, { amountMinor: '100', seller: seller.client });
      expect(res.event?.type).toBe(type);
      expect((await seller.client.rail.events({ type })).events).toHaveLength(1);
      expect(contractAccepts(res.event!.data)).toBe(true);
    }
    const refunded = (await ws.client.rail.events({ type: 'payment.refunded' })).events[0]!;
    expect(refunded.data).toMatchObject({ reason: 'expired', refundedMinor: '100', receipt: { status: 'failed' } });
    // the buyer's wallet got its 100 back: funded 300, nothing spent
    expect(await ws.client.wallets.balance(String(refunded.data.walletId))).toMatchObject({ balanceMinor: '300', availableMinor: '300' });
    for (const type of EVENT_TYPES) expect(type in TRIGGERS || type === 'x402.settlement_failed', type).toBe(true);
    expect(Object.keys(NOT_YET)).toEqual(['x402.settlement_failed']);
  });

  it('the sandbox expires only the seller\'s own authorized call: another seller 404, a resolved call 409, nothing moved', async () => {
    const h = await hooked('100');
    const other = await newSeller(t, '100');
    const auth = await authorizeCall(h.seller.client, h.seller.capabilityId, h.buyer);
    await expect(other.client.sandbox.expireTransaction(auth.transactionId)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await h.seller.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') });
    await expect(h.seller.client.sandbox.expireTransaction(auth.transactionId)).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    expect((await h.seller.client.wallets.balance(h.seller.walletId)).balanceMinor).toBe('97');
    expect((await h.ws.client.wallets.balance(h.buyer.walletId)).balanceMinor).toBe('900');
    await expectLedgerConsistent(h.ws.client, h.buyer.walletId);
  });
});
