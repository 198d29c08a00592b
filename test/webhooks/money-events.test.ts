/**
 * Events for the money that enters and leaves (docs/api/rails.md § Events): a top-up confirmed or
 * declined by the processor is `topup.confirmed` / `topup.declined`; a payout paid, refused or sent
 * back by its rail (or resolved by the operator) is `payout.confirmed` / `payout.failed` /
 * `payout.returned`. Each is delivered, signed, to the tenant's endpoint, once, with the data the
 * contract describes (EVENT_DATA_SCHEMAS), and the ledger is checked after every movement. Then
 * `agentpay trigger` makes every event type happen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES, type EventType } from '../../packages/sdk/src/contract/webhooks.js';
import { NOT_YET, TRIGGERS, trigger } from '../../src/cli/webhooks.js';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent } from '../e2e/helpers.js';
import { expectConserved } from '../rails/helpers.js';
import { call } from '../helpers/matrix.js';
import { startReceiver, type Receiver } from './receiver.js';

const clock = new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
let t: TestGateway;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestGateway({ clock, config: { rails: { pollIntervalMs: 0 }, webhooks: { deliveryIntervalMs: 0 } } });
  rx = await startReceiver('/money');
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const ajv = new Ajv.default({ strict: false });
/** the contract's shape of the type's data (a JSON schema) accepts it */
const contractAccepts = (type: EventType, data: unknown): boolean => ajv.validate(EVENT_DATA_SCHEMAS[type] as TSchema, data) as boolean;

/** An endpoint on the receiver for the client's tenant; `delivered()` runs the deliverer and answers what arrived since the last call, checked against its secret. */
async function hooked(client: AgentpayClient) {
  const { secret } = await client.webhooks.create({ url: rx.url });
  let mark = rx.received.length;
  return async () => {
    // each run sends an endpoint its oldest pending delivery: run until nothing more arrives
    for (let seen = -1; seen !== rx.received.length;) {
      seen = rx.received.length;
      await t.gw.services.webhookDeliverer.runOnce();
    }
    const got = await Promise.all(rx.received.slice(mark).map((x) => verifyWebhookSignature(x.rawBody, String(x.headers['agentpay-signature']), secret, { now: clock.now() })));
    mark = rx.received.length;
    return got;
  };
}

const balance = async (client: AgentpayClient, walletId: string) => (await client.wallets.balance(walletId)).balanceMinor;

describe('top-up events', () => {
  it('topup.confirmed with the credit, in the transaction of the topup entry; topup.declined crediting nothing; a duplicate confirmation adds nothing', async () => {
    const ws = await t.newWorkspace('Top-up Workspace');
    const delivered = await hooked(ws.client);
    const wallet = await ws.client.wallets.create({ ownerType: 'workspace', ownerId: 'treasury' });

    const intent = await ws.client.rail.topUp(wallet.id, { amountMinor: '2500' });
    expect(await delivered()).toEqual([]); // an intent moves no money and says nothing
    const { webhook } = await ws.client.sandbox.confirmTopUp(intent.transactionId);
    const [confirmed, ...more] = await delivered();
    expect(more).toEqual([]);
    expect(confirmed).toMatchObject({ type: 'topup.confirmed' });
    expect(confirmed!.data).toEqual({
      transactionId: intent.transactionId, walletId: wallet.id, status: 'confirmed', amountMinor: '2500', currency: 'USD', creditedMinor: '2500',
      externalRef: intent.externalRef, treasuryProviderId: 'sandbox-processor', reason: null,
    });
    expect(contractAccepts('topup.confirmed', confirmed!.data)).toBe(true);
    expect(await balance(ws.client, wallet.id)).toBe('2500');
    expect((await ws.client.wallets.ledger(wallet.id)).map((e) => [e.type, e.amountMinor])).toEqual([['topup', '2500']]);
    await expectLedgerConsistent(ws.client, wallet.id);
    expectConserved(t);

    // the processor's webhook again: 409 DUPLICATE_EXTERNAL_REF, no second credit, no second event
    const f = await t.client().http.fetcher();
    const again = await f(`${t.baseUrl}/v1/rail/webhooks/sandbox-processor`, { method: 'POST', headers: { 'content-type': 'application/json', ...webhook.headers }, body: webhook.body });
    expect(again.status).toBe(409);
    expect(await delivered()).toEqual([]);
    expect(await balance(ws.client, wallet.id)).toBe('2500');

    const declinedIntent = await ws.client.rail.topUp(wallet.id, { amountMinor: '700' });
    await ws.client.sandbox.declineTopUp(declinedIntent.transactionId, 'card_declined');
    const [declined] = await delivered();
    expect(declined!.type).toBe('topup.declined');
    expect(declined!.data).toEqual({
      transactionId: declinedIntent.transactionId, walletId: wallet.id, status: 'declined', amountMinor: '700', currency: 'USD', creditedMinor: '0',
      externalRef: declinedIntent.externalRef, treasuryProviderId: 'sandbox-processor', reason: 'card_declined',
    });
    expect(contractAccepts('topup.declined', declined!.data)).toBe(true);
    expect(await balance(ws.client, wallet.id)).toBe('2500');
    await expectLedgerConsistent(ws.client, wallet.id);
    expectConserved(t);
    // what the endpoint got is what GET /v1/events lists
    expect((await ws.client.rail.events({})).events.map((e) => e.id).sort()).toEqual([confirmed!.id, declined!.id].sort());
  });
});

describe('payout events', () => {
  it('payout.confirmed, payout.returned and payout.failed, each with the payout and its money, once', async () => {
    const s = await t.newProvider({ name: 'Payout Events' });
    const delivered = await hooked(s.client);
    await s.client.wallets.fund(s.walletId, '10000');
    await s.client.payouts.setDestination(s.id, { destination: 'ext_events_bank' });
    const facts = { walletId: s.walletId, currency: 'USD', rail: 'ach', asset: 'USD', destination: 'ext_events_bank' };

    // paid by the bank
    const paid = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'ach' });
    expect(await delivered()).toEqual([]); // submitted: the provider's own request said so
    await s.client.sandbox.confirmPayout(paid.id);
    const [confirmed, ...more] = await delivered();
    expect(more).toEqual([]);
    expect(confirmed!.type).toBe('payout.confirmed');
    expect(confirmed!.data).toEqual({ ...facts, payoutId: paid.id, status: 'confirmed', amountMinor: '1000', railAmountMinor: '1000', externalRef: expect.any(String), reason: null });
    expect(contractAccepts('payout.confirmed', confirmed!.data)).toBe(true);
    expect(await balance(s.client, s.walletId)).toBe('9000');
    // the rail job following it again announces nothing more
    await t.gw.services.rails.jobs.runOnce();
    expect(await delivered()).toEqual([]);
    await expectLedgerConsistent(s.client, s.walletId);
    expectConserved(t);

    // sent back by the bank: re-credited
    const back = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '2000', rail: 'ach' });
    await s.client.sandbox.returnPayout(back.id, 'account_closed');
    const [returned] = await delivered();
    expect(returned!.type).toBe('payout.returned');
    expect(returned!.data).toEqual({ ...facts, payoutId: back.id, status: 'returned', amountMinor: '2000', railAmountMinor: '2000', externalRef: expect.any(String), reason: 'account_closed' });
    expect(contractAccepts('payout.returned', returned!.data)).toBe(true);
    expect(await balance(s.client, s.walletId)).toBe('9000');
    await expectLedgerConsistent(s.client, s.walletId);
    expectConserved(t);

    // refused by the rail at submission: 503, failed, re-credited
    await t.operator.sandbox.update({ payoutsDown: true });
    try {
      await expect(s.client.payouts.create({ walletId: s.walletId, amountMinor: '3000', rail: 'ach' })).rejects.toMatchObject({ status: 503, code: 'TREASURY_UNAVAILABLE' });
    } finally {
      await t.operator.sandbox.update({ payoutsDown: false });
    }
    const [failed] = await delivered();
    expect(failed!.type).toBe('payout.failed');
    expect(failed!.data).toMatchObject({ ...facts, status: 'failed', amountMinor: '3000', railAmountMinor: '3000', externalRef: null, reason: expect.stringMatching(/^submission refused: /) });
    expect(contractAccepts('payout.failed', failed!.data)).toBe(true);
    const { payouts } = await s.client.payouts.list({ status: 'failed' });
    expect(payouts.map((p) => p.id)).toEqual([failed!.data.payoutId]);
    expect(await balance(s.client, s.walletId)).toBe('9000');
    expect((await s.client.wallets.ledger(s.walletId)).map((e) => [e.type, e.amountMinor])).toEqual([
      ['fund', '10000'], ['payout', '-1000'], ['payout', '-2000'], ['payout_return', '2000'], ['payout', '-3000'], ['payout_return', '3000'],
    ]);
    await expectLedgerConsistent(s.client, s.walletId);
    expectConserved(t);
  });

  it("the operator's resolution: paid is payout.confirmed, failed is payout.failed (re-credited), each beside payout.resolved", async () => {
    const s = await t.newProvider({ name: 'Resolved Payouts' });
    const delivered = await hooked(s.client);
    await s.client.wallets.fund(s.walletId, '5000');
    await s.client.payouts.setDestination(s.id, { destination: 'ext_resolved_bank' });

    const a = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'ach' });
    await t.operator.payouts.resolve(a.id, { outcome: 'paid', reason: 'the bank says it arrived' });
    const got = await delivered();
    expect(got.map((e) => e.type).sort()).toEqual(['payout.confirmed', 'payout.resolved']);
    const confirmed = got.find((e) => e.type === 'payout.confirmed')!;
    expect(confirmed.data).toMatchObject({ payoutId: a.id, status: 'confirmed', amountMinor: '1000', reason: 'resolved by the operator: the bank says it arrived' });
    expect(contractAccepts('payout.confirmed', confirmed.data)).toBe(true);
    expect(await balance(s.client, s.walletId)).toBe('4000');

    const b = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1500', rail: 'ach' });
    await t.operator.payouts.resolve(b.id, { outcome: 'failed', reason: 'the bank never got it' });
    const got2 = await delivered();
    expect(got2.map((e) => e.type).sort()).toEqual(['payout.failed', 'payout.resolved']);
    expect(got2.find((e) => e.type === 'payout.failed')!.data).toMatchObject({ payoutId: b.id, status: 'failed', amountMinor: '1500', reason: 'resolved by the operator: the bank never got it' });
    expect(await balance(s.client, s.walletId)).toBe('4000');
    await expectLedgerConsistent(s.client, s.walletId);
    expectConserved(t);
  });
});

describe('the OpenAPI document', () => {
  it("describes the payout, top-up and deposit events' data in its webhooks section", async () => {
    const res = await call(t, 'GET', '/openapi.json');
    type Schema = { $ref?: string; properties?: Record<string, Schema>; required?: string[] };
    const doc = res.body as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }>; components: { schemas: Record<string, Schema> } };
    const deref = (x: Schema): Schema => (x.$ref ? deref(doc.components.schemas[x.$ref.replace('#/components/schemas/', '')]!) : x);
    const dataOf = (type: string) => deref(deref(doc.webhooks[type]!.post.requestBody.content['application/json']!.schema).properties!.data!);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of ['payout.confirmed', 'payout.failed', 'payout.returned']) expect(dataOf(type).required).toEqual(expect.arrayContaining(['payoutId', 'walletId', 'status', 'amountMinor', 'rail', 'reason']));
    for (const type of ['topup.confirmed', 'topup.declined']) expect(dataOf(type).required).toEqual(expect.arrayContaining(['transactionId', 'walletId', 'status', 'amountMinor', 'creditedMinor']));
    expect(dataOf('deposit.credited').required).toEqual(expect.arrayContaining(['transactionId', 'walletId', 'amountMinor', 'assetAmountMinor', 'usdcPrice']));
  });
});

describe('agentpay trigger', () => {
  // a gateway of its own: the operator's resolution above left the sandbox treasury short for real
  // (a payout resolved as failed that the sandbox bank still holds), so no reconciliation recovers there
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ clock: new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0)), config: { rails: { pollIntervalMs: 0 } } });
  });
  afterAll(async () => {
    await g?.close();
  });

  it('makes every event type happen, recorded for the tenant with the data the contract describes', async () => {
    const seller = await g.newProvider({ name: 'Trigger Seller' });
    const provider = await g.newProvider({ name: 'Trigger Provider' });
    const ws = await g.newWorkspace('Trigger Everything');
    // who each type happens to (docs/cli.md § agentpay trigger)
    const tenantOf = (type: EventType): AgentpayClient => {
      if (type.startsWith('reconciliation.')) return g.operator;
      if (type.startsWith('payout')) return provider.client;
      return ws.client;
    };
    for (const type of Object.keys(TRIGGERS) as EventType[]) {
      const client = tenantOf(type);
      const before = (await client.rail.events({ type })).events.length;
      const res = await trigger(client, type, { amountMinor: '100', seller: seller.client, operator: g.operator });
      expect(res.event?.type, type).toBe(type);
      expect((await client.rail.events({ type })).events.length, type).toBeGreaterThan(before);
      if (EVENT_DATA_SCHEMAS[type]) expect(contractAccepts(type, res.event!.data), `${type}: ${JSON.stringify(res.event!.data)}`).toBe(true);
    }
    // the sandbox world is as it was
    expect(await g.operator.sandbox.settings()).toMatchObject({ payoutsDown: false, usdcPrice: '1.0', treasuryShortfallMinor: '0' });
    expect(await g.operator.rail.reconcile()).toMatchObject({ status: 'ok', paused: false });
    // every type is made, but x402 exact's settlement failure (it needs a gateway with a chain, which the sandbox has not)
    expect(Object.keys(NOT_YET)).toEqual(['x402.settlement_failed']);
    expect(Object.keys(TRIGGERS).sort()).toEqual(EVENT_TYPES.filter((t) => !(t in NOT_YET)).sort());
    await expectLedgerConsistent(provider.client, provider.walletId);
    expectConserved(g);
  });
});
