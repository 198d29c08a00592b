/**
 * One endpoint, three dialects: what the seller core does with the other dialects' headers, in
 * one place, for every adapter (fastify, node, web, MCP over HTTP). Pure: no Node imports.
 *
 *   readRequestPayment(header)      -> which dialect paid, and our proof for the gateway's authorize
 *   unpaidAnswer(challenge, …)      -> the 402 with our body (or problem+json), PAYMENT-REQUIRED,
 *                                      WWW-Authenticate: Payment, Cache-Control: no-store
 *   refusalAnswer(…)                -> a gateway refusal, as problem+json when asked
 *   receiptHeaders(dialect, …)      -> PAYMENT-RESPONSE / Payment-Receipt beside x-service-receipt
 */
import { paymentRequiredBody, type PriceChallenge, type Receipt } from '../protocol.js';
import {
  DEFAULT_AGENTPAY_NETWORK, dialectReceiptHeaders, type X402ExactOffer, paymentRequiredHeaders, problemDetails, PROBLEM_JSON, readPaymentCredential,
  wantsProblemJson, X402_CLIENT_HINT, type Dialect, type PaymentCredentialRead,
} from './wire.js';

export interface DialectOptions {
  /** x402 network of this gateway, `agentpay:<mode>` (default agentpay:sandbox) */
  network?: string;
  /**
   * The seller's public base URL (https://api.example.com): the x402 resource URL and the
   * Payment realm come from it. Default: the request's Host header.
   */
  publicUrl?: string;
  /** the gateway's x402 `exact` offer (GET /v1/x402/exact): the 402 offers it too, and `exact` payments are read */
  exact?: X402ExactOffer | undefined;
}

/** What the dialect logic needs of a request, whatever the framework. */
export interface DialectRequest {
  /** a request header (case-insensitive name), first value */
  header(name: string): string | undefined;
  /** the request target as received: path and query */
  path: string;
  /** whether the connection was TLS (for the resource URL when no publicUrl is set) */
  secure?: boolean | undefined;
  /** the request's own scheme://host when the framework knows it (web Request.url); else the Host header is used */
  origin?: string | undefined;
}

export interface DialectAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

const utf8 = new TextEncoder();

export function readRequestPayment(req: DialectRequest, acceptExact = false): PaymentCredentialRead {
  return readPaymentCredential((n) => req.header(n), acceptExact);
}

export function resourceOf(req: DialectRequest, o: DialectOptions): { url: string; realm: string } {
  if (o.publicUrl) {
    const base = new URL(o.publicUrl);
    return { url: new URL(req.path, base).toString(), realm: base.hostname };
  }
  if (req.origin) {
    const base = new URL(req.origin);
    return { url: new URL(req.path, base).toString(), realm: base.hostname };
  }
  const host = req.header('host') ?? 'localhost';
  const url = `${req.secure ? 'https' : 'http'}://${host}${req.path.startsWith('/') ? req.path : `/${req.path}`}`;
  let realm = host;
  try {
    realm = new URL(`http://${host}`).hostname;
  } catch {
    // a malformed Host: the realm is only a label
  }
  return { url, realm };
}

const json = (status: number, value: unknown, headers: Record<string, string>, problem: boolean): DialectAnswer => ({
  status,
  headers: { 'content-type': problem ? PROBLEM_JSON : 'application/json; charset=utf-8', ...headers },
  body: utf8.encode(JSON.stringify(value)),
});

/**
 * The answer to an unpaid call, or to a credential that could not be used (`invalid`: malformed
 * 402, unsupported scheme/method 400), always with a fresh challenge in all three dialects.
 */
export function unpaidAnswer(challenge: PriceChallenge, req: DialectRequest, o: DialectOptions = {}, invalid?: Extract<PaymentCredentialRead, { kind: 'invalid' }>): DialectAnswer {
  const { url, realm } = resourceOf(req, o);
  const headers = paymentRequiredHeaders(challenge, { resourceUrl: url, realm, network: o.network ?? DEFAULT_AGENTPAY_NETWORK, error: invalid ? invalid.message : `payment required; ${X402_CLIENT_HINT}`, ...(o.exact ? { exact: o.exact } : {}) });
  const problem = wantsProblemJson(req.header('accept'));
  const status = invalid?.status ?? 402;
  const code = invalid ? (invalid.problem === 'method-unsupported' ? 'NOT_SUPPORTED' : 'PAYMENT_INVALID') : 'PAYMENT_REQUIRED';
  if (problem) {
    const base = paymentRequiredBody(challenge);
    return json(status, problemDetails(status, code, invalid?.message ?? base.error.message, { problem: invalid?.problem ?? 'payment-required', challenge }), headers, true);
  }
  if (!invalid) return json(402, paymentRequiredBody(challenge), headers, false);
  return json(status, { error: { code, message: invalid.message, details: { problem: invalid.problem } }, challenge }, headers, false);
}

/**
 * A refusal the core answers without running the handler (the gateway's, or the seller's own
 * 503): as it is, or as problem details when the buyer asked for them.
 */
export function refusalAnswer(answer: DialectAnswer, req: DialectRequest): DialectAnswer {
  if (!wantsProblemJson(req.header('accept'))) return answer;
  let envelope: { error?: { code?: string; message?: string; details?: Record<string, unknown> }; challenge?: PriceChallenge; [k: string]: unknown };
  try {
    envelope = JSON.parse(new TextDecoder().decode(answer.body));
  } catch {
    return answer;
  }
  const { error, challenge, ...rest } = envelope;
  const p = problemDetails(answer.status, error?.code ?? 'ERROR', error?.message ?? '', { ...(error?.details ? { details: error.details } : {}), ...(challenge ? { challenge } : {}) });
  const { 'content-type': _ct, ...headers } = answer.headers;
  return { status: answer.status, headers: { ...headers, 'content-type': PROBLEM_JSON }, body: utf8.encode(JSON.stringify({ ...rest, ...p })) };
}

/** The receipt header of the buyer's dialect, beside x-service-receipt (which every answer carries). */
export function receiptHeaders(dialect: Dialect, receipt: Receipt | null, o: DialectOptions & { challengeId?: string | undefined; statusCode: number }): Record<string, string> {
  if (!receipt || dialect === 'agentpay') return {};
  return dialectReceiptHeaders(dialect, receipt, { network: o.network ?? DEFAULT_AGENTPAY_NETWORK, statusCode: o.statusCode, ...(o.challengeId ? { challengeId: o.challengeId } : {}) });
}

export type { Dialect, PaymentCredentialRead };
