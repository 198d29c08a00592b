/**
 * `agentpay-sdk/buyer`: a fetch that pays. Runs in Node, browsers and edge runtimes (no
 * Node imports; `ca` only reaches the typed gateway client, which uses it on Node).
 *
 *   const buyer = createBuyer({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const res = await buyer.fetch('https://seller.example/forecast');
 *   res.receipt; // the verified, platform-signed receipt
 *
 * On a 402 it verifies the challenge against the platform key, refuses a challenge for
 * another capability than the call's `capabilityId`, a price above the ceiling (`maxPriceMinor`,
 * default DEFAULT_MAX_PRICE_MINOR = "100", 1.00 per call) and an
 * expired quote (nothing signed, nothing sent), signs a proof with
 * the agent's key, retries once with x-payment, and verifies the receipt against the
 * exact bytes received. Every refusal is an AgentpayError with the specification's code.
 */
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import { decodeHeader, encodeHeader, PAYMENT_HEADER, RECEIPT_HEADER, type PriceChallenge, type Receipt } from '../protocol.js';
import { cancelled, ceilingOf, createPayer, isAbort, type ApprovalWaitOptions, type Payer, type PayerOptions } from './payer.js';
import { offerOf, SessionPool, type BuyerSessionOptions, type Send, type SentAnswer } from './session-pool.js';
import { requestFingerprint } from '../seller/idempotency.js';
import type { Session, SessionReceipt } from '../contract/sessions.js';

export interface BuyerOptions extends PayerOptions {
  /** fetch for calling sellers (default: globalThis.fetch) */
  fetch?: typeof fetch;
  /**
   * Payment sessions (docs/sdk.md § Payment sessions): when a seller's 402 offers one, the first
   * call opens a session (its cap held on the wallet), later calls to that seller and capability
   * pay with vouchers the seller checks itself, a cap too low for the next call is topped up, and
   * `close()` closes them. Default: on (`prefer: 'session'`, a cap of 100 calls, topped up by as
   * much up to 10 times it, 1 hour); `{ prefer: 'per-call' }` turns them off.
   */
  sessions?: BuyerSessionOptions;
}

export type BuyerRequestInit = RequestInit & {
  /** ceiling for this call, overriding the buyer's */
  maxPriceMinor?: string | bigint;
  /**
   * the capability this call is meant to buy (e.g. the id found through discovery): a challenge
   * for any other is refused with CHALLENGE_MISMATCH before anything is signed
   */
  capabilityId?: string;
};

/** A seller's response; `receipt` is the verified receipt of a paid call, null for a free one. */
export type PaidResponse = Response & {
  receipt: Receipt | null;
  /** a call paid with a session's voucher: the seller-signed receipt, verified (null when the call failed and was not charged) */
  sessionReceipt?: SessionReceipt | null;
  /** the challenge that was paid, for a paid call */
  challenge: PriceChallenge | null;
};

export interface Purchase<T = unknown> {
  status: number;
  ok: boolean;
  headers: Headers;
  /** parsed JSON when the seller answered JSON, else text */
  body: T;
  receipt: Receipt | null;
  /** a call paid with a session's voucher: the seller-signed receipt */
  sessionReceipt?: SessionReceipt | null;
  response: PaidResponse;
}


export interface Buyer {
  readonly walletId: string;
  /** the protocol steps without a transport (challenge, proof, receipt, approvals): the MCP buyer uses them */
  readonly payer: Payer;
  fetch(input: string | URL | Request, init?: BuyerRequestInit): Promise<PaidResponse>;
  /**
   * fetch; if a policy holds the purchase for a person (APPROVAL_REQUIRED), wait for the
   * decision and, once approved, retry once. A denial throws APPROVAL_DENIED.
   */
  fetchWithApproval(input: string | URL | Request, init: BuyerRequestInit | undefined, wait: ApprovalWaitOptions): Promise<PaidResponse>;
  /** fetch, then read the body (JSON or text) */
  buy<T = unknown>(input: string | URL | Request, init?: BuyerRequestInit): Promise<Purchase<T>>;
  /** The payment sessions open now (opened by this buyer): id, cap (raised by top-ups), what the receipts charged, calls in flight, top-ups. */
  sessions(): { sessionId: string; capMinor: string; settledMinor: string; inFlight: number; topUps: number }[];
  /**
   * Closes every payment session this buyer opened, once its calls in flight are done: each seller
   * claims what it served and closes the session, and the rest of each cap goes back to the wallet.
   * Answers the sessions closed (as the gateway shows them). Later calls open new sessions.
   */
  close(): Promise<Session[]>;
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

const isRequest = (input: unknown): input is Request => typeof Request !== 'undefined' && input instanceof Request;

/**
 * A request that can be sent twice: a Request or a streamed body is read once, up front. A
 * Request's own signal counts like `init.signal` (init wins, as in fetch).
 */
async function replayable(input: string | URL | Request, init: RequestInit): Promise<{ url: string; init: RequestInit }> {
  if (isRequest(input)) {
    const method = init.method ?? input.method;
    const headers = new Headers(input.headers);
    new Headers(init.headers).forEach((v, k) => headers.set(k, v));
    let body = init.body;
    if (body === undefined && input.body !== null && method !== 'GET' && method !== 'HEAD') body = await input.arrayBuffer();
    return { url: input.url, init: { ...init, method, headers, signal: init.signal ?? input.signal, ...(body !== undefined ? { body } : {}) } };
  }
  const body = typeof ReadableStream !== 'undefined' && init.body instanceof ReadableStream ? await new Response(init.body).arrayBuffer() : init.body;
  return { url: String(input), init: { ...init, ...(body !== undefined ? { body } : {}) } };
}

/** What a paid call that got no answer may have done: the REST and MCP buyers say it alike. */
/** No deadline in it: the hold's expiry is on an authorization the buyer never sees, and the gateway sets it. */
export const PAID_BUT_UNANSWERED = 'the call may have been paid (see the wallet\'s receipts), and a hold on the wallet may last until the seller settles it or the gateway releases it when the authorization expires. Do not resend the proof';

/**
 * A request to the seller got no (whole) answer: refused, reset, DNS, TLS. fetch says so with a
 * TypeError in every runtime (also for a body cut off); anything else (the caller's abort, a custom
 * fetch's own error) is passed on as is. `paid`: the proof had been sent, so the seller may have
 * authorized, and even completed, the call.
 */
function unreachable(url: string, error: unknown, paid: boolean): unknown {
  if (!(error instanceof TypeError)) return error;
  const what = paid
    ? `after the payment proof was sent: ${PAID_BUT_UNANSWERED}`
    : 'before any payment proof was sent; nothing was charged, retry freely';
  return new AgentpayError('SELLER_UNREACHABLE', `could not reach the seller at ${url} ${what}`, { details: { url, paid }, cause: error });
}

/** Options not given are read from the environment (PayerOptions): after `eval "$(npx agentpay dev env --role buyer)"`, createBuyer() needs none. */
export function createBuyer(opts: BuyerOptions = {}): Buyer {
  const payer = createPayer(opts);
  const sellerFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const pool = new SessionPool(payer, opts.sessions ?? {}, opts.now ?? Date.now);
  /** which capability (and its last challenge) a route sells, learned from its 402: a later call with a session open skips the 402 */
  const routes = new Map<string, PriceChallenge>();
  const routeKey = (method: string, url: URL) => `${method} ${url.origin}${url.pathname}`;

  /** The request again with headers added, its exact answer bytes read; no redirect followed (a paid call's). */
  const sender = (url: string, init: RequestInit): Send => async (extra) => {
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(extra)) headers.set(k, v);
    headers.set('accept-encoding', 'identity');
    const { signal: _s, ...rest } = init;
    const res = await sellerFetch(url, { ...rest, headers, redirect: 'manual' }).catch((e: unknown) => { throw unreachable(url, e, true); });
    const bytes = new Uint8Array(await res.arrayBuffer().catch((e: unknown) => { throw unreachable(url, e, true); }));
    return { status: res.status, header: (n) => res.headers.get(n), bytes, response: res } as SentAnswer & { response: Response };
  };

  /** A call paid with a session, as a PaidResponse; null: pay it per-call. */
  async function bySession(url: string, init: RequestInit, challenge: PriceChallenge): Promise<PaidResponse | null> {
    const u = new URL(url);
    const method = (init.method ?? 'GET').toUpperCase();
    const requestHash = await requestFingerprint(method, u.pathname + u.search);
    const { body: _b, ...bodiless } = init;
    const paid = await pool.pay({ origin: u.origin, challenge, requestHash, send: sender(url, init), closer: sender(url, { ...bodiless, method }) });
    if (!paid) return null;
    routes.set(routeKey(method, u), challenge);
    const res = (paid.answer as SentAnswer & { response: Response }).response;
    const out = new Response(NULL_BODY_STATUS.has(res.status) ? null : (paid.answer.bytes as Uint8Array<ArrayBuffer>), { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, 'url', { value: res.url || url });
    return Object.assign(out, { receipt: null, challenge, sessionReceipt: paid.receipt });
  }

  async function verifiedChallenge(text: string): Promise<PriceChallenge | null> {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return null; // not the protocol's 402
    }
    return payer.verifiedChallenge(body);
  }

  async function verifiedReceipt(header: string | null, bytes: Uint8Array, challenge: PriceChallenge): Promise<Receipt | null> {
    if (header === null) return null;
    let r: unknown;
    try {
      r = decodeHeader(header);
    } catch {
      throw new AgentpayError('INVALID_RECEIPT', `the seller's receipt header ${RECEIPT_HEADER} is not base64url JSON`, { body: { receipt: undefined } });
    }
    return payer.verifiedReceipt(r, bytes, challenge);
  }

  async function payingFetch(input: string | URL | Request, init: BuyerRequestInit = {}): Promise<PaidResponse> {
    const { maxPriceMinor, capabilityId, ...rest } = init;
    if ((rest.signal ?? (isRequest(input) ? input.signal : undefined))?.aborted) throw cancelled();
    if (maxPriceMinor !== undefined) ceilingOf(maxPriceMinor, 'maxPriceMinor');
    const req = await replayable(input, rest);
    const signal = req.init.signal ?? undefined;

    const beforeProof = (e: unknown): never => {
      throw isAbort(e) || signal?.aborted ? cancelled() : e;
    };
    const unanswered = (e: unknown): never => beforeProof(unreachable(req.url, e, false));
    // a route whose seller has a session open with this buyer: straight to a voucher, no 402 first
    const method = (req.init.method ?? 'GET').toUpperCase();
    const known = method === 'HEAD' ? undefined : routes.get(routeKey(method, new URL(req.url)));
    if (known && pool.has(new URL(req.url).origin, known.capabilityId) && (capabilityId === undefined || capabilityId === known.capabilityId)) {
      const paid = await bySession(req.url, req.init, known);
      if (paid) return paid;
    }
    const first = await sellerFetch(req.url, req.init).catch(unanswered);
    if (first.status !== 402) return Object.assign(first, { receipt: null, challenge: null });
    const text = await first.text().catch(unanswered);
    const challenge = await verifiedChallenge(text).catch(beforeProof);
    if (!challenge) return Object.assign(new Response(text, { status: 402, statusText: first.statusText, headers: first.headers }), { receipt: null, challenge: null });
    const paidUrlOfSession = first.url || req.url;
    let offered;
    try {
      offered = offerOf(JSON.parse(text), challenge);
    } catch {
      offered = undefined;
    }
    if (method !== 'HEAD' && pool.wants(offered, new URL(paidUrlOfSession).origin)) {
      // the same checks as a proof's, before a session is opened for this capability
      payer.checkChallenge?.(challenge, { maxPriceMinor, capabilityId });
      if (signal?.aborted) throw cancelled();
      const paid = await bySession(paidUrlOfSession, req.init, challenge);
      if (paid) return paid;
    }

    const proof = await payer.signProof(challenge, { maxPriceMinor, signal, capabilityId });

    // From here the purchase proceeds: the signal no longer applies (docs/protocol.md).
    const headers = new Headers(req.init.headers);
    headers.set(PAYMENT_HEADER, encodeHeader(proof));
    // The receipt covers the bytes the seller sent: ask for them uncompressed, so that a seller
    // compressing after it hashed cannot make them differ from what fetch hands back decoded.
    // Browsers do not let a page set this header (they drop it) and decide for themselves.
    headers.set('accept-encoding', 'identity');
    const { signal: _s, ...paidInit } = req.init;
    // The proof goes to the URL that quoted it (where the first request ended up after any
    // redirects), and a redirect of the paid call is not followed: the seller completed the
    // call on its 3xx, whose receipt is returned, and following would send the proof again.
    const paidUrl = first.url || req.url;
    const afterProof = (e: unknown): never => {
      throw unreachable(paidUrl, e, true);
    };
    const res = await sellerFetch(paidUrl, { ...paidInit, headers, redirect: 'manual' }).catch(afterProof);
    const bytes = new Uint8Array(await res.arrayBuffer().catch(afterProof));
    const receipt = await verifiedReceipt(res.headers.get(RECEIPT_HEADER), bytes, challenge);
    if (!receipt && res.status >= 400) {
      // refused before the handler ran: the gateway's envelope, passed through by the seller
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        body = undefined;
      }
      throw toError({ status: res.status, headers: res.headers, body });
    }
    const out = new Response(NULL_BODY_STATUS.has(res.status) ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, 'url', { value: res.url });
    return Object.assign(out, { receipt, challenge });
  }

  async function fetchWithApproval(input: string | URL | Request, init: BuyerRequestInit = {}, wait: ApprovalWaitOptions): Promise<PaidResponse> {
    const { maxPriceMinor, capabilityId, ...rest } = init;
    // read a Request or streamed body once, so the retry can send it again
    const req = await replayable(input, rest);
    const again = () => payingFetch(req.url, { ...req.init, ...(maxPriceMinor !== undefined ? { maxPriceMinor } : {}), ...(capabilityId !== undefined ? { capabilityId } : {}) });
    return payer.withApproval(again, wait, rest.signal ?? undefined);
  }

  return {
    walletId: payer.walletId,
    payer,
    fetch: payingFetch,
    fetchWithApproval,
    async buy<T = unknown>(input: string | URL | Request, init?: BuyerRequestInit): Promise<Purchase<T>> {
      const response = await payingFetch(input, init);
      const text = await response.text();
      let body: unknown = text;
      if ((response.headers.get('content-type') ?? '').includes('json') && text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      return { status: response.status, ok: response.ok, headers: response.headers, body: body as T, receipt: response.receipt, ...(response.sessionReceipt !== undefined ? { sessionReceipt: response.sessionReceipt } : {}), response };
    },
    sessions: () => pool.sessions(),
    close: () => pool.closeAll(),
  };
}

export { AgentpayError } from '../errors.js';
export type { PaymentProof, PriceChallenge, Receipt, UnsignedPaymentProof } from '../protocol.js';
export { DEFAULT_SESSION_CALLS, DEFAULT_SESSION_EXPIRES_MS, type BuyerSessionOptions } from './session-pool.js';
export type { Session, SessionReceipt } from '../contract/sessions.js';
export { createPayer, DEFAULT_MAX_PRICE_MINOR, type ApprovalWaitOptions, type Payer, type PayerOptions, type ProofSigner } from './payer.js';
export { RECEIPT_HEADER, PAYMENT_HEADER, responseHash, decodeHeader, encodeHeader } from '../protocol.js';
