/**
 * The buyer's payment sessions inside the stock clients' plug-ins (x402.ts: scheme
 * `batch-settlement`; mppx.ts: intent `session`), docs/protocol.md § Sessions in the other
 * dialects. The stock client does the sending; this keeps the sessions: the first 402 of a seller
 * and capability gets an open (signed by the wallet's key), the corrective 402 that answers it
 * brings the grant, and every later call is paid with a voucher of the session key
 * (buyer/session.ts signs them). A corrective 402 of a refused voucher is resynced from, a session
 * whose cap is spent is retired and another opened, and `closeAll` closes them at the seller (the
 * rest of each cap goes back to the wallet).
 *
 * What arrives is taken in by `received` (the checking fetch, with the exact bytes) or by the x402
 * response hook (without them); each step is idempotent, so both may see the same answer.
 *
 * No Node imports; nothing from @x402 or mppx.
 */
import { AgentpayError } from '../errors.js';
import { responseHash, type PriceChallenge } from '../protocol.js';
import { verifyObject } from '../signing.js';
import { requestFingerprint } from '../seller/idempotency.js';
import type { Payer } from '../buyer/payer.js';
import { openRequest, type BuyerSession, type PendingSession } from '../buyer/session.js';
import type { Session, SessionGrant, SessionOpen, SessionReceipt, Voucher } from '../contract/sessions.js';
import {
  AGENTPAY_SESSION_INTENT, readSessionCredential, sessionDetailsOf, X402_SESSION_SCHEME, type SessionDetails, type SessionStep,
} from './session-wire.js';
import {
  AGENTPAY_SCHEME, AUTHORIZATION_HEADER, X402_PAYMENT_SIGNATURE_HEADER, decodePaymentReceipt, decodePaymentRequest, decodeX402Header, parsePaymentChallenges, PAYMENT_RECEIPT_HEADER, WWW_AUTHENTICATE_HEADER,
  X402_PAYMENT_REQUIRED_HEADER, X402_PAYMENT_RESPONSE_HEADER, type X402PaymentRequired, type X402SettlementResponse,
} from './wire.js';

export interface SessionPluginOptions {
  /** the cap of each session opened, minor units (default: 100 calls at the quoted price); held on the wallet while it is open */
  capMinor?: string | bigint;
  /** how long a session lasts, ms (default 1 hour; at most 30 days) */
  expiresInMs?: number;
  /** how long a call waits for another call's open of the same session, ms (default 30 000) */
  openWaitMs?: number;
  now?: () => number;
}

export const DEFAULT_PLUGIN_SESSION_CALLS = 100n;

/** The request header (name, value) that carries a session step in a plug-in's dialect, for a route paid before. */
export type StraightEncoder = (step: SessionStep, echo: Record<string, unknown> | undefined, where: { url: string; method: string }) => [string, string];

interface Live {
  key: string;
  session: BuyerSession;
  price: bigint;
  /** what the receipts of finished calls charged */
  settled: bigint;
  /** the price of each call in flight, by its voucher's sequence */
  inFlight: Map<number, bigint>;
  /** after a corrective 402: what the seller served so far; the next voucher covers it plus its call */
  hint: bigint;
  retired: boolean;
  /** the seller no longer knows it: nothing to close there */
  dead: boolean;
  /** where the close goes: the last route paid with it */
  where?: { url: string; method: string };
  /** the dialect's echo for the close: x402's accepted entry, or the Payment challenge */
  echo?: Record<string, unknown>;
}

interface Pending {
  key: string;
  pending: PendingSession;
  price: bigint;
  resolve: (l: Live) => void;
  reject: (e: unknown) => void;
  promise: Promise<Live>;
}

/** The session details of a 402 in either dialect (x402: the batch-settlement entry's extra; Payment: the session challenge's methodDetails). */
export function sessionDetailsOfResponse(headers: Headers): SessionDetails | undefined {
  const required = headers.get(X402_PAYMENT_REQUIRED_HEADER);
  if (required) {
    try {
      const r = decodeX402Header<X402PaymentRequired>(required);
      for (const a of r.accepts ?? []) if (a.scheme === X402_SESSION_SCHEME) return sessionDetailsOf(a.extra);
    } catch {
      // not decodable: no details
    }
  }
  const auth = headers.get(WWW_AUTHENTICATE_HEADER);
  if (auth) {
    for (const c of parsePaymentChallenges(auth)) {
      if (c.method !== AGENTPAY_SCHEME || c.intent !== AGENTPAY_SESSION_INTENT || !c.request) continue;
      try {
        return sessionDetailsOf(decodePaymentRequest<{ methodDetails?: unknown }>(c.request).methodDetails);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The seller-signed session receipt of an answer (PAYMENT-RESPONSE `extra.sessionReceipt`, or Payment-Receipt `sessionReceipt`). */
export function sessionReceiptOfResponse(headers: Headers): SessionReceipt | undefined {
  const x = headers.get(X402_PAYMENT_RESPONSE_HEADER);
  if (x) {
    try {
      return decodeX402Header<X402SettlementResponse>(x).extra?.sessionReceipt as SessionReceipt | undefined;
    } catch {
      throw new AgentpayError('INVALID_RECEIPT', 'the seller\'s PAYMENT-RESPONSE is not decodable');
    }
  }
  const p = headers.get(PAYMENT_RECEIPT_HEADER);
  if (p) {
    try {
      return (decodePaymentReceipt(p) as unknown as { sessionReceipt?: SessionReceipt }).sessionReceipt;
    } catch {
      throw new AgentpayError('INVALID_RECEIPT', 'the seller\'s Payment-Receipt is not decodable');
    }
  }
  return undefined;
}

const urlOf = (input: Parameters<typeof fetch>[0]): string => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
const methodOf = (input: Parameters<typeof fetch>[0], init?: RequestInit): string =>
  (init?.method ?? (typeof Request !== 'undefined' && input instanceof Request ? input.method : 'GET')).toUpperCase();
function headersOf(input: Parameters<typeof fetch>[0], init?: RequestInit): Headers {
  if (init?.headers) return new Headers(init.headers);
  if (typeof Request !== 'undefined' && input instanceof Request) return input.headers;
  return new Headers();
}

export class DialectSessions {
  private readonly live = new Map<string, Live>();
  private readonly byId = new Map<string, Live>();
  private readonly pending = new Map<string, Pending>();
  /** the routes (method and URL) a session paid: their next call carries a voucher straight away */
  private readonly routes = new Map<string, Live>();
  private readonly now: () => number;

  constructor(private readonly payer: Payer, private readonly opts: SessionPluginOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  private keyOf(c: { providerId: string; capabilityId: string | null }): string {
    return `${c.providerId} ${c.capabilityId ?? '*'}`;
  }

  /** The sessions open now. */
  sessions(): { sessionId: string; capMinor: string; settledMinor: string; inFlight: number }[] {
    return [...this.byId.values()].filter((l) => !l.dead).map((l) => ({ sessionId: l.session.sessionId, capMinor: l.session.grant.capMinor, settledMinor: l.settled.toString(), inFlight: l.inFlight.size }));
  }

  /**
   * The step that pays the call a 402 answers: an open (no session for this seller and
   * capability yet, or its cap is spent), else the next voucher. `challenge`: the platform-signed
   * price, verified by the caller (absent in a corrective 402, which names the session instead).
   */
  async step(challenge: PriceChallenge | undefined, details: SessionDetails, echo?: Record<string, unknown>): Promise<SessionStep> {
    if (details.grant) await this.granted(details.grant);
    let live = details.channelId ? this.byId.get(details.channelId) : undefined;
    if (live?.retired) live = undefined;
    if (!live && challenge) {
      const key = this.keyOf(challenge);
      live = this.live.get(key);
      if (!live) {
        const p = this.pending.get(key);
        if (!p) return { kind: 'open', open: await this.openFor(challenge) };
        live = await p.promise; // another call is opening it
      }
    }
    if (!live) throw new AgentpayError('SESSION_NOT_FOUND', `the seller's session 402 names session ${details.channelId ?? '(none)'}, which this client does not hold, and carries no signed price to open another; nothing was signed`);
    if (challenge) live.price = BigInt(challenge.amountMinor);
    const voucher = await this.voucherOf(live, details.requestHash);
    if (!voucher) {
      if (!challenge) throw new AgentpayError('VOUCHER_ABOVE_CAP', `session ${live.session.sessionId} cannot pay this call; the next call opens another`);
      const { channelId: _id, grant: _grant, ...fresh } = details;
      return this.step(challenge, fresh, echo);
    }
    if (echo) live.echo = echo;
    return { kind: 'voucher', voucher };
  }

  /** The next voucher of a session: covers what was charged, what is in flight and this call; undefined (the session retired) when the cap or the expiry cannot take it. */
  private async voucherOf(live: Live, requestHash: string): Promise<Voucher | undefined> {
    let others = 0n;
    for (const p of live.inFlight.values()) others += p;
    const need = live.settled + others + live.price;
    const cumulative = need > live.hint + live.price ? need : live.hint + live.price;
    if (cumulative > BigInt(live.session.grant.capMinor) || this.now() >= Date.parse(live.session.grant.expiresAt)) {
      this.retire(live);
      return undefined;
    }
    live.hint = 0n;
    const voucher = await live.session.voucherAt(cumulative, requestHash);
    live.inFlight.set(voucher.sequence, live.price);
    return voucher;
  }

  /** A voucher for a route a session paid before (no 402 first), with the dialect echo to send it with; undefined when there is none to use. */
  private async straightVoucher(where: { url: string; method: string }): Promise<{ step: SessionStep; echo: Record<string, unknown> | undefined } | undefined> {
    const key = `${where.method} ${where.url}`;
    const live = this.routes.get(key);
    if (!live) return undefined;
    if (live.retired || live.dead) {
      this.routes.delete(key);
      return undefined;
    }
    const u = new URL(where.url);
    const voucher = await this.voucherOf(live, await requestFingerprint(where.method, u.pathname + u.search));
    return voucher ? { step: { kind: 'voucher', voucher }, echo: live.echo } : undefined;
  }

  private async openFor(c: PriceChallenge): Promise<SessionOpen> {
    const sign = this.payer.signWithWalletKey;
    if (!sign || !this.payer.platformKey) throw new AgentpayError('VALIDATION_FAILED', 'paying with sessions needs the wallet\'s key (privateKeyPem): it signs the open request', { details: { field: 'privateKeyPem' } });
    const price = BigInt(c.amountMinor);
    const cap = this.opts.capMinor !== undefined ? BigInt(this.opts.capMinor) : price * DEFAULT_PLUGIN_SESSION_CALLS;
    if (cap < price || price <= 0n) throw new AgentpayError('VOUCHER_ABOVE_CAP', `a session cap of ${cap} cannot pay one call of ${price}`);
    const { open, session: pending } = await openRequest({
      walletId: this.payer.walletId, sign: (u) => sign(u as unknown as Record<string, unknown>), providerId: c.providerId, capabilityId: c.capabilityId,
      capMinor: cap.toString(), currency: c.currency, expiresAt: new Date(this.now() + (this.opts.expiresInMs ?? 60 * 60 * 1000)).toISOString(), now: this.now,
    });
    const key = this.keyOf(c);
    let resolve!: (l: Live) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<Live>((res, rej) => { resolve = res; reject = rej; });
    promise.catch(() => {}); // a waiter sees it; nobody else must
    const p: Pending = { key, pending, price, resolve, reject, promise };
    this.pending.set(open.sessionPublicKey, p);
    this.pending.set(key, p);
    const timer = setTimeout(() => this.openFailed(open, new AgentpayError('SESSION_NOT_FOUND', 'the seller did not answer the session open with a grant in time')), this.opts.openWaitMs ?? 30_000);
    (timer as { unref?: () => void }).unref?.();
    void promise.then(() => clearTimeout(timer), () => clearTimeout(timer));
    return open;
  }

  /** The grant of an open (a corrective 402): checked against the platform key and the open signed; idempotent. */
  async granted(grant: SessionGrant): Promise<void> {
    if (this.byId.has(grant.sessionId)) return;
    const p = this.pending.get(grant.sessionPublicKey);
    if (!p) return; // not an open of this client (or taken in already)
    const pem = await this.payer.platformKey!(grant.signingKeyId);
    if (this.byId.has(grant.sessionId)) return;
    try {
      if (!pem) throw new AgentpayError('INVALID_GRANT', `the grant of session ${grant.sessionId} names an unknown platform key ${grant.signingKeyId}`);
      const session = await p.pending.start(grant, pem);
      const live: Live = { key: p.key, session, price: p.price, settled: 0n, inFlight: new Map(), hint: 0n, retired: false, dead: false };
      this.byId.set(grant.sessionId, live);
      this.live.set(p.key, live);
      p.resolve(live);
    } catch (e) {
      p.reject(e);
      throw e;
    } finally {
      this.pending.delete(grant.sessionPublicKey);
      if (this.pending.get(p.key) === p) this.pending.delete(p.key);
    }
  }

  /** The seller did not open it (a refusal, or no answer in time): calls waiting for it fail, the next call opens again. */
  openFailed(open: SessionOpen, error: unknown): void {
    const p = this.pending.get(open.sessionPublicKey);
    if (!p) return;
    this.pending.delete(open.sessionPublicKey);
    if (this.pending.get(p.key) === p) this.pending.delete(p.key);
    p.reject(error);
  }

  private retire(live: Live): void {
    live.retired = true;
    if (this.live.get(live.key) === live) this.live.delete(live.key);
  }

  /** A voucher refused with a corrective 402: resync from the seller's state (overtaken), or retire the session (unknown, closed, expired, cap). Idempotent. */
  refused(voucher: Voucher, details: SessionDetails | undefined): boolean {
    const live = this.byId.get(voucher.sessionId);
    if (!live || !live.inFlight.has(voucher.sequence)) return false;
    live.inFlight.delete(voucher.sequence);
    const state = details?.channelState;
    if (details?.refusal === 'VOUCHER_STALE' && state && state.sessionId === voucher.sessionId && BigInt(state.spentMinor) <= BigInt(state.cumulativeMinor)) {
      // overtaken by a later voucher: the next one covers what the seller served plus its call
      live.hint = BigInt(state.spentMinor);
      return true;
    }
    if (details?.refusal === 'SESSION_NOT_FOUND' || details?.refusal === 'SESSION_CLOSED' || details?.refusal === 'SESSION_EXPIRED') live.dead = true;
    this.retire(live);
    return true;
  }

  /**
   * A voucher's answer (not a 402): the seller-signed receipt, checked against the grant's key
   * (and the bytes received, when given), counts what it charged; a failure charged nothing.
   * Throws INVALID_RECEIPT for a receipt that does not check. Idempotent.
   */
  async answered(voucher: Voucher, status: number, receipt: SessionReceipt | undefined, bytes: Uint8Array | null, where?: { url: string; method: string }): Promise<void> {
    const live = this.byId.get(voucher.sessionId);
    if (!live || !live.inFlight.has(voucher.sequence)) return;
    const price = live.inFlight.get(voucher.sequence)!;
    live.inFlight.delete(voucher.sequence);
    if (where) {
      live.where = where;
      if (status < 400) this.routes.set(`${where.method} ${where.url}`, live);
    }
    if (receipt === undefined) {
      // a failure charged nothing; a success without a receipt is counted as charged
      live.settled += status >= 400 ? 0n : price;
      return;
    }
    const ok = receipt.sessionId === voucher.sessionId && receipt.sequence === voucher.sequence
      && (bytes === null || receipt.responseHash === (await responseHash(bytes)))
      && (await verifyObject(live.session.grant.sellerPublicKey, receipt as unknown as Record<string, unknown>));
    if (!ok) {
      live.settled += price;
      throw new AgentpayError('INVALID_RECEIPT', `the seller's session receipt is not signed by the key the grant of session ${voucher.sessionId} names, or does not cover the call or the bytes received`, { body: { receipt } });
    }
    const charged = BigInt(receipt.chargedMinor);
    live.settled += charged < price ? charged : price;
  }

  /** Takes in the answer to a request that carried a session step (the checking fetch): the grant of an open, a refusal, a receipt. */
  async received(step: SessionStep, res: Response, where: { url: string; method: string }): Promise<void> {
    if (step.kind === 'open') {
      const details = res.status === 402 ? sessionDetailsOfResponse(res.headers) : undefined;
      if (details?.grant) await this.granted(details.grant);
      else this.openFailed(step.open, new AgentpayError('SESSION_NOT_FOUND', `the seller answered the session open with ${res.status} and no grant`, { status: res.status }));
      const live = details?.grant ? this.byId.get(details.grant.sessionId) : undefined;
      if (live) live.where = where;
      return;
    }
    if (step.kind !== 'voucher') return;
    if (res.status === 402) {
      this.refused(step.voucher, sessionDetailsOfResponse(res.headers));
      return;
    }
    const receipt = sessionReceiptOfResponse(res.headers);
    const bytes = receipt ? new Uint8Array(await res.clone().arrayBuffer()) : null;
    await this.answered(step.voucher, res.status, receipt, bytes, where);
  }

  /**
   * A fetch for the stock client to send through: it reads the session step of each request it
   * sends and takes in the answer (grant, corrective state, the receipt checked against the exact
   * bytes). Requests without a session step go to `inner` as they are.
   */
  fetch(inner: typeof fetch = globalThis.fetch, straight?: StraightEncoder): typeof fetch {
    return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const where = { url: urlOf(input), method: methodOf(input, init) };
      const headers = headersOf(input, init);
      const read = readSessionCredential((n) => headers.get(n) ?? undefined);
      const unpaid = !headers.has('x-payment') && !headers.has(X402_PAYMENT_SIGNATURE_HEADER) && !headers.has(AUTHORIZATION_HEADER);
      const pre = straight && unpaid ? await this.straightVoucher(where) : undefined;
      if (pre) {
        // a route this session paid before: its voucher goes with the first request, no 402 (and no gateway challenge) first
        const [name, value] = straight!(pre.step, pre.echo, where);
        const spare = typeof Request !== 'undefined' && input instanceof Request ? input.clone() : input;
        const paidInit = { ...init, headers: (() => { const h = new Headers(headers); h.set(name, value); return h; })() };
        const sendInput = typeof Request !== 'undefined' && input instanceof Request ? new Request(input, { headers: paidInit.headers }) : input;
        const res = await inner(sendInput, typeof Request !== 'undefined' && input instanceof Request ? init : paidInit);
        await this.received(pre.step, res, where);
        // refused (the session unknown, spent, or overtaken): the call goes as the stock client sent it, for a fresh 402
        return res.status === 402 ? inner(spare, init) : res;
      }
      const res = await inner(input, init);
      if (read?.kind === 'step') await this.received(read.step, res, where);
      return res;
    }) as typeof fetch;
  }

  /**
   * Closes every session at its seller (the route last paid with it): the seller claims what it
   * served and closes the session at the gateway; the rest of each cap goes back to the wallet.
   * `send` carries the close in the plug-in's dialect. Answers the sessions closed; throws the
   * first failure after trying them all.
   */
  async closeAll(send: (where: { url: string; method: string }, step: SessionStep, echo: Record<string, unknown> | undefined) => Promise<Response>): Promise<Session[]> {
    const closed: Session[] = [];
    const errors: unknown[] = [];
    for (const live of [...this.byId.values()]) {
      this.retire(live);
      this.byId.delete(live.session.sessionId);
      if (live.dead || !live.where) continue;
      try {
        const close = await live.session.closeRequest();
        const res = await send(live.where, { kind: 'close', close }, live.echo);
        const body = (await res.json().catch(() => null)) as { session?: Session; error?: { code?: string; message?: string } } | null;
        if (res.status !== 200 || !body?.session) throw new AgentpayError(body?.error?.code ?? 'SESSION_NOT_FOUND', `the seller answered the close of session ${live.session.sessionId} with ${res.status}: ${body?.error?.message ?? ''}`, { status: res.status });
        closed.push(body.session);
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length > 0) throw errors[0];
    return closed;
  }
}
