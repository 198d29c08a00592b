/**
 * The Stripe adapters (src/rails/stripe) in a production gateway, against a local stand-in
 * of Stripe's API (./fake-stripe.ts: the SDK's host/port/protocol point at it) with webhooks
 * signed by the SDK's own generateTestHeaderString. Top-ups are credited only by a verified
 * webhook, once; forged and stale deliveries are refused; a declined card credits nothing;
 * payouts go through Connect (transfer + payout on the seller's account) and a failed one
 * is reversed at Stripe and re-credited once. The ledger is checked after each, and
 * reconciliation against Stripe's balance.
 */
import Stripe from 'stripe';
import { afterAll, describe, expect, it } from 'vitest';
import type { RailAdapters } from '../../../src/domain/rails/adapters.js';
import { STRIPE_SIGNATURE_HEADER, StripePayouts, stripeAdapters, stripeClient } from '../../../src/rails/stripe/adapters.js';
import { ManualClock, startTestGateway } from '../../helpers/gateway.js';
import { changedTables, snapshotDb } from '../../helpers/matrix.js';
import { expectLedger } from '../../wallets/ledger-checks.js';
import { MINUTE, entries, expectConserved, refusedWith, runJobs } from '../helpers.js';
import { FakeStripe } from './fake-stripe.js';

const WEBHOOK_SECRET = 'whsec_test_0123456789abcdef0123456789abcdef';
const clock = new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
const fake = await new FakeStripe(() => clock.now()).start();
const options = { secretKey: 'sk_test_fake', webhookSecret: WEBHOOK_SECRET, clock, webhookToleranceMs: 5 * MINUTE, api: fake.api, maxNetworkRetries: 0 };
const adapters: RailAdapters = {
  providers: stripeAdapters(options),
  screening: { screen: async () => 'clear' },
  pricing: { usdcPriceMicros: async () => 1_000_000n },
};
const t = await startTestGateway({ clock, config: { mode: 'production', rails: { adapters, pollIntervalMs: 0 } } });
const sdk = new Stripe('sk_test_unused');
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** Delivers a Stripe event to the gateway's webhook route, signed at `atMs` with `secret`. */
async function deliver(event: object, { secret = WEBHOOK_SECRET, atMs = clock.now(), tamper }: { secret?: string; atMs?: number; tamper?: (s: string) => string } = {}) {
  const payload = JSON.stringify(event);
  const signature = sdk.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(atMs / 1000) });
  const f = await t.client().http.fetcher();
  const res = await f(`${t.baseUrl}/v1/rail/webhooks/stripe`, {
    method: 'POST', headers: { 'content-type': 'application/json', [STRIPE_SIGNATURE_HEADER]: signature }, body: tamper ? tamper(payload) : payload,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function topUp(walletId: string, amountMinor: string, client = t.workspace) {
  return client.rail.topUp(walletId, { amountMinor });
}

describe('card top-ups through Stripe PaymentIntents', () => {
  it('a PaymentIntent is created (idempotency key = the top-up id) and nothing is credited before the webhook', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'stripe-topup-1');
    const i = await topUp(walletId, '2500');
    expect(i).toMatchObject({ status: 'pending', amountMinor: '2500', currency: 'USD', treasuryProviderId: 'stripe' });
    expect(i.externalRef).toMatch(/^pi_/);
    expect(i.clientSecret).toBe(fake.paymentIntents.get(i.externalRef)!.client_secret);
    const req = fake.requests.find((r) => r.path === '/v1/payment_intents' && r.method === 'POST')!;
    expect(req).toMatchObject({ idempotencyKey: `agentpay-topup-${i.transactionId}`, form: { amount: '2500', currency: 'usd', 'metadata[agentpay_transaction_id]': i.transactionId } });
    await expectLedger(t.workspace, walletId, []);
  });

  it('credits once on a verified payment_intent.succeeded; a duplicate delivery, a forged and a stale one credit nothing', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'stripe-topup-2');
    const i = await topUp(walletId, '2500');
    const event = fake.event('payment_intent.succeeded', fake.succeed(i.externalRef));

    const before = snapshotDb(t.dataDir);
    const forged = await deliver(event, { secret: 'whsec_not_the_secret' });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: STRIPE_SIGNATURE_HEADER } });
    const changed = await deliver(event, { tamper: (s) => s.replace('"amount":2500', '"amount":2600') });
    expect(changed.status).toBe(400);
    const stale = await deliver(event, { atMs: clock.now() - 6 * MINUTE });
    expect(stale.status).toBe(400);
    expect(stale.body.error.message).toContain('tolerance');
    const ahead = await deliver(event, { atMs: clock.now() + 6 * MINUTE });
    expect(ahead.status).toBe(400);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    await expectLedger(t.workspace, walletId, []);

    const ok = await deliver(event);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ received: true, transaction: { id: i.transactionId, state: 'confirmed' } });
    const [entry] = await expectLedger(t.workspace, walletId, ['2500']);
    expect(entry).toMatchObject({ type: 'topup', reference: `topup:${i.externalRef}` });

    // Stripe delivers the same event again (it retries): refused as a duplicate, nothing credited
    const again = await deliver(event);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DUPLICATE_EXTERNAL_REF');
    await expectLedger(t.workspace, walletId, ['2500']);
    expectConserved(t);
  });

  it('a declined card (payment_intent.payment_failed) declines the top-up and credits nothing; the lookup agrees', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'stripe-topup-3');
    const i = await topUp(walletId, '1200');
    const res = await deliver(fake.event('payment_intent.payment_failed', fake.decline(i.externalRef, 'insufficient_funds')));
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({ id: i.transactionId, state: 'declined', reason: 'insufficient_funds' });
    await expectLedger(t.workspace, walletId, []);
    expect(await adapters.providers[0]!.topUps!.lookup(i.externalRef)).toEqual({ status: 'declined', amountMinor: 1200n });
  });

  it('an event the endpoint does not handle is refused naming the type', async () => {
    const res = await deliver(fake.event('charge.succeeded', { id: 'ch_1', object: 'charge', amount: 100, currency: 'usd' }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ field: 'type' });
  });

  it('an amount Stripe does not take is declined at once; Stripe down is 503 and records nothing', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'stripe-topup-4');
    expect(await topUp(walletId, '100000000')).toMatchObject({ status: 'declined', declineReason: 'amount_too_large' });
    // Stripe's own minimum (0.50 USD), refused by Stripe with a 400
    expect(await topUp(walletId, '49')).toMatchObject({ status: 'declined', declineReason: 'amount_too_small' });
    fake.down = true;
    try {
      const before = snapshotDb(t.dataDir);
      await refusedWith(topUp(walletId, '700'), 503, 'TREASURY_UNAVAILABLE');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    } finally {
      fake.down = false;
    }
    await expectLedger(t.workspace, walletId, []);
  });
});

/** A provider whose settlement wallet was topped up through Stripe, with a connected account as its payout destination. */
async function seller(amountMinor: string) {
  const s = await t.newProvider({ name: `Stripe seller ${Math.random().toString(36).slice(2, 7)}` });
  const account = `acct_1${Math.random().toString(36).slice(2, 12)}`;
  fake.accounts.add(account);
  const i = await topUp(s.walletId, amountMinor, s.client);
  expect((await deliver(fake.event('payment_intent.succeeded', fake.succeed(i.externalRef)))).status).toBe(200);
  await s.client.payouts.setDestination(s.id, { destination: `ext_${account}` });
  return { ...s, account };
}

describe('bank payouts through Stripe Connect', () => {
  it('a payout transfers to the connected account, pays out to its bank, and is confirmed when Stripe reports it paid', async () => {
    const s = await seller('10000');
    const platformBefore = fake.balanceOf();
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '4000', rail: 'ach' });
    expect(p).toMatchObject({ status: 'submitted', treasuryProviderId: 'stripe-payouts', destination: `ext_${s.account}`, railAmountMinor: '4000' });
    const [po] = [...fake.payouts.get(s.account)!.values()];
    expect(p.externalRef).toBe(`${s.account}:${po!.id}`);
    expect(p.expectedBy).toBe(new Date(po!.arrival_date * 1000).toISOString());
    expect(fake.balanceOf()).toBe(platformBefore - 4000);
    const transfer = [...fake.transfers.values()].find((tr) => tr.transfer_group === p.id)!;
    expect(transfer).toMatchObject({ amount: 4000, destination: s.account, metadata: { agentpay_payout_id: p.id } });
    expect(entries(t, s.walletId)).toEqual([['topup', '10000'], ['payout', '-4000']]);

    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
    fake.settlePayout(s.account, po!.id, 'paid');
    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['topup', '10000'], ['payout', '-4000']]);
    expectConserved(t);
  });

  it('a payout the bank fails is reversed at Stripe and re-credited once', async () => {
    const s = await seller('5000');
    const platformBefore = fake.balanceOf();
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '3000', rail: 'ach' });
    const [po] = [...fake.payouts.get(s.account)!.values()];
    fake.settlePayout(s.account, po!.id, 'failed', 'account_closed');
    await runJobs(t);
    const returned = await s.client.payouts.get(p.id);
    expect(returned).toMatchObject({ status: 'returned' });
    expect(returned.reason).toContain('account has been closed');
    expect(entries(t, s.walletId)).toEqual([['topup', '5000'], ['payout', '-3000'], ['payout_return', '3000']]);
    // the money is back in the platform's Stripe balance, not left in the seller's account
    expect(fake.balanceOf()).toBe(platformBefore);
    expect(fake.balanceOf(s.account)).toBe(0);
    clock.advance(MINUTE);
    await runJobs(t);
    expect(entries(t, s.walletId)).toEqual([['topup', '5000'], ['payout', '-3000'], ['payout_return', '3000']]);
    expect(fake.requests.filter((r) => r.path.endsWith('/reversals')).map((r) => r.idempotencyKey)).toContain(`agentpay-reversal-${p.id}`);
    expectConserved(t);
  });

  it('Stripe refusing the bank payout: the transfer is reversed, the payout failed and re-credited at once (503)', async () => {
    const s = await seller('2000');
    const platformBefore = fake.balanceOf();
    fake.refuseNextPayout = s.account;
    await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '1500', rail: 'ach' }), 503, 'TREASURY_UNAVAILABLE');
    const { payouts } = await s.client.payouts.list({});
    expect(payouts[0]).toMatchObject({ status: 'failed' });
    expect(entries(t, s.walletId)).toEqual([['topup', '2000'], ['payout', '-1500'], ['payout_return', '1500']]);
    expect(fake.balanceOf()).toBe(platformBefore);
    expectConserved(t);
  });

  it('a lost response leaves the payout submitted; the rail job submits it again and it is sent once', async () => {
    const s = await seller('3000');
    fake.loseResponseTo = '/v1/payouts'; // the transfer and the payout are made, the answer is lost
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '2000', rail: 'ach' });
    expect(p).toMatchObject({ status: 'submitted' });
    expect(p.externalRef ?? null).toBeNull();
    expect(entries(t, s.walletId)).toEqual([['topup', '3000'], ['payout', '-2000']]);
    await runJobs(t);
    const again = await s.client.payouts.get(p.id);
    const pos = [...fake.payouts.get(s.account)!.values()];
    expect(pos).toHaveLength(1);
    expect(again.externalRef).toBe(`${s.account}:${pos[0]!.id}`);
    expect([...fake.transfers.values()].filter((tr) => tr.transfer_group === p.id)).toHaveLength(1);
    fake.settlePayout(s.account, pos[0]!.id, 'paid');
    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['topup', '3000'], ['payout', '-2000']]);
    expectConserved(t);
  });

  it('submit is idempotent on the payout id even after Stripe forgets the idempotency key', async () => {
    const rail = new StripePayouts(stripeClient(options), ['ach']);
    const account = 'acct_1idempotent';
    fake.accounts.add(account);
    fake.balances.set('platform', fake.balanceOf() + 900);
    const p = { payoutId: 'pay_direct_1', rail: 'ach' as const, destination: `ext_${account}`, amountMinor: 900n, asset: 'USD' as const };
    const first = await rail.submit(p);
    const second = await rail.submit(p);
    expect(second).toEqual(first);
    expect([...fake.transfers.values()].filter((tr) => tr.transfer_group === 'pay_direct_1')).toHaveLength(1);
    expect(fake.payouts.get(account)!.size).toBe(1);
    expect(await rail.lookup('pay_direct_1')).toMatchObject({ state: 'submitted', externalRef: first.externalRef, amountMinor: 900n });
    expect(await rail.lookup('pay_unknown')).toBeUndefined();
    // give the money back so reconciliation below sees only the gateway's own movements
    fake.settlePayout(account, [...fake.payouts.get(account)!.keys()][0]!, 'failed');
    expect(await rail.status(first.externalRef)).toMatchObject({ state: 'returned' });
    expect(fake.balanceOf(account)).toBe(0);
    fake.balances.set('platform', fake.balanceOf() - 900);
  });

  it('a destination that is not a connected account is refused before any money moves', async () => {
    const rail = new StripePayouts(stripeClient(options), ['ach']);
    const n = fake.requests.length;
    await expect(rail.submit({ payoutId: 'pay_x', rail: 'ach', destination: 'ext_bank_0001', amountMinor: 100n, asset: 'USD' })).rejects.toMatchObject({ name: 'RailUnavailable' });
    expect(fake.requests.length).toBe(n);
  });
});

describe('reconciliation against the Stripe balance', () => {
  it('finds the ledger covered by the platform balance, and a shortfall when Stripe holds less', async () => {
    const ok = await t.operator.rail.reconcile();
    expect(ok).toMatchObject({ status: 'ok', sandboxCreditsMinor: '0', discrepancies: [] });
    expect(ok.holdings).toEqual([{ treasuryProviderId: 'stripe', asset: 'USD', amountMinor: String(fake.balanceOf()), valueMinor: String(fake.balanceOf()) }]);
    expect(ok.obligationsMinor).toBe(String(fake.balanceOf()));

    fake.balances.set('platform', fake.balanceOf() - 100); // a dispute took money, say
    expect((await t.operator.rail.reconcile()).status).toBe('shortfall');
    fake.balances.set('platform', fake.balanceOf() + 100);
    expect((await t.operator.rail.reconcile()).status).toBe('ok');
  });

  it('GET /v1/rail/providers lists both Stripe adapters as operational, and down when Stripe is', async () => {
    const { providers, sandbox } = await t.provider.rail.providers();
    expect(sandbox).toBe(false);
    expect(providers.map((p) => [p.id, p.status])).toEqual([['stripe', 'operational'], ['stripe-payouts', 'operational']]);
    fake.down = true;
    try {
      expect((await t.provider.rail.providers()).providers.map((p) => p.status)).toEqual(['degraded', 'degraded']);
    } finally {
      fake.down = false;
    }
  });
});

describe('card top-ups through Stripe Checkout (a hosted page)', () => {
  it('a Checkout Session gives the hostedUrl; checkout.session.completed credits once, expired declines; lookups agree', async () => {
    const checkout = { successUrl: 'https://example.test/paid', cancelUrl: 'https://example.test/cancel' };
    const hosted: RailAdapters = { ...adapters, providers: stripeAdapters({ ...options, payouts: false, checkout }) };
    const g = await startTestGateway({ clock, config: { mode: 'production', rails: { adapters: hosted, pollIntervalMs: 0 } } });
    try {
      const post = async (event: object) => {
        const payload = JSON.stringify(event);
        const signature = sdk.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(clock.now() / 1000) });
        const f = await g.client().http.fetcher();
        const res = await f(`${g.baseUrl}/v1/rail/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', [STRIPE_SIGNATURE_HEADER]: signature }, body: payload });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const { walletId } = await g.newAgentWallet(g.workspace, 'stripe-checkout');
      const i = await g.workspace.rail.topUp(walletId, { amountMinor: '1500' });
      expect(i.externalRef).toMatch(/^cs_test_/);
      expect(i.hostedUrl).toBe(`https://checkout.stripe.com/c/pay/${i.externalRef}`);
      const req = fake.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
      expect(req.form).toMatchObject({ mode: 'payment', 'line_items[0][price_data][unit_amount]': '1500', success_url: checkout.successUrl, 'allowed_payment_method_types[0]': 'card' });
      await expectLedger(g.workspace, walletId, []);

      const event = fake.event('checkout.session.completed', fake.completeCheckout(i.externalRef));
      expect((await post(event)).status).toBe(200);
      expect((await post(event)).status).toBe(409);
      await expectLedger(g.workspace, walletId, ['1500']);
      expect(await hosted.providers[0]!.topUps!.lookup(i.externalRef)).toEqual({ status: 'succeeded', amountMinor: 1500n });

      const j = await g.workspace.rail.topUp(walletId, { amountMinor: '800' });
      const expired = await post(fake.event('checkout.session.expired', fake.expireCheckout(j.externalRef)));
      expect(expired.body.transaction).toMatchObject({ state: 'declined', reason: 'checkout_expired' });
      await expectLedger(g.workspace, walletId, ['1500']);
      expect(await hosted.providers[0]!.topUps!.lookup(j.externalRef)).toEqual({ status: 'declined', amountMinor: 800n });
      expectConserved(g);
    } finally {
      await g.close();
    }
  });
});
