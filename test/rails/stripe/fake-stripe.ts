/**
 * A local stand-in for the few Stripe API endpoints the Stripe adapters use, on
 * 127.0.0.1 over plain HTTP (the SDK's `host`/`port`/`protocol` options point at it).
 * Request bodies are the SDK's form encoding; answers are shaped like Stripe's API objects
 * (field names from the stripe package's types: PaymentIntent, Transfer, TransferReversal,
 * Payout, Balance, list objects, error objects), with Stripe's idempotency-key replay.
 *
 * Simplified on purpose (say so where it matters): one USD balance per account, money is
 * `available` at once (no pending period, no processing fees), payouts stay `pending` until
 * the test settles them with `settlePayout`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Obj = Record<string, any>;
const PLATFORM = 'platform';

export class FakeStripe {
  readonly requests: Array<{ method: string; path: string; account: string | undefined; idempotencyKey: string | undefined; form: Record<string, string> }> = [];
  readonly paymentIntents = new Map<string, Obj>();
  readonly checkoutSessions = new Map<string, Obj>();
  readonly transfers = new Map<string, Obj>();
  /** payouts by connected account */
  readonly payouts = new Map<string, Map<string, Obj>>();
  /** USD balance in cents per account (`platform` for the platform's own) */
  readonly balances = new Map<string, number>([[PLATFORM, 0]]);
  /** accounts that exist; a transfer to any other is refused as Stripe does */
  readonly accounts = new Set<string>();
  /** when set, every request fails with a 500 (Stripe down) */
  down = false;
  /** refuse the next payout creation on a connected account (e.g. no bank account) */
  refuseNextPayout: string | undefined;
  /** do the next POST to this path, then answer 500 as if the response were lost */
  loseResponseTo: string | undefined;
  private readonly idempotent = new Map<string, { status: number; body: Obj }>();
  private seq = 0;
  private server!: Server;
  port = 0;
  /** the clock the objects' `created` times come from (ms) */
  constructor(private now: () => number) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }

  get api() {
    return { host: '127.0.0.1', port: this.port, protocol: 'http' as const };
  }

  balanceOf(account = PLATFORM): number {
    return this.balances.get(account) ?? 0;
  }

  private id(prefix: string) {
    this.seq += 1;
    return `${prefix}_fake${String(this.seq).padStart(8, '0')}`;
  }

  private created() {
    return Math.floor(this.now() / 1000);
  }

  private move(from: string, to: string, amount: number) {
    this.balances.set(from, this.balanceOf(from) - amount);
    this.balances.set(to, this.balanceOf(to) + amount);
  }

  // ---- what the outside world does (the tests' controls) ----

  /** the payer pays: the intent succeeds and the money is in the platform's balance */
  succeed(piId: string): Obj {
    const pi = this.paymentIntents.get(piId)!;
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, latest_charge: this.id('ch') });
    this.balances.set(PLATFORM, this.balanceOf(PLATFORM) + pi.amount);
    return pi;
  }

  /** the payer pays on the hosted page: the session completes, paid */
  completeCheckout(csId: string): Obj {
    const cs = this.checkoutSessions.get(csId)!;
    Object.assign(cs, { status: 'complete', payment_status: 'paid', payment_intent: this.id('pi') });
    this.balances.set(PLATFORM, this.balanceOf(PLATFORM) + cs.amount_total);
    return cs;
  }

  /** nobody paid within the session's lifetime */
  expireCheckout(csId: string): Obj {
    const cs = this.checkoutSessions.get(csId)!;
    Object.assign(cs, { status: 'expired', url: null });
    return cs;
  }

  /** the card is declined: back to requires_payment_method with last_payment_error */
  decline(piId: string, declineCode = 'insufficient_funds'): Obj {
    const pi = this.paymentIntents.get(piId)!;
    Object.assign(pi, {
      status: 'requires_payment_method',
      last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'Your card was declined.' },
    });
    return pi;
  }

  /** the bank answers a payout: paid, or failed (its money back in the connected account) */
  settlePayout(account: string, poId: string, outcome: 'paid' | 'failed', failureCode = 'account_closed') {
    const po = this.payouts.get(account)!.get(poId)!;
    if (outcome === 'paid') Object.assign(po, { status: 'paid' });
    else {
      Object.assign(po, { status: 'failed', failure_code: failureCode, failure_message: 'The bank account has been closed.' });
      this.balances.set(account, this.balanceOf(account) + po.amount);
    }
    return po;
  }

  /** A Stripe event object around `object` (as webhooks deliver them). */
  event(type: string, object: Obj): Obj {
    return {
      id: this.id('evt'), object: 'event', api_version: '2025-10-29.clover', created: this.created(), livemode: false,
      pending_webhooks: 1, request: { id: null, idempotency_key: null }, type, data: { object: structuredClone(object) },
    };
  }

  // ---- the API ----

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const form = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : Buffer.concat(chunks).toString('utf8')));
    const account = header(req, 'stripe-account');
    const idempotencyKey = header(req, 'idempotency-key');
    this.requests.push({ method: req.method!, path: url.pathname, account, idempotencyKey, form });
    const send = (status: number, body: Obj) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': this.id('req') });
      res.end(JSON.stringify(body));
    };
    if (header(req, 'authorization') !== 'Bearer sk_test_fake') return send(401, stripeError('invalid_request_error', undefined, 'Invalid API Key provided'));
    if (this.down) return send(500, stripeError('api_error', undefined, 'An unknown error occurred'));
    const key = idempotencyKey && req.method === 'POST' ? `${account ?? PLATFORM}:${idempotencyKey}` : undefined;
    if (key && this.idempotent.has(key)) {
      const r = this.idempotent.get(key)!;
      return send(r.status, r.body);
    }
    const [status, body] = this.route(req.method!, url.pathname, form, account ?? PLATFORM);
    if (key && status < 500) this.idempotent.set(key, { status, body });
    if (req.method === 'POST' && this.loseResponseTo === url.pathname) {
      this.loseResponseTo = undefined;
      return send(500, stripeError('api_error', undefined, 'An unknown error occurred'));
    }
    send(status, body);
  }

  private route(method: string, path: string, f: Record<string, string>, account: string): [number, Obj] {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/payment_intents') {
      const amount = Number(f.amount);
      if (amount < 50) return [400, stripeError('invalid_request_error', 'amount_too_small', 'Amount must be at least $0.50 usd', 'amount')];
      if (amount > 99_999_999) return [400, stripeError('invalid_request_error', 'amount_too_large', 'Amount must be no more than $999,999.99', 'amount')];
      const id = this.id('pi');
      const pi = {
        id, object: 'payment_intent', amount, amount_capturable: 0, amount_received: 0, capture_method: 'automatic',
        client_secret: `${id}_secret_${this.id('s')}`, confirmation_method: 'automatic', created: this.created(), currency: f.currency,
        description: f.description ?? null, last_payment_error: null, cancellation_reason: null, latest_charge: null, livemode: false,
        metadata: metadata(f), payment_method: null, payment_method_types: ['card'], status: 'requires_payment_method',
        automatic_payment_methods: { enabled: f['automatic_payment_methods[enabled]'] === 'true' },
      };
      this.paymentIntents.set(id, pi);
      return [200, pi];
    }
    if (method === 'GET' && (m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) {
      const pi = this.paymentIntents.get(m[1]!);
      return pi ? [200, pi] : [404, stripeError('invalid_request_error', 'resource_missing', `No such payment_intent: '${m[1]}'`, 'intent')];
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const amount = Number(f['line_items[0][price_data][unit_amount]']) * Number(f['line_items[0][quantity]'] ?? 1);
      if (amount < 50) return [400, stripeError('invalid_request_error', 'amount_too_small', 'The Checkout Session\'s total amount due must add up to at least $0.50 usd', 'line_items')];
      const id = this.id('cs_test');
      const cs = {
        id, object: 'checkout.session', amount_subtotal: amount, amount_total: amount, cancel_url: f.cancel_url ?? null,
        client_reference_id: f.client_reference_id ?? null, created: this.created(), currency: f['line_items[0][price_data][currency]'],
        expires_at: this.created() + 86_400, livemode: false, metadata: metadata(f), mode: f.mode, payment_intent: null,
        payment_method_types: ['card'], payment_status: 'unpaid', status: 'open', success_url: f.success_url ?? null, ui_mode: 'hosted',
        url: `https://checkout.stripe.com/c/pay/${id}`,
      };
      this.checkoutSessions.set(id, cs);
      return [200, cs];
    }
    if (method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) {
      const cs = this.checkoutSessions.get(m[1]!);
      return cs ? [200, cs] : [404, stripeError('invalid_request_error', 'resource_missing', `No such checkout.session: '${m[1]}'`, 'session')];
    }
    if (method === 'GET' && path === '/v1/balance') {
      return [200, {
        object: 'balance', livemode: false,
        available: [{ amount: this.balanceOf(account), currency: 'usd', source_types: { card: this.balanceOf(account) } }],
        pending: [{ amount: 0, currency: 'usd', source_types: { card: 0 } }],
      }];
    }
    if (method === 'POST' && path === '/v1/transfers') {
      const amount = Number(f.amount);
      if (!this.accounts.has(f.destination!)) return [400, stripeError('invalid_request_error', 'resource_missing', `No such destination: '${f.destination}'`, 'destination')];
      if (this.balanceOf(PLATFORM) < amount) {
        return [400, stripeError('invalid_request_error', 'balance_insufficient', 'You have insufficient available funds in your Stripe account.')];
      }
      const id = this.id('tr');
      const t = {
        id, object: 'transfer', amount, amount_reversed: 0, balance_transaction: this.id('txn'), created: this.created(), currency: f.currency,
        description: f.description ?? null, destination: f.destination, destination_payment: this.id('py'), livemode: false, metadata: metadata(f),
        reversals: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/transfers/${id}/reversals` }, reversed: false,
        source_transaction: null, source_type: 'card', transfer_group: f.transfer_group ?? null,
      };
      this.transfers.set(id, t);
      this.move(PLATFORM, f.destination!, amount);
      return [200, t];
    }
    if (method === 'GET' && path === '/v1/transfers') {
      const data = [...this.transfers.values()].filter((t) => f.transfer_group === undefined || t.transfer_group === f.transfer_group).reverse();
      return [200, list('/v1/transfers', data)];
    }
    if (method === 'GET' && (m = /^\/v1\/transfers\/([^/]+)$/.exec(path))) {
      const t = this.transfers.get(m[1]!);
      return t ? [200, t] : [404, stripeError('invalid_request_error', 'resource_missing', `No such transfer: '${m[1]}'`, 'id')];
    }
    if (method === 'POST' && (m = /^\/v1\/transfers\/([^/]+)\/reversals$/.exec(path))) {
      const t = this.transfers.get(m[1]!);
      if (!t) return [404, stripeError('invalid_request_error', 'resource_missing', `No such transfer: '${m[1]}'`, 'id')];
      const amount = Number(f.amount ?? t.amount - t.amount_reversed);
      if (amount > t.amount - t.amount_reversed) return [400, stripeError('invalid_request_error', 'transfer_reversal_exceeds', 'The transfer has already been reversed')];
      if (this.balanceOf(t.destination) < amount) return [400, stripeError('invalid_request_error', 'balance_insufficient', 'Insufficient funds in the connected account to reverse the transfer')];
      const r = { id: this.id('trr'), object: 'transfer_reversal', amount, balance_transaction: this.id('txn'), created: this.created(), currency: t.currency, metadata: metadata(f), transfer: t.id, destination_payment_refund: this.id('pyr'), source_refund: null };
      t.amount_reversed += amount;
      t.reversed = t.amount_reversed >= t.amount;
      t.reversals.data.push(r);
      t.reversals.total_count += 1;
      this.move(t.destination, PLATFORM, amount);
      return [200, r];
    }
    if (method === 'POST' && path === '/v1/payouts') {
      const amount = Number(f.amount);
      if (this.refuseNextPayout === account) {
        this.refuseNextPayout = undefined;
        return [400, stripeError('invalid_request_error', 'no_external_account', 'This account has no external account in usd to pay out to.')];
      }
      if (this.balanceOf(account) < amount) return [400, stripeError('invalid_request_error', 'balance_insufficient', 'You have insufficient funds in your Stripe account for this transfer.')];
      const id = this.id('po');
      const po = {
        id, object: 'payout', amount, application_fee: null, application_fee_amount: null, arrival_date: this.created() + 2 * 86_400, automatic: false,
        balance_transaction: this.id('txn'), created: this.created(), currency: f.currency, description: f.description ?? null,
        destination: `ba_fake_${account}`, failure_balance_transaction: null, failure_code: null, failure_message: null, livemode: false,
        metadata: metadata(f), method: 'standard', original_payout: null, reconciliation_status: 'not_applicable', reversed_by: null,
        source_type: 'card', statement_descriptor: null, status: 'pending', type: 'bank_account',
      };
      if (!this.payouts.has(account)) this.payouts.set(account, new Map());
      this.payouts.get(account)!.set(id, po);
      this.balances.set(account, this.balanceOf(account) - amount);
      return [200, po];
    }
    if (method === 'GET' && path === '/v1/payouts') {
      const gte = f['created[gte]'] === undefined ? 0 : Number(f['created[gte]']);
      const data = [...(this.payouts.get(account)?.values() ?? [])].filter((p) => p.created >= gte).reverse();
      return [200, list('/v1/payouts', data)];
    }
    if (method === 'GET' && (m = /^\/v1\/payouts\/([^/]+)$/.exec(path))) {
      const po = this.payouts.get(account)?.get(m[1]!);
      return po ? [200, po] : [404, stripeError('invalid_request_error', 'resource_missing', `No such payout: '${m[1]}'`, 'id')];
    }
    return [404, stripeError('invalid_request_error', undefined, `Unrecognized request URL (${method}: ${path}).`)];
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function metadata(f: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m) out[m[1]!] = v;
  }
  return out;
}

const list = (url: string, data: Obj[]) => ({ object: 'list', data, has_more: false, url });

function stripeError(type: string, code: string | undefined, message: string, param?: string) {
  return { error: { type, message, ...(code ? { code, doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}` } : {}), ...(param ? { param } : {}) } };
}
