/**
 * `agentpay/buyer`: a fetch that pays. Runs in Node, browsers and edge runtimes (no
 * Node imports; `ca` only reaches the typed gateway client, which uses it on Node).
 *
 *   const buyer = createBuyer({ gatewayUrl, walletId, privateKeyPem, maxPriceMinor: '500' });
 *   const res = await buyer.fetch('https://seller.example/forecast');
 *   res.receipt; // the verified, platform-signed receipt
 *
 * On a 402 it verifies the challenge against the platform key, refuses a price above
 * the ceiling and an expired quote (nothing signed, nothing sent), signs a proof with
 * the agent's key, retries once with x-payment, and verifies the receipt against the
 * exact bytes received. Every refusal is an AgentpayError with the specification's code.
 */
import { AgentpayClient } from '../client/index.js';
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import {
  decodeHeader,
  encodeHeader,
  isPriceChallenge,
  isReceipt,
  PAYMENT_HEADER,
  RECEIPT_HEADER,
  responseHash,
  type PaymentProof,
  type PriceChallenge,
  type Receipt,
  type UnsignedPaymentProof,
} from '../protocol.js';
import { signObject, verifyObject } from '../signing.js';

/** Signs the canonical proof (without `signature`) with the agent's key; returns base64 ed25519. */
export type ProofSigner = (proof: UnsignedPaymentProof) => Promise<string> | string;

export interface BuyerOptions {
  /** the gateway that issues challenges and receipt keys */
  gatewayUrl: string;
  /** PEM of a CA to trust for the gateway (Node only) */
  ca?: string;
  /** the agent wallet that pays */
  walletId: string;
  /** the agent's ed25519 private key (PKCS#8 PEM), registered on the wallet by its public half */
  privateKeyPem?: string;
  /** or a signer, e.g. backed by a KMS or a hardware key */
  signer?: ProofSigner;
  /** the most this buyer pays for one call, in minor units; no limit when absent */
  maxPriceMinor?: string | bigint;
  /** fetch for calling sellers (default: globalThis.fetch) */
  fetch?: typeof fetch;
  /** clock for the expiry check (tests) */
  now?: () => number;
}

export type BuyerRequestInit = RequestInit & {
  /** ceiling for this call, overriding the buyer's */
  maxPriceMinor?: string | bigint;
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

/** How `fetchWithApproval` waits for a person's decision on a held purchase. */
export interface ApprovalWaitOptions {
  /** a client whose key holds approvals:read (the agent preset does): it reads the approval's status */
  approvals: AgentpayClient;
  /** how often to look, default 2000 ms */
  pollMs?: number;
  /** how long to wait for a decision, default 10 minutes; then APPROVAL_REQUIRED is thrown as it came */
  timeoutMs?: number;
  /** stops the wait (CANCELLED; nothing charged); default: init.signal */
  signal?: AbortSignal;
  /** told the approval id once the purchase is held, e.g. to ask a person */
  onPending?: (approvalId: string) => void;
}

export interface Buyer {
  readonly walletId: string;
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

function cancelled(): AgentpayError {
  return new AgentpayError('CANCELLED', 'the purchase was cancelled before the payment proof was sent; nothing was charged');
}

function isAbort(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: string }).name === 'AbortError';
}

function ceilingOf(v: string | bigint | undefined, field: string): bigint | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'bigint') return v;
  if (!/^(0|[1-9][0-9]*)$/.test(v)) throw new AgentpayError('VALIDATION_FAILED', `${field}: must be a string of integer minor units, e.g. "500"`, { details: { field } });
  return BigInt(v);
}

/** A request that can be sent twice: a Request or a streamed body is read once, up front. */
async function replayable(input: string | URL | Request, init: RequestInit): Promise<{ url: string; init: RequestInit }> {
  if (typeof Request !== 'undefined' && input instanceof Request) {
    const method = init.method ?? input.method;
    const headers = new Headers(input.headers);
    new Headers(init.headers).forEach((v, k) => headers.set(k, v));
    let body = init.body;
    if (body === undefined && input.body !== null && method !== 'GET' && method !== 'HEAD') body = await input.arrayBuffer();
    return { url: input.url, init: { ...init, method, headers, ...(body !== undefined ? { body } : {}) } };
  }
  const body = typeof ReadableStream !== 'undefined' && init.body instanceof ReadableStream ? await new Response(init.body).arrayBuffer() : init.body;
  return { url: String(input), init: { ...init, ...(body !== undefined ? { body } : {}) } };
}

export function createBuyer(opts: BuyerOptions): Buyer {
  if (!opts.privateKeyPem && !opts.signer) throw new AgentpayError('VALIDATION_FAILED', 'createBuyer: pass privateKeyPem (the agent key) or a signer', { details: { field: 'privateKeyPem' } });
  const gateway = new AgentpayClient({ baseUrl: opts.gatewayUrl, ...(opts.ca ? { ca: opts.ca } : {}) });
  const sellerFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const now = opts.now ?? Date.now;
  const defaultCeiling = ceilingOf(opts.maxPriceMinor, 'maxPriceMinor');
  const sign: ProofSigner = opts.signer ?? ((proof) => signObject(opts.privateKeyPem!, proof as unknown as Record<string, unknown>));

  // Platform keys by id: one lookup per key, ever (old receipt keys stay retrievable after rotation).
  const keys = new Map<string, Promise<string | null>>();
  const platformKey = (keyId: string): Promise<string | null> => {
    let p = keys.get(keyId);
    if (!p) {
      p = gateway.platform.receiptKey(keyId).then(
        (k) => k.publicKeyPem,
        (e) => {
          keys.delete(keyId); // a network failure is not remembered
          if (e instanceof AgentpayError && e.status === 404) return null;
          throw e;
        },
      );
      keys.set(keyId, p);
    }
    return p;
  };

  async function verifiedChallenge(text: string): Promise<PriceChallenge | null> {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return null; // not the protocol's 402
    }
    const b = body as { error?: { code?: unknown }; challenge?: unknown };
    if (b?.error?.code !== 'PAYMENT_REQUIRED' && b?.challenge === undefined) return null;
    const c = b.challenge;
    if (!isPriceChallenge(c)) throw new AgentpayError('INVALID_CHALLENGE', 'the seller answered 402 without a well-formed price challenge; nothing was signed', { status: 402, body: { challenge: c } });
    const pem = await platformKey(c.signingKeyId);
    if (!pem || !(await verifyObject(pem, c as unknown as Record<string, unknown>))) {
      throw new AgentpayError('INVALID_CHALLENGE', `the price challenge is not signed by this gateway's platform key ${c.signingKeyId}; nothing was signed`, { status: 402, body: { challenge: c } });
    }
    return c;
  }

  async function verifiedReceipt(header: string | null, bytes: Uint8Array, challenge: PriceChallenge): Promise<Receipt | null> {
    if (header === null) return null;
    const bad = (why: string, receipt?: unknown) => new AgentpayError('INVALID_RECEIPT', `the seller's receipt ${why}`, { body: { receipt } });
    let r: unknown;
    try {
      r = decodeHeader(header);
    } catch {
      throw bad(`header ${RECEIPT_HEADER} is not base64url JSON`);
    }
    if (!isReceipt(r)) throw bad('is not a receipt', r);
    const pem = await platformKey(r.signingKeyId);
    if (!pem || !(await verifyObject(pem, r as unknown as Record<string, unknown>))) throw bad(`is not signed by the platform key ${r.signingKeyId}`, r);
    if (r.consumerId !== opts.walletId || r.capabilityId !== challenge.capabilityId || r.providerId !== challenge.providerId) throw bad('is for another wallet, capability or seller', r);
    if (r.amount.amountMinor !== challenge.amountMinor || r.amount.currency !== challenge.currency) throw bad('names another amount than the challenge paid', r);
    if (r.responseHash !== null && r.responseHash !== undefined && r.responseHash !== (await responseHash(bytes))) throw bad('does not cover the bytes received (responseHash mismatch)', r);
    if (r.status === 'success' && !r.responseHash) throw bad('of a successful call has no responseHash', r);
    return r;
  }

  async function payingFetch(input: string | URL | Request, init: BuyerRequestInit = {}): Promise<PaidResponse> {
    const { maxPriceMinor, ...rest } = init;
    const signal = rest.signal ?? undefined;
    if (signal?.aborted) throw cancelled();
    const ceiling = maxPriceMinor !== undefined ? ceilingOf(maxPriceMinor, 'maxPriceMinor') : defaultCeiling;
    const req = await replayable(input, rest);

    let first: Response;
    try {
      first = await sellerFetch(req.url, req.init);
    } catch (e) {
      throw isAbort(e) || signal?.aborted ? cancelled() : e;
    }
    if (first.status !== 402) return Object.assign(first, { receipt: null, challenge: null });
    const beforeProof = (e: unknown): never => {
      throw isAbort(e) || signal?.aborted ? cancelled() : e;
    };
    const text = await first.text().catch(beforeProof);
    const challenge = await verifiedChallenge(text).catch(beforeProof);
    if (!challenge) return Object.assign(new Response(text, { status: 402, statusText: first.statusText, headers: first.headers }), { receipt: null, challenge: null });

    if (ceiling !== undefined && BigInt(challenge.amountMinor) > ceiling) {
      throw new AgentpayError('PRICE_ABOVE_CLIENT_LIMIT', `the price ${challenge.amountMinor} ${challenge.currency} minor units is above this buyer's limit of ${ceiling}; nothing was signed. Raise maxPriceMinor or choose another capability`, {
        details: { amountMinor: challenge.amountMinor, currency: challenge.currency, maxPriceMinor: String(ceiling), capabilityId: challenge.capabilityId },
      });
    }
    const expiresAt = Date.parse(challenge.expiresAt);
    if (!(expiresAt > now())) {
      throw new AgentpayError('CHALLENGE_EXPIRED', `the seller's quote expired at ${challenge.expiresAt}; nothing was signed. Call again for a new one`, { details: { expiresAt: challenge.expiresAt } });
    }
    if (signal?.aborted) throw cancelled();

    const unsigned: UnsignedPaymentProof = { version: 1, challenge, walletId: opts.walletId, signedAt: new Date(now()).toISOString() };
    const proof: PaymentProof = { ...unsigned, signature: await sign(unsigned) };
    if (signal?.aborted) throw cancelled(); // last moment: nothing has left this process yet

    // From here the purchase proceeds: the signal no longer applies (docs/protocol.md).
    const headers = new Headers(req.init.headers);
    headers.set(PAYMENT_HEADER, encodeHeader(proof));
    const { signal: _s, ...paidInit } = req.init;
    const res = await sellerFetch(req.url, { ...paidInit, headers });
    const bytes = new Uint8Array(await res.arrayBuffer());
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

  /** Resolves with the approval once a person decided; throws CANCELLED on abort, or the held error on timeout. */
  async function decisionOn(approvalId: string, held: AgentpayError, wait: ApprovalWaitOptions, signal: AbortSignal | undefined) {
    const pollMs = wait.pollMs ?? 2000;
    const deadline = Date.now() + (wait.timeoutMs ?? 10 * 60_000);
    for (;;) {
      if (signal?.aborted) throw cancelled();
      const { approval } = await wait.approvals.approvals.get(approvalId, signal ? { signal } : {}).catch((e: unknown) => {
        throw isAbort(e) || signal?.aborted ? cancelled() : e;
      });
      if (approval.status !== 'pending') return approval;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AgentpayError('APPROVAL_REQUIRED', `approval ${approvalId} is still pending after ${wait.timeoutMs ?? 600_000} ms; ask a person to decide, then retry once`, {
          status: held.status, details: held.details, body: held.body,
        });
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(pollMs, left));
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  async function fetchWithApproval(input: string | URL | Request, init: BuyerRequestInit = {}, wait: ApprovalWaitOptions): Promise<PaidResponse> {
    const { maxPriceMinor, ...rest } = init;
    // read a Request or streamed body once, so the retry can send it again
    const req = await replayable(input, rest);
    const again = () => payingFetch(req.url, { ...req.init, ...(maxPriceMinor !== undefined ? { maxPriceMinor } : {}) });
    let held: AgentpayError;
    try {
      return await again();
    } catch (e) {
      if (!(e instanceof AgentpayError) || e.code !== 'APPROVAL_REQUIRED') throw e;
      held = e;
    }
    const approvalId = String(held.body.approvalId ?? held.details.approvalId ?? '');
    if (!approvalId) throw held;
    wait.onPending?.(approvalId);
    const approval = await decisionOn(approvalId, held, wait, wait.signal ?? rest.signal ?? undefined);
    if (approval.status === 'denied') {
      throw new AgentpayError('APPROVAL_DENIED', `a person denied this purchase (approval ${approvalId}${approval.resolvedBy ? `, by ${approval.resolvedBy}` : ''}); nothing was charged. Do not retry`, {
        details: { approvalId, ...(approval.resolvedBy ? { resolvedBy: approval.resolvedBy } : {}) },
        body: { approval },
      });
    }
    return again(); // approved: the one retry it covers
  }

  return {
    walletId: opts.walletId,
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
export { RECEIPT_HEADER, PAYMENT_HEADER, responseHash, decodeHeader, encodeHeader } from '../protocol.js';
