/**
 * Stripe rail adapters: card top-ups (PaymentIntents, credited by verified webhooks) and
 * bank payouts to sellers (Stripe Connect: a transfer to the seller's connected account,
 * then a payout from that account to its bank), plus the platform's Stripe balance as
 * the treasury view for reconciliation. They implement the interfaces of
 * src/domain/rails/adapters.ts and know nothing of the gateway. docs/rails.md § Stripe.
 *
 * Every request to Stripe that creates something carries an idempotency key derived from
 * the platform's id (the top-up transaction, the payout), and `submit` first looks for
 * what an earlier attempt left at Stripe (idempotency keys expire after 24 hours; the
 * lookup does not), so a payout submitted again never sends twice.
 */
import Stripe from 'stripe';
import type { Clock } from '../../core/clock.js';
import { validationError } from '../../core/errors.js';
import {
  RailUnavailable,
  type AdapterStatus, type PayoutRail, type PayoutRailRecord, type ProcessorEvent, type Rail, type RailAdapter, type TopUpRail, type TreasuryView,
} from '../../domain/rails/adapters.js';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
/** the metadata key every object the adapters create at Stripe carries */
export const PAYOUT_ID_KEY = 'agentpay_payout_id';
export const TRANSACTION_ID_KEY = 'agentpay_transaction_id';

/** The webhook events the top-up adapter understands; the endpoint at Stripe subscribes to these only. */
export const STRIPE_WEBHOOK_EVENTS = [
  'payment_intent.succeeded', 'payment_intent.payment_failed', 'payment_intent.canceled',
  'checkout.session.completed', 'checkout.session.expired',
] as const;

export interface StripeRailsOptions {
  /** `sk_live_…`, `sk_test_…` or a restricted key `rk_…` (never logged) */
  secretKey: string;
  /** the webhook endpoint's signing secret `whsec_…` (top-ups) */
  webhookSecret?: string;
  clock: Clock;
  /** how far a webhook's signed timestamp may be from the clock, either way */
  webhookToleranceMs: number;
  /** the adapter ids (the webhook route is POST /v1/rail/webhooks/<topUpsId>) */
  topUpsId?: string;
  payoutsId?: string;
  /** which adapters run; default both */
  topUps?: boolean;
  payouts?: boolean;
  /** the payout rails Stripe serves here; default ['ach'] (Stripe's standard US payouts) */
  payoutRails?: Rail[];
  /** where the API is: Stripe's by default; tests point it at a local server */
  api?: { host: string; port: number; protocol: 'http' | 'https' };
  /**
   * Top-ups as Stripe Checkout Sessions (a hosted payment page: the intent's `hostedUrl`) instead
   * of PaymentIntents for Stripe.js; the payer comes back to `successUrl` or `cancelUrl`.
   */
  checkout?: { successUrl: string; cancelUrl: string };
  /** the SDK's retries of a failed request (with the same idempotency key); default 2 */
  maxNetworkRetries?: number;
  /** ms; default 30000 */
  timeoutMs?: number;
}

export function stripeClient(o: Pick<StripeRailsOptions, 'secretKey' | 'api' | 'maxNetworkRetries' | 'timeoutMs'>): Stripe {
  return new Stripe(o.secretKey, {
    maxNetworkRetries: o.maxNetworkRetries ?? 2,
    timeout: o.timeoutMs ?? 30_000,
    telemetry: false,
    appInfo: { name: 'agentpay' },
    ...(o.api ? { host: o.api.host, port: o.api.port, protocol: o.api.protocol } : {}),
  });
}

/** Stripe's answer that it did not do what was asked (a 4xx other than an idempotency clash): surely not taken. */
function refusedByStripe(e: unknown): e is InstanceType<typeof Stripe.errors.StripeError> {
  if (!(e instanceof Stripe.errors.StripeError)) return false;
  if (e instanceof Stripe.errors.StripeIdempotencyError) return false;
  const s = e.statusCode;
  return s !== undefined && s >= 400 && s < 500 && s !== 409;
}

const describe = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** One probe of the API shared by the adapters' status (a cheap authenticated read). */
async function probe(stripe: Stripe): Promise<AdapterStatus> {
  try {
    await stripe.balance.retrieve();
    return 'operational';
  } catch (e) {
    return refusedByStripe(e) ? 'down' : 'degraded';
  }
}

// ---- top-ups ----

export class StripeTopUps implements TopUpRail {
  readonly currencies = ['USD' as const];
  readonly webhookBodySchema = {
    type: 'object',
    required: ['id', 'type', 'data'],
    properties: { id: { type: 'string' }, object: { type: 'string' }, type: { type: 'string' }, data: { type: 'object' } },
  };

  constructor(private stripe: Stripe, private o: Pick<StripeRailsOptions, 'webhookSecret' | 'clock' | 'webhookToleranceMs' | 'checkout'>) {}

  async createIntent(input: { transactionId: string; walletId: string; amountMinor: bigint; currency: 'USD' | 'USDC' }) {
    if (input.currency !== 'USD') throw new RailUnavailable('stripe', `Stripe top-ups are in USD, not ${input.currency}`);
    if (input.amountMinor > MAX_AMOUNT) return declinedAtOnce(input, 'amount_too_large');
    if (this.o.checkout) return this.createCheckout(input, this.o.checkout);
    try {
      const pi = await this.stripe.paymentIntents.create({
        amount: toStripeAmount(input.amountMinor),
        currency: 'usd',
        automatic_payment_methods: { enabled: true },
        description: `agentpay top-up ${input.transactionId}`,
        metadata: { [TRANSACTION_ID_KEY]: input.transactionId, agentpay_wallet_id: input.walletId },
      }, { idempotencyKey: `agentpay-topup-${input.transactionId}` });
      return { externalRef: pi.id, status: 'pending' as const, ...(pi.client_secret ? { clientSecret: pi.client_secret } : {}) };
    } catch (e) {
      // Stripe refused the intent itself (over its amount limit, a currency the account cannot take)
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 400) {
        return declinedAtOnce(input, e.code ?? 'invalid_request');
      }
      throw new RailUnavailable('stripe', `Stripe did not create the payment intent: ${describe(e)}`);
    }
  }

  /** A Checkout Session (cards only, so `completed` means paid) of one line: the top-up. */
  private async createCheckout(input: { transactionId: string; walletId: string; amountMinor: bigint }, urls: { successUrl: string; cancelUrl: string }) {
    const metadata = { [TRANSACTION_ID_KEY]: input.transactionId, agentpay_wallet_id: input.walletId };
    try {
      const cs = await this.stripe.checkout.sessions.create({
        mode: 'payment',
        allowed_payment_method_types: ['card'],
        line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: toStripeAmount(input.amountMinor), product_data: { name: 'agentpay wallet top-up' } } }],
        client_reference_id: input.transactionId,
        success_url: urls.successUrl,
        cancel_url: urls.cancelUrl,
        metadata,
        payment_intent_data: { metadata },
      }, { idempotencyKey: `agentpay-topup-${input.transactionId}` });
      return { externalRef: cs.id, status: 'pending' as const, ...(cs.url ? { hostedUrl: cs.url } : {}) };
    } catch (e) {
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 400) return declinedAtOnce(input, e.code ?? 'invalid_request');
      throw new RailUnavailable('stripe', `Stripe did not create the checkout session: ${describe(e)}`);
    }
  }

  verifyWebhook(rawBody: string, headers: Record<string, string | undefined>): ProcessorEvent {
    const header = headers[STRIPE_SIGNATURE_HEADER];
    if (!header) throw validationError(STRIPE_SIGNATURE_HEADER, 'is required: webhooks are accepted only when signed by Stripe');
    if (!this.o.webhookSecret) throw validationError(STRIPE_SIGNATURE_HEADER, 'cannot be checked: no Stripe webhook secret is configured (STRIPE_WEBHOOK_SECRET)');
    const now = this.o.clock.now();
    const toleranceS = Math.max(1, Math.floor(this.o.webhookToleranceMs / 1000));
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, header, this.o.webhookSecret, toleranceS, undefined, now);
    } catch (e) {
      throw validationError(STRIPE_SIGNATURE_HEADER, `is refused: ${describe(e)}`);
    }
    // Stripe's check refuses only the old; a time far ahead of the clock is as suspect
    const t = Number(/(?:^|,)t=(\d+)/.exec(header)?.[1]);
    if (t * 1000 - now > this.o.webhookToleranceMs) {
      throw validationError(STRIPE_SIGNATURE_HEADER, `is stale: signed at ${new Date(t * 1000).toISOString()}, ahead of the gateway's clock by more than ${toleranceS} s`);
    }
    if (!(STRIPE_WEBHOOK_EVENTS as readonly string[]).includes(event.type)) {
      throw validationError('type', `${JSON.stringify(event.type)} is not an event this endpoint handles; subscribe it to ${STRIPE_WEBHOOK_EVENTS.join(', ')} only`);
    }
    if (event.type.startsWith('checkout.session.')) return this.checkoutEvent(event);
    const pi = event.data.object as Stripe.PaymentIntent;
    if (pi.object !== 'payment_intent' || typeof pi.id !== 'string' || !Number.isSafeInteger(pi.amount)) {
      throw validationError('data.object', 'must be a payment_intent');
    }
    const currency = pi.currency.toUpperCase();
    if (currency !== 'USD') throw validationError('data.object.currency', `${pi.currency} is not a currency of these top-ups (usd)`);
    const base = { id: event.id, externalRef: pi.id, amountMinor: BigInt(pi.amount), currency: 'USD' as const };
    if (event.type === 'payment_intent.succeeded') return { ...base, type: 'topup.succeeded' };
    const reason = event.type === 'payment_intent.canceled'
      ? `canceled${pi.cancellation_reason ? `: ${pi.cancellation_reason}` : ''}`
      : pi.last_payment_error?.decline_code ?? pi.last_payment_error?.code ?? 'payment_failed';
    return { ...base, type: 'topup.declined', declineReason: reason };
  }

  private checkoutEvent(event: Stripe.Event): ProcessorEvent {
    const cs = event.data.object as Stripe.Checkout.Session;
    if (cs.object !== 'checkout.session' || typeof cs.id !== 'string' || !Number.isSafeInteger(cs.amount_total)) {
      throw validationError('data.object', 'must be a checkout.session with amount_total');
    }
    if (cs.currency !== 'usd') throw validationError('data.object.currency', `${cs.currency} is not a currency of these top-ups (usd)`);
    const base = { id: event.id, externalRef: cs.id, amountMinor: BigInt(cs.amount_total!), currency: 'USD' as const };
    if (event.type === 'checkout.session.expired') return { ...base, type: 'topup.declined', declineReason: 'checkout_expired' };
    // cards only: a completed session is paid; anything else is not something to credit
    if (cs.payment_status !== 'paid') throw validationError('data.object.payment_status', `is ${cs.payment_status}: only a paid session is credited`);
    return { ...base, type: 'topup.succeeded' };
  }

  async lookup(externalRef: string) {
    // refused by Stripe before any intent existed: our own record is all there is
    const refused = /^declined:(\d+):/.exec(externalRef);
    if (refused) return { status: 'declined' as const, amountMinor: BigInt(refused[1]!) };
    if (externalRef.startsWith('cs_')) return this.lookupCheckout(externalRef);
    let pi: Stripe.PaymentIntent;
    try {
      pi = await this.stripe.paymentIntents.retrieve(externalRef);
    } catch (e) {
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 404) return undefined;
      throw new RailUnavailable('stripe', `Stripe did not answer for ${externalRef}: ${describe(e)}`);
    }
    const status = pi.status === 'succeeded' ? 'succeeded' as const
      : pi.status === 'canceled' || (pi.status === 'requires_payment_method' && pi.last_payment_error) ? 'declined' as const
        : 'pending' as const;
    return { status, amountMinor: BigInt(pi.amount) };
  }

  private async lookupCheckout(id: string) {
    let cs: Stripe.Checkout.Session;
    try {
      cs = await this.stripe.checkout.sessions.retrieve(id);
    } catch (e) {
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 404) return undefined;
      throw new RailUnavailable('stripe', `Stripe did not answer for ${id}: ${describe(e)}`);
    }
    const status = cs.payment_status === 'paid' ? 'succeeded' as const : cs.status === 'expired' ? 'declined' as const : 'pending' as const;
    return { status, amountMinor: BigInt(cs.amount_total ?? 0) };
  }
}

/** A top-up Stripe refused to create an intent for: no Stripe object exists, the reference says what was asked. */
function declinedAtOnce(input: { transactionId: string; amountMinor: bigint }, reason: string) {
  return { externalRef: `declined:${input.amountMinor}:${input.transactionId}`, status: 'declined' as const, declineReason: reason };
}

// ---- treasury ----

/** The platform account's USD at Stripe: available plus pending (card money is pending for days before it is available). */
export class StripeTreasury implements TreasuryView {
  constructor(private stripe: Stripe) {}

  async balance() {
    let b: Stripe.Balance;
    try {
      b = await this.stripe.balance.retrieve();
    } catch (e) {
      throw new RailUnavailable('stripe', `Stripe did not answer the balance: ${describe(e)}`);
    }
    const usd = (xs: Array<{ amount: number; currency: string }> | undefined) => (xs ?? []).filter((x) => x.currency === 'usd').reduce((s, x) => s + BigInt(x.amount), 0n);
    return { asset: 'USD' as const, amountMinor: usd(b.available) + usd(b.pending) };
  }
}

// ---- payouts ----

const CONNECTED = /^ext_(acct_[A-Za-z0-9]+)$/;

/**
 * Payouts through Stripe Connect. The destination is `ext_<connected account id>`
 * (`ext_acct_1Nv0…`): the seller's Connect account, with its bank account attached and
 * manual payouts. `submit` transfers the amount from the platform's balance to that account
 * (transfer_group = the payout id), then creates a payout of the same amount on that
 * account to its default bank account. The external reference is `<account>:<payout id>`.
 * A payout Stripe reports `failed` or `canceled` has its transfer reversed (the money back in
 * the platform's balance) before it is reported `returned`, so the seller's re-credit in the
 * ledger matches money the platform holds again.
 */
export class StripePayouts implements PayoutRail {
  constructor(private stripe: Stripe, readonly rails: Rail[]) {}

  async submit(p: { payoutId: string; rail: Rail; destination: string; amountMinor: bigint; asset: 'USD' | 'USDC' }) {
    const account = CONNECTED.exec(p.destination)?.[1];
    if (!account) throw new RailUnavailable('stripe', `destination ${p.destination} is not a Stripe connected account (ext_acct_…); no money moved`);
    if (p.asset !== 'USD' || !this.rails.includes(p.rail)) throw new RailUnavailable('stripe', `Stripe pays out USD on ${this.rails.join(', ')}, not ${p.asset} on ${p.rail}`);
    const amount = toStripeAmount(p.amountMinor);

    // what an earlier attempt left (idempotency keys last 24 hours; this lookup for ever)
    let transfer = await this.findTransfer(p.payoutId);
    if (!transfer) {
      try {
        transfer = await this.stripe.transfers.create({
          amount, currency: 'usd', destination: account, transfer_group: p.payoutId,
          description: `agentpay payout ${p.payoutId}`, metadata: { [PAYOUT_ID_KEY]: p.payoutId, agentpay_rail: p.rail },
        }, { idempotencyKey: `agentpay-transfer-${p.payoutId}` });
      } catch (e) {
        if (refusedByStripe(e)) throw new RailUnavailable('stripe', `Stripe refused the transfer to ${account}: ${describe(e)}`);
        throw e; // outcome unknown: submitted again later, and the lookup above finds it
      }
    }
    if (transfer.reversed) throw new RailUnavailable('stripe', `the transfer ${transfer.id} of payout ${p.payoutId} was reversed; nothing is on its way`);
    let payout = await this.findPayout(account, p.payoutId, transfer.created);
    if (!payout) {
      try {
        payout = await this.stripe.payouts.create({
          amount, currency: 'usd', description: `agentpay payout ${p.payoutId}`,
          metadata: { [PAYOUT_ID_KEY]: p.payoutId, agentpay_transfer_id: transfer.id, agentpay_rail: p.rail },
        }, { idempotencyKey: `agentpay-payout-${p.payoutId}`, stripeAccount: account });
      } catch (e) {
        if (!refusedByStripe(e)) throw e;
        // the money reached the seller's Stripe account but cannot go to the bank: take it back,
        // then the payout surely did not happen (a failing reversal leaves the outcome unknown)
        await this.reverse(transfer.id, p.payoutId);
        throw new RailUnavailable('stripe', `Stripe refused the payout from ${account} to its bank: ${describe(e)}; the transfer was reversed`);
      }
    }
    return { externalRef: `${account}:${payout.id}`, expectedBy: payout.arrival_date * 1000 };
  }

  async status(externalRef: string): Promise<PayoutRailRecord | undefined> {
    const [account, id] = externalRef.split(':');
    if (!account || !id) return undefined;
    let payout: Stripe.Payout;
    try {
      payout = await this.stripe.payouts.retrieve(id, {}, { stripeAccount: account });
    } catch (e) {
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 404) return undefined;
      throw e;
    }
    return this.record(account, payout);
  }

  async lookup(payoutId: string) {
    const transfer = await this.findTransfer(payoutId);
    if (!transfer) return undefined;
    const account = typeof transfer.destination === 'string' ? transfer.destination : transfer.destination?.id ?? '';
    const payout = await this.findPayout(account, payoutId, transfer.created);
    const rail = (transfer.metadata?.agentpay_rail ?? this.rails[0]) as Rail;
    if (!payout) {
      // a transfer without a payout: reversed (refused) or still between the two steps
      return {
        state: transfer.reversed ? 'returned' as const : 'submitted' as const, rail, destination: `ext_${account}`,
        amountMinor: BigInt(transfer.amount), asset: 'USD' as const, externalRef: `${account}:`,
      };
    }
    return { ...(await this.record(account, payout)), externalRef: `${account}:${payout.id}` };
  }

  private async record(account: string, payout: Stripe.Payout): Promise<PayoutRailRecord> {
    const base = {
      rail: (payout.metadata?.agentpay_rail ?? this.rails[0]) as Rail, destination: `ext_${account}`,
      amountMinor: BigInt(payout.amount), asset: 'USD' as const,
    };
    if (payout.status === 'paid') return { ...base, state: 'confirmed' };
    if (payout.status === 'failed' || payout.status === 'canceled') {
      const transferId = payout.metadata?.agentpay_transfer_id;
      const payoutId = payout.metadata?.[PAYOUT_ID_KEY];
      // the money is back in the seller's Stripe account: bring it to the platform's before re-crediting;
      // until that works the payout is reported on its way (the job asks again; the operator sees it stuck)
      if (transferId && payoutId) {
        try {
          await this.reverse(transferId, payoutId);
        } catch (e) {
          return { ...base, state: 'submitted', reason: `Stripe payout ${payout.status}, but its transfer ${transferId} could not be reversed yet: ${describe(e)}` };
        }
      }
      return { ...base, state: 'returned', reason: `Stripe payout ${payout.status}: ${payout.failure_message ?? payout.failure_code ?? 'no reason given'}` };
    }
    return { ...base, state: 'submitted' };
  }

  private async reverse(transferId: string, payoutId: string): Promise<void> {
    const t = await this.stripe.transfers.retrieve(transferId);
    if (t.reversed || t.amount_reversed >= t.amount) return;
    await this.stripe.transfers.createReversal(transferId, { amount: t.amount - t.amount_reversed, metadata: { [PAYOUT_ID_KEY]: payoutId } }, { idempotencyKey: `agentpay-reversal-${payoutId}` });
  }

  private async findTransfer(payoutId: string): Promise<Stripe.Transfer | undefined> {
    const list = await this.stripe.transfers.list({ transfer_group: payoutId, limit: 10 });
    return list.data.find((t) => t.metadata?.[PAYOUT_ID_KEY] === payoutId);
  }

  /** the payout made on the connected account for this payout id, created no earlier than its transfer */
  private async findPayout(account: string, payoutId: string, since: number): Promise<Stripe.Payout | undefined> {
    for await (const po of this.stripe.payouts.list({ created: { gte: since }, limit: 100 }, { stripeAccount: account })) {
      if (po.metadata?.[PAYOUT_ID_KEY] === payoutId) return po;
    }
    return undefined;
  }
}

/** the most one Stripe charge or payout carries in USD cents (999,999.99 USD) */
const MAX_AMOUNT = 99_999_999n;

function toStripeAmount(minor: bigint): number {
  if (minor <= 0n || minor > MAX_AMOUNT) throw new RailUnavailable('stripe', `${minor} cents is outside what one Stripe charge or payout carries (1 to 99999999)`);
  return Number(minor);
}

/**
 * The Stripe adapters of one Stripe account: `stripe` (card top-ups, and the account's
 * balance as the treasury) and `stripe-payouts` (Connect payouts), as configured.
 */
export function stripeAdapters(o: StripeRailsOptions, client: Stripe = stripeClient(o)): RailAdapter[] {
  const out: RailAdapter[] = [];
  const treasury = new StripeTreasury(client);
  const status = () => probe(client);
  if (o.topUps ?? true) {
    if (!o.webhookSecret) throw new Error('Stripe top-ups need the webhook signing secret (STRIPE_WEBHOOK_SECRET or webhookSecretFile)');
    out.push({
      info: {
        id: o.topUpsId ?? 'stripe', name: 'Stripe (card top-ups)', adapterType: 'stripe', roles: ['funding'], currencies: ['USD'],
        rails: [], topUps: true, depositAddresses: false, faucet: false,
      },
      status,
      topUps: new StripeTopUps(client, o),
      treasury,
    });
  }
  if (o.payouts ?? true) {
    const rails = o.payoutRails ?? ['ach'];
    out.push({
      info: {
        id: o.payoutsId ?? 'stripe-payouts', name: 'Stripe Connect (bank payouts)', adapterType: 'stripe', roles: ['payout'], currencies: ['USD'],
        rails, topUps: false, depositAddresses: false, faucet: false,
      },
      status,
      payouts: new StripePayouts(client, rails),
      // one Stripe balance: counted once, on the top-ups adapter when it runs
      ...(out.length === 0 ? { treasury } : {}),
    });
  }
  return out;
}
