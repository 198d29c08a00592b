/**
 * The field's wire formats beside our own (docs/protocol.md, "Other dialects"): x402 v2 over
 * HTTP (`PAYMENT-REQUIRED` / `PAYMENT-SIGNATURE` / `PAYMENT-RESPONSE`) and the HTTP `Payment`
 * authentication scheme of the MPP drafts (`WWW-Authenticate: Payment` / `Authorization:
 * Payment` / `Payment-Receipt`), plus RFC 9457 problem details. Both carry our own pieces
 * unchanged: the platform-signed challenge goes out inside them, our signed proof comes back
 * inside them, our signed receipt goes back inside them.
 *
 * Encodings differ and must not be mixed up:
 *   x402 headers    standard base64 WITH padding of UTF-8 JSON (@x402/core rejects '-' and '_')
 *   Payment scheme  base64url WITHOUT padding; the `request` param is of RFC 8785 (JCS) JSON
 *   x-payment etc.  base64url without padding (protocol.ts encodeHeader)
 *
 * Pure functions, no Node imports: shared by the seller core, the MCP seller and the
 * client plug-ins (interop/x402.ts, interop/mppx.ts).
 */
import { fromBase64, fromBase64Url, toBase64, toBase64Url } from '../contract/base64.js';
import { canonicalize } from '../contract/canonical-json.js';
import { Value } from '@sinclair/typebox/value';
import {
  ExactOffer, PaymentCredential as PaymentCredentialSchema, X402PaymentPayload as X402PaymentPayloadSchema,
  type X402PaymentPayload, type X402PaymentRequired, type X402PaymentRequirements, type X402ResourceInfo, type X402SettlementResponse,
} from '../contract/x402.js';
import { decodeHeader, PAYMENT_HEADER, RECEIPT_HEADER, type PaymentProof, type PriceChallenge, type Receipt } from '../protocol.js';

// the x402 v2 shapes are the contract's (contract/x402.ts): received ones are checked against them
export type { X402PaymentPayload, X402PaymentRequired, X402PaymentRequirements, X402ResourceInfo, X402SettlementResponse };

// ---- header names (lower case, as node and fetch Headers report them) ----

export const X402_PAYMENT_REQUIRED_HEADER = 'payment-required';
export const X402_PAYMENT_SIGNATURE_HEADER = 'payment-signature';
export const X402_PAYMENT_RESPONSE_HEADER = 'payment-response';
export const WWW_AUTHENTICATE_HEADER = 'www-authenticate';
export const AUTHORIZATION_HEADER = 'authorization';
export const PAYMENT_RECEIPT_HEADER = 'payment-receipt';
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const ACCEPT_PAYMENT_HEADER = 'accept-payment';

/** The scheme (x402) and method (Payment) name under which agentpay payments travel. */
export const AGENTPAY_SCHEME = 'agentpay';
/** The Payment-scheme intent of a per-call price. */
export const AGENTPAY_INTENT = 'charge';
/** x402 network of an agentpay gateway: `agentpay:<mode>` (CAIP-2 shaped; buyers register `agentpay:*`). */
export type AgentpayNetwork = `agentpay:${string}`;
export const DEFAULT_AGENTPAY_NETWORK: AgentpayNetwork = 'agentpay:sandbox';
/** x402 network of a gateway in production mode (the Bazaar list names the gateway's own). */
export const LIVE_AGENTPAY_NETWORK: AgentpayNetwork = 'agentpay:live';
/** The network of a gateway mode: `agentpay:live` in production, else `agentpay:sandbox`. */
export const agentpayNetworkOf = (mode: string): AgentpayNetwork => (mode === 'production' ? LIVE_AGENTPAY_NETWORK : DEFAULT_AGENTPAY_NETWORK);

/** Every header a browser must be allowed to read on a paid route's answer, all dialects. */
export const INTEROP_EXPOSE_HEADERS: readonly string[] = [X402_PAYMENT_REQUIRED_HEADER, X402_PAYMENT_RESPONSE_HEADER, WWW_AUTHENTICATE_HEADER, PAYMENT_RECEIPT_HEADER];
/** Every request header a browser must be allowed to send to a paid route, all dialects. */
export const INTEROP_ALLOW_HEADERS: readonly string[] = [X402_PAYMENT_SIGNATURE_HEADER, AUTHORIZATION_HEADER, IDEMPOTENCY_KEY_HEADER, ACCEPT_PAYMENT_HEADER];

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

// ---- x402 v2 ----

/** Standard base64 (padded) of the UTF-8 JSON: the x402 header encoding. NOT protocol.ts encodeHeader. */
export function encodeX402Header(value: unknown): string {
  return toBase64(utf8.encode(JSON.stringify(value)));
}

/** Inverse of encodeX402Header; lenient to base64url. Throws unless it is base64 of a JSON object. */
export function decodeX402Header<T = Record<string, unknown>>(value: string): T {
  const text = value.trim();
  const bytes = /[-_]/.test(text) ? fromBase64Url(text) : fromBase64(text);
  const parsed: unknown = JSON.parse(utf8Decoder.decode(bytes));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('x402 header is not a JSON object');
  return parsed as T;
}

/** The x402 `payment-identifier` extension as a server declares it (optional idempotency id). */
export const PAYMENT_IDENTIFIER_EXTENSION = {
  info: { required: false },
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { required: { type: 'boolean' }, id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' } },
    required: ['required'],
  },
} as const;

/**
 * What a client without our scheme (method) reads in a 402: which package pays it. A stock x402
 * client that has no scheme for an entry throws "No network/scheme registered ..." with the
 * `accepts` in its message, so `extra.howToPay` is what its user sees; the unpaid 402's `error`
 * says it too. mppx's Payment challenges carry it as `description`. ASCII: header-safe.
 */
export const X402_CLIENT_HINT = 'priced in the agentpay scheme: npm install agentpay-sdk and register createAgentpayX402Scheme from agentpay-sdk/x402 on your x402Client for agentpay:*';
export const MPP_CLIENT_HINT = 'priced in the agentpay method: npm install agentpay-sdk and add agentpayMppx(...).method from agentpay-sdk/mppx to Mppx.create({ methods })';

/** The `accepts` entry of an agentpay price: plain fields for x402 clients, the signed challenge in `extra` (and X402_CLIENT_HINT). */
export function x402Requirements(challenge: PriceChallenge, network: string = DEFAULT_AGENTPAY_NETWORK, now: number = Date.now()): X402PaymentRequirements {
  return {
    scheme: AGENTPAY_SCHEME,
    network,
    amount: challenge.amountMinor,
    asset: challenge.currency,
    payTo: challenge.payTo,
    maxTimeoutSeconds: Math.max(1, Math.ceil((Date.parse(challenge.expiresAt) - now) / 1000)),
    extra: { howToPay: X402_CLIENT_HINT, challenge },
  };
}

/** What the gateway says to offer for x402's `exact` scheme (GET /v1/x402/exact: the contract's ExactOffer), as far as a 402 needs it. */
export type X402ExactOffer = Pick<ExactOffer, 'scheme' | 'network' | 'asset' | 'payTo' | 'unitsPerMinor' | 'extra'> & { currency: string };

export const X402_EXACT_SCHEME = 'exact';

/**
 * The `exact` entry of a price's `accepts` (an EIP-3009 USDC authorization to the platform's
 * receiving address, verified and settled by the gateway), or undefined when the price is in
 * another currency than the offer's.
 */
export function x402ExactRequirements(challenge: PriceChallenge, offer: X402ExactOffer, now: number = Date.now()): X402PaymentRequirements | undefined {
  if (challenge.currency !== offer.currency) return undefined;
  return {
    scheme: X402_EXACT_SCHEME,
    network: offer.network,
    amount: (BigInt(challenge.amountMinor) * BigInt(offer.unitsPerMinor)).toString(),
    asset: offer.asset,
    payTo: offer.payTo,
    maxTimeoutSeconds: Math.max(60, Math.ceil((Date.parse(challenge.expiresAt) - now) / 1000)),
    extra: { ...offer.extra },
  };
}

export interface X402RequiredOptions {
  /** the gateway's `exact` offer: added to `accepts` after the agentpay entry */
  exact?: X402ExactOffer | undefined;
  /** absolute URL of the paid resource (non-empty: clients parse it) */
  resourceUrl: string;
  network?: string;
  description?: string;
  mimeType?: string;
  error?: string;
  now?: number;
}

export function x402PaymentRequired(challenge: PriceChallenge, o: X402RequiredOptions): X402PaymentRequired {
  return {
    x402Version: 2,
    ...(o.error ? { error: o.error } : {}),
    resource: { url: o.resourceUrl || 'about:blank', ...(o.description ? { description: o.description } : {}), ...(o.mimeType ? { mimeType: o.mimeType } : {}) },
    accepts: [x402Requirements(challenge, o.network, o.now), ...exactOf(challenge, o)],
    extensions: { 'payment-identifier': PAYMENT_IDENTIFIER_EXTENSION },
  };
}

function exactOf(challenge: PriceChallenge, o: X402RequiredOptions): X402PaymentRequirements[] {
  const e = o.exact ? x402ExactRequirements(challenge, o.exact, o.now) : undefined;
  return e ? [e] : [];
}

/** The `PAYMENT-RESPONSE` of an `exact` payment the gateway settled on chain: the chain transaction, and our receipt in `extra`. */
export function x402ExactSettlementResponse(s: { receipt: Receipt; transaction: string; payer: string; network: string; amount: string }): X402SettlementResponse {
  return { success: true, payer: s.payer, transaction: s.transaction, network: s.network, amount: s.amount, extra: { receipt: s.receipt } };
}

/** The `PAYMENT-RESPONSE` of a settled (or refunded: success false) agentpay call. */
export function x402SettlementResponse(receipt: Receipt, network: string = DEFAULT_AGENTPAY_NETWORK, errorReason?: string): X402SettlementResponse {
  const success = receipt.status === 'success';
  return {
    success,
    ...(success ? {} : { errorReason: errorReason ?? 'call_failed_refunded' }),
    payer: receipt.consumerId,
    transaction: receipt.transactionId,
    network,
    amount: receipt.amount.amountMinor,
    extra: { receipt },
  };
}

/** The ids the payment-identifier extension declares (16 to 128 of A-Z a-z 0-9 _ -): a subset of the idempotency keys the gateway takes. */
export const PAYMENT_IDENTIFIER_ID = /^[a-zA-Z0-9_-]{16,128}$/;

/**
 * The `payment-identifier` id an x402 payload carries, if any, and if it is one the extension
 * declares (PAYMENT_IDENTIFIER_ID); it is the call's idempotency key, as `Idempotency-Key` would be.
 */
export function x402PaymentIdentifier(p: X402PaymentPayload): string | undefined {
  const ext = p.extensions?.['payment-identifier'];
  const info = isObject(ext) ? ext.info : undefined;
  const id = isObject(info) ? info.id : undefined;
  return typeof id === 'string' && PAYMENT_IDENTIFIER_ID.test(id) ? id : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `proof` of a credential's payload when it is an object (the gateway checks its shape and signature). */
export const proofOf = (payload: Record<string, unknown>): PaymentProof | undefined => (isObject(payload.proof) ? (payload.proof as unknown as PaymentProof) : undefined);

/** An x402 PaymentPayload, checked against the contract (x402Version, accepted.scheme, payload); undefined when it is not one. */
export function asX402PaymentPayload(v: unknown): X402PaymentPayload | undefined {
  return Value.Check(X402PaymentPayloadSchema, v) ? (v as X402PaymentPayload) : undefined;
}

// ---- HTTP Payment scheme (MPP drafts) ----

/** The charge request of an agentpay price, as the `request` param carries it (before JCS + base64url). */
export interface AgentpayChargeRequest {
  amount: string;
  /** lower case, as the charge intent wants for fiat */
  currency: string;
  recipient: string;
  methodDetails: { challenge: PriceChallenge };
}

export function chargeRequestOf(challenge: PriceChallenge): AgentpayChargeRequest {
  return { amount: challenge.amountMinor, currency: challenge.currency.toLowerCase(), recipient: challenge.payTo, methodDetails: { challenge } };
}

/** base64url (no padding) of the JCS of an object: the Payment scheme's `request` and `opaque` encoding. */
export function encodePaymentRequest(value: Record<string, unknown>): string {
  return toBase64Url(utf8.encode(canonicalize(value)));
}

export function decodePaymentRequest<T = Record<string, unknown>>(value: string): T {
  return decodeHeader<T>(value);
}

/** A Payment challenge as MCP carries it (`request` as an object) and as parsed from the header. */
export interface PaymentChallengeParams {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: Record<string, unknown>;
  expires?: string;
  description?: string;
}

/** The Payment challenge of a signed price: id is the platform-signed nonce, the whole challenge rides in request.methodDetails. */
export function paymentChallengeOf(challenge: PriceChallenge, realm: string): PaymentChallengeParams {
  return {
    id: challenge.nonce,
    realm,
    method: AGENTPAY_SCHEME,
    intent: AGENTPAY_INTENT,
    request: chargeRequestOf(challenge) as unknown as Record<string, unknown>,
    expires: challenge.expiresAt,
    description: MPP_CLIENT_HINT,
  };
}

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** `WWW-Authenticate: Payment id=…, realm=…, method="agentpay", intent="charge", expires=…, request=…`. */
export function paymentChallengeHeader(challenge: PriceChallenge, realm: string): string {
  const p = paymentChallengeOf(challenge, realm);
  return `Payment id=${quote(p.id)}, realm=${quote(p.realm)}, method=${quote(p.method)}, intent=${quote(p.intent)}, expires=${quote(p.expires!)}, request=${quote(encodePaymentRequest(p.request))}, description=${quote(p.description!)}`;
}

/**
 * Every `Payment` challenge in a WWW-Authenticate value (several may be comma-joined, beside
 * other schemes); `request` decoded. Unknown params are kept as strings; malformed ones skipped.
 */
export function parsePaymentChallenges(header: string): Array<Record<string, string> & { request?: string }> {
  const out: Array<Record<string, string>> = [];
  let current: Record<string, string> | null = null;
  // tokens: a scheme name, or name=value (value token or quoted-string), separated by commas/spaces
  const re = /\s*(?:([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)|([A-Za-z0-9!#$%&'*+.^_`|~-]+))\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(header)) !== null && m[0] !== '') {
    if (m[3]) {
      // a bare word: a new scheme (or a token68 of another scheme, which we ignore)
      current = m[3].toLowerCase() === 'payment' ? {} : null;
      if (current) out.push(current);
    } else if (current && m[1]) {
      const raw = m[2] ?? '';
      current[m[1].toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
    }
  }
  return out;
}

/** The agentpay challenge inside a Payment challenge's request param, or null. */
export function agentpayChallengeFromPaymentRequest(request: unknown): PriceChallenge | null {
  const r = typeof request === 'string' ? (() => { try { return decodePaymentRequest(request); } catch { return null; } })() : request;
  const details = isObject(r) ? r.methodDetails : undefined;
  const c = isObject(details) ? details.challenge : undefined;
  // its shape and signature are the buyer's checks (challengeProblem, then the platform key)
  return isObject(c) ? (c as unknown as PriceChallenge) : null;
}

/** An `Authorization: Payment` credential (challenge echoed with `request` as the base64url string). */
export interface PaymentCredential {
  challenge: { id: string; realm: string; method: string; intent: string; request: string | Record<string, unknown>; expires?: string; [k: string]: unknown };
  payload: Record<string, unknown>;
  source?: string;
}

/** `Payment <base64url(JSON)>`; an object `request` is JCS-encoded first, as mppx does. */
export function encodePaymentCredential(c: PaymentCredential): string {
  const request = typeof c.challenge.request === 'string' ? c.challenge.request : encodePaymentRequest(c.challenge.request);
  const { meta: _meta, ...challenge } = c.challenge; // mppx's decoded opaque, not on the wire
  const wire = { challenge: { ...challenge, request }, payload: c.payload, ...(c.source ? { source: c.source } : {}) };
  return `Payment ${toBase64Url(utf8.encode(JSON.stringify(wire)))}`;
}

/** The Payment credential of an Authorization value (first `Payment` scheme), or null when there is none. Throws if it is not decodable. */
export function decodePaymentCredential(authorization: string): PaymentCredential | null {
  const part = authorization.split(',').map((s) => s.trim()).find((s) => /^Payment\s+/i.test(s));
  if (!part) return null;
  const c: unknown = decodeHeader(part.replace(/^Payment\s+/i, ''));
  if (!Value.Check(PaymentCredentialSchema, c)) throw new Error('a Payment credential is {challenge: {id, method, …}, payload: {…}}');
  return c as PaymentCredential;
}

export interface PaymentReceiptValue {
  status: 'success';
  method: string;
  timestamp: string;
  reference: string;
  challengeId: string;
  /** agentpay: the platform-signed receipt */
  receipt: Receipt;
}

/** `Payment-Receipt` value of a successful call (never on an error answer). */
export function paymentReceiptHeader(receipt: Receipt, challengeId: string): string {
  const v: PaymentReceiptValue = { status: 'success', method: AGENTPAY_SCHEME, timestamp: receipt.timestamp, reference: receipt.transactionId, challengeId, receipt };
  return toBase64Url(utf8.encode(JSON.stringify(v)));
}

export function decodePaymentReceipt(value: string): PaymentReceiptValue {
  return decodeHeader<PaymentReceiptValue>(value);
}

// ---- reading a paid retry, whichever dialect ----

export type Dialect = 'agentpay' | 'x402' | 'payment';

export type PaymentCredentialRead =
  | { kind: 'none' }
  /** `payment`: what goes to the gateway's authorize (the x-payment string as received, or the proof object) */
  | { kind: 'payment'; dialect: Dialect; payment: string | PaymentProof; idempotencyKey?: string; challengeId?: string }
  /** an x402 `exact` PaymentPayload: the gateway verifies it (POST /v1/x402/exact/verify) and settles it after the handler */
  | { kind: 'exact'; dialect: 'x402'; payload: X402PaymentPayload }
  /** the credential is there but unusable: answer 402 (malformed) or 400 (unsupported) with a fresh challenge */
  | { kind: 'invalid'; dialect: Dialect; problem: 'malformed-credential' | 'method-unsupported' | 'invalid-challenge' | 'verification-failed'; status: 400 | 402; message: string };

type HeaderGetter = (name: string) => string | undefined;

/**
 * The payment of a request, looked for in this order: `x-payment` (ours), `PAYMENT-SIGNATURE`
 * (x402 v2, scheme agentpay), `Authorization: Payment` (method agentpay). The first present wins.
 * Each yields the same thing for the gateway: our signed proof. Also reads the idempotency key
 * (x402 payment-identifier, else the `Idempotency-Key` header).
 */
export function readPaymentCredential(get: HeaderGetter, acceptExact = false): PaymentCredentialRead {
  const idemHeader = get(IDEMPOTENCY_KEY_HEADER)?.trim() || undefined;
  const withKey = <T extends object>(v: T, key: string | undefined) => (key ? { ...v, idempotencyKey: key } : v);
  const ours = get(PAYMENT_HEADER);
  if (ours) return withKey({ kind: 'payment' as const, dialect: 'agentpay' as const, payment: ours }, idemHeader);

  const sig = get(X402_PAYMENT_SIGNATURE_HEADER);
  if (sig) {
    let decoded: unknown;
    try {
      decoded = decodeX402Header(sig);
    } catch {
      return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: 'PAYMENT-SIGNATURE is not base64 of a JSON PaymentPayload' };
    }
    const p = asX402PaymentPayload(decoded);
    if (!p) return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: 'PAYMENT-SIGNATURE is not an x402 PaymentPayload {x402Version, accepted: {scheme, …}, payload: {…}}' };
    if (p.accepted.scheme === X402_EXACT_SCHEME && p.x402Version === 2 && acceptExact) return { kind: 'exact', dialect: 'x402', payload: p };
    if (p.accepted.scheme !== AGENTPAY_SCHEME) {
      return { kind: 'invalid', dialect: 'x402', problem: 'method-unsupported', status: 400, message: `x402 scheme "${p.accepted.scheme}" is not accepted here; pay with scheme "agentpay" (an agentpay wallet)${acceptExact ? ' or "exact"' : ''}` };
    }
    if (p.x402Version !== 2) return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: `x402Version ${String(p.x402Version)} is not supported; send version 2` };
    const proof = proofOf(p.payload);
    if (!proof) return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: 'PAYMENT-SIGNATURE payload.proof is missing' };
    return withKey({ kind: 'payment' as const, dialect: 'x402' as const, payment: proof }, x402PaymentIdentifier(p) ?? idemHeader);
  }

  const auth = get(AUTHORIZATION_HEADER);
  if (auth && /(^|,)\s*Payment\s+/i.test(auth)) {
    let c: PaymentCredential | null;
    try {
      c = decodePaymentCredential(auth);
    } catch {
      c = null;
    }
    if (!c) return { kind: 'invalid', dialect: 'payment', problem: 'malformed-credential', status: 402, message: 'Authorization: Payment is not base64url of a JSON credential' };
    if (c.challenge.method !== AGENTPAY_SCHEME) {
      return { kind: 'invalid', dialect: 'payment', problem: 'method-unsupported', status: 400, message: `payment method "${String(c.challenge.method)}" is not accepted here; pay with method "agentpay"` };
    }
    const proof = proofOf(c.payload);
    if (!proof) return { kind: 'invalid', dialect: 'payment', problem: 'malformed-credential', status: 402, message: 'the credential payload.proof is missing' };
    if (c.challenge.id !== (isObject(proof.challenge) ? proof.challenge.nonce : undefined)) {
      return { kind: 'invalid', dialect: 'payment', problem: 'invalid-challenge', status: 402, message: 'the credential challenge id is not the nonce of the signed challenge it pays' };
    }
    return withKey({ kind: 'payment' as const, dialect: 'payment' as const, payment: proof, challengeId: c.challenge.id }, idemHeader);
  }
  return { kind: 'none' };
}

/** The receipt header(s) of a settled call in the buyer's dialect (x-service-receipt is always there, added by the core). */
export function dialectReceiptHeaders(dialect: Dialect, receipt: Receipt, o: { network?: string; challengeId?: string; statusCode: number }): Record<string, string> {
  if (dialect === 'x402') return { [X402_PAYMENT_RESPONSE_HEADER]: encodeX402Header(x402SettlementResponse(receipt, o.network)) };
  if (dialect === 'payment' && receipt.status === 'success' && o.statusCode >= 200 && o.statusCode < 300) {
    return { [PAYMENT_RECEIPT_HEADER]: paymentReceiptHeader(receipt, o.challengeId ?? '') };
  }
  return {};
}

/** Headers of an unpaid answer in the other dialects, beside our own body. */
export function paymentRequiredHeaders(challenge: PriceChallenge, o: { resourceUrl: string; realm: string; network?: string; error?: string; description?: string; exact?: X402ExactOffer | undefined }): Record<string, string> {
  return {
    [X402_PAYMENT_REQUIRED_HEADER]: encodeX402Header(x402PaymentRequired(challenge, {
      resourceUrl: o.resourceUrl,
      ...(o.network ? { network: o.network } : {}),
      ...(o.error ? { error: o.error } : {}),
      ...(o.description ? { description: o.description } : {}),
      ...(o.exact ? { exact: o.exact } : {}),
    })),
    [WWW_AUTHENTICATE_HEADER]: paymentChallengeHeader(challenge, o.realm),
    'cache-control': 'no-store',
  };
}

// ---- RFC 9457 problem details ----

export const PROBLEM_JSON = 'application/problem+json';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** agentpay's error code (extension member) */
  code: string;
  /** a fresh signed challenge when one is offered (extension member) */
  challenge?: PriceChallenge;
  [k: string]: unknown;
}

const PROBLEM_BASE = 'https://paymentauth.org/problems/';

/** Our error codes in the Payment scheme's problem types. */
const PROBLEM_OF_CODE: Record<string, string> = {
  PAYMENT_REQUIRED: 'payment-required',
  CHALLENGE_EXPIRED: 'payment-expired',
  REPLAY_DETECTED: 'invalid-challenge',
  INSUFFICIENT_FUNDS: 'verification-failed',
  PAYMENT_INVALID: 'verification-failed',
  INVALID_SIGNATURE: 'verification-failed',
  UNAUTHORIZED: 'verification-failed',
  FORBIDDEN: 'verification-failed',
  WALLET_FROZEN: 'verification-failed',
};

const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 410: 'Gone', 429: 'Too Many Requests', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

/** True when the Accept header asks for problem details (RFC 9457). */
export function wantsProblemJson(accept: string | undefined): boolean {
  return !!accept && accept.toLowerCase().includes(PROBLEM_JSON);
}

/** Problem details of one of our error envelopes; `problem` forces a Payment-scheme type. */
export function problemDetails(status: number, code: string, message: string, extra: { problem?: string; challenge?: PriceChallenge; details?: Record<string, unknown> } = {}): ProblemDetails {
  const slug = extra.problem ?? PROBLEM_OF_CODE[code];
  return {
    type: slug ? PROBLEM_BASE + slug : 'about:blank',
    title: TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Error'),
    status,
    detail: message,
    code,
    ...(extra.details && Object.keys(extra.details).length ? { details: extra.details } : {}),
    ...(extra.challenge ? { challenge: extra.challenge } : {}),
  };
}

/** Our receipt header of an answer (x-service-receipt), decoded; undefined if absent, throws if malformed. */
export function receiptFromHeader(value: string | null | undefined): Receipt | undefined {
  return value ? decodeHeader<Receipt>(value) : undefined;
}

export { PAYMENT_HEADER, RECEIPT_HEADER };

// ---- MCP: the MPP MCP transport's `_meta` keys and x402's MCP convention ----

/** Result `_meta` key of the MPP MCP transport: payment required, `{httpStatus, challenges, problem?}`. */
export const MPP_MCP_PAYMENT_REQUIRED_META = 'org.paymentauth/payment-required';
/** Request `_meta` key of the MPP MCP transport: the credential `{challenge, payload, source?}` (request as an object). */
export const MPP_MCP_CREDENTIAL_META = 'org.paymentauth/credential';
/** Result `_meta` key of the MPP MCP transport: the receipt. */
export const MPP_MCP_RECEIPT_META = 'org.paymentauth/receipt';
/** Request `_meta` key of x402's MCP convention: the PaymentPayload object. */
export const X402_MCP_PAYMENT_META = 'x402/payment';
/** Result `_meta` key of x402's MCP convention: the SettlementResponse object. */
export const X402_MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';

/** What an unpaid paid-tool result adds to its `_meta` for MPP MCP clients (mppx's McpClient). */
export function mcpPaymentRequiredMeta(challenge: PriceChallenge, realm: string, problem?: ProblemDetails): Record<string, unknown> {
  return { [MPP_MCP_PAYMENT_REQUIRED_META]: { httpStatus: 402, challenges: [paymentChallengeOf(challenge, realm)], ...(problem ? { problem } : {}) } };
}

/**
 * The payment of a tool call in another dialect's `_meta` key (ours, `agentpay/payment`, is
 * read by the MCP seller first): the MPP credential, else the x402 PaymentPayload (of scheme
 * `agentpay`, or `exact` when `acceptExact`: the gateway has a chain and verifies it).
 */
export function readMcpPayment(meta: Record<string, unknown> | undefined, acceptExact = false): PaymentCredentialRead {
  const raw = meta?.[MPP_MCP_CREDENTIAL_META];
  if (raw !== undefined) {
    if (!Value.Check(PaymentCredentialSchema, raw)) return { kind: 'invalid', dialect: 'payment', problem: 'malformed-credential', status: 402, message: `_meta["${MPP_MCP_CREDENTIAL_META}"] is not a credential {challenge: {id, method, …}, payload: {…}}` };
    const cred = raw as PaymentCredential;
    if (cred.challenge.method !== AGENTPAY_SCHEME) return { kind: 'invalid', dialect: 'payment', problem: 'method-unsupported', status: 400, message: `payment method "${cred.challenge.method}" is not accepted here; pay with method "agentpay"` };
    const proof = proofOf(cred.payload);
    if (!proof) return { kind: 'invalid', dialect: 'payment', problem: 'malformed-credential', status: 402, message: 'the credential payload.proof is missing' };
    if (cred.challenge.id !== (isObject(proof.challenge) ? proof.challenge.nonce : undefined)) return { kind: 'invalid', dialect: 'payment', problem: 'invalid-challenge', status: 402, message: 'the credential challenge id is not the nonce of the signed challenge it pays' };
    return { kind: 'payment', dialect: 'payment', payment: proof, challengeId: String(cred.challenge.id) };
  }
  const rawX = meta?.[X402_MCP_PAYMENT_META];
  if (rawX !== undefined) {
    const x = asX402PaymentPayload(rawX);
    if (!x) return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: `_meta["${X402_MCP_PAYMENT_META}"] is not an x402 PaymentPayload {x402Version, accepted: {scheme, …}, payload: {…}}` };
    if (x.accepted.scheme === X402_EXACT_SCHEME && x.x402Version === 2 && acceptExact) return { kind: 'exact', dialect: 'x402', payload: x };
    if (x.accepted.scheme !== AGENTPAY_SCHEME) return { kind: 'invalid', dialect: 'x402', problem: 'method-unsupported', status: 400, message: `only the x402 scheme "agentpay"${acceptExact ? ' or "exact"' : ''} is accepted here` };
    const proof = proofOf(x.payload);
    if (!proof) return { kind: 'invalid', dialect: 'x402', problem: 'malformed-credential', status: 402, message: 'payload.proof is missing' };
    const id = x402PaymentIdentifier(x);
    return { kind: 'payment', dialect: 'x402', payment: proof, ...(id ? { idempotencyKey: id } : {}) };
  }
  return { kind: 'none' };
}

/** The receipt `_meta` of a paid tool result in the buyer's dialect (beside `agentpay/receipt`). */
export function mcpReceiptMeta(dialect: Dialect, receipt: Receipt, o: { network?: string; challengeId?: string } = {}): Record<string, unknown> {
  if (dialect === 'x402') return { [X402_MCP_PAYMENT_RESPONSE_META]: x402SettlementResponse(receipt, o.network) };
  if (dialect === 'payment' && receipt.status === 'success') {
    return { [MPP_MCP_RECEIPT_META]: { status: 'success', method: AGENTPAY_SCHEME, timestamp: receipt.timestamp, reference: receipt.transactionId, challengeId: o.challengeId ?? '', receipt } };
  }
  return {};
}
