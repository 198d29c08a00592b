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

export interface BuyerOptions extends PayerOptions {
  /** fetch for calling sellers (default: globalThis.fetch) */
  fetch?: typeof fetch;
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
    const first = await sellerFetch(req.url, req.init).catch(unanswered);
    if (first.status !== 402) return Object.assign(first, { receipt: null, challenge: null });
    const text = await first.text().catch(unanswered);
    const challenge = await verifiedChallenge(text).catch(beforeProof);
    if (!challenge) return Object.assign(new Response(text, { status: 402, statusText: first.statusText, headers: first.headers }), { receipt: null, challenge: null });

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
      return { status: response.status, ok: response.ok, headers: response.headers, body: body as T, receipt: response.receipt, response };
    },
  };
}

export { AgentpayError } from '../errors.js';
export type { PaymentProof, PriceChallenge, Receipt, UnsignedPaymentProof } from '../protocol.js';
export { createPayer, DEFAULT_MAX_PRICE_MINOR, type ApprovalWaitOptions, type Payer, type PayerOptions, type ProofSigner } from './payer.js';
export { RECEIPT_HEADER, PAYMENT_HEADER, responseHash, decodeHeader, encodeHeader } from '../protocol.js';
