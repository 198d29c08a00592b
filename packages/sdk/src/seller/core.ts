/**
 * The seller side of the payment protocol, free of any web framework and of Node: the table of
 * the specification's "Payment protocol routes" as two decisions.
 *
 *   decide(seller, request) -> free (not a paid route: run the handler as is)
 *                            | preflight (a CORS preflight of a paid route: answer it)
 *                            | challenge (402 with a signed price challenge)
 *                            | refusal (HEAD on a paid route, the gateway's refusal, the gateway unreachable)
 *                            | replay (a retry with the idempotency key of a call that succeeded: its first
 *                                      answer and receipt, kept by the gateway; the handler does not run)
 *                            | session (a payment session's open or close, answered without the handler)
 *                            | admitted (the gateway authorized the payment, or the seller accepted a session's
 *                                        voucher by itself: run the handler, within timeoutMs)
 *   finish(seller, admitted, outcome) -> the paid answer: complete (2xx/3xx), fail client_error (4xx)
 *                            or fail provider_error (5xx, thrown, timed out), with the receipt header
 *                            (a voucher's call: charged on 2xx/3xx only, the seller-signed session receipt)
 *
 * Every answer a decision carries is complete: status, every header agentpay puts on it
 * (`answerHeaders` is the one place that chooses them: content type, retry-after, allow, the
 * receipt, CORS) and the exact bytes. The adapters (fastify.ts, node.ts, web.ts, hono.ts,
 * ../mcp/seller.ts) only render decisions in their framework, copying those headers with
 * `renderHeader`; the handler never runs before `decide` says `admitted`.
 *
 * Below the decisions, `SellerPayments` (createSellerPayments) talks to the gateway: admit
 * (challenge or authorize) and settle (complete or fail).
 *
 * No Node imports: hashing is WebCrypto's, bodies are Uint8Arrays. The gateway's CA option (`ca`)
 * is the only Node-only setting (the API client loads undici for it on Node).
 */
import { AgentpayClient } from '../client/index.js';
import { AgentpayError } from '../errors.js';
import { CORS_EXPOSE_HEADERS, encodeHeader, paymentRequiredBody, RECEIPT_HEADER, responseHash, type PaymentProof, type Receipt } from '../protocol.js';
import type { Authorization, Challenge, Replay } from '../types.js';
import type { Metering } from '../contract/resources.js';
import { missingSetting, withEnvDefaults, type EnvOption } from '../settings.js';
import { GatewayBatcher, type BatchOptions } from './batcher.js';
import { mergeList, preflightHeaders, type CorsOptions } from './cors.js';
import { idempotencyKeyOf, keptResponse, replayAnswer, requestFingerprint, type IdempotentRequest } from './idempotency.js';
import { encodeX402Header, X402_PAYMENT_RESPONSE_HEADER, x402ExactSettlementResponse, type X402ExactOffer } from '../interop/wire.js';
import type { ExactSettled } from '../client/payments.js';
import { readRequestPayment, receiptHeaders, refusalAnswer, resourceOf, unpaidAnswer, type Dialect, type DialectOptions, type DialectRequest, type PaymentCredentialRead } from '../interop/seller-dialects.js';
import { readSessionCredential, sessionCloseHeaders, sessionCorrectiveHeaders, sessionReceiptHeaders, withSessionEntries, x402SessionError, type SessionDetails, type SessionStep } from '../interop/session-wire.js';
import { decodeHeader } from '../protocol.js';
import {
  SESSION_CLOSE_HEADER, SESSION_GRANT_HEADER, SESSION_OPEN_HEADER, SESSION_RECEIPT_HEADER, SESSION_TOPUP_HEADER, VOUCHER_HEADER,
  type SessionCloseRequest, type SessionOffer, type SessionOpen, type SessionReceipt, type SessionTopUp, type Voucher,
} from '../contract/sessions.js';
import { SellerSessions, type SellerSessionOptions, type SessionCall } from './session-payments.js';

/**
 * gatewayUrl, apiKey and ca not given are read from the environment (EnvOption: AGENTPAY_GATEWAY_URL,
 * AGENTPAY_API_KEY, AGENTPAY_CA, as `agentpay dev env --role seller` prints them; ../settings.ts), and
 * capabilityId from AGENTPAY_CAPABILITY_ID when neither it nor routes is given. An option given wins.
 */
export interface SellerOptions extends DialectOptions, EnvOption {
  /** the gateway the capability is published on (https://…; default: AGENTPAY_GATEWAY_URL) */
  gatewayUrl?: string;
  /** a provider key with scope payments:write (default: AGENTPAY_API_KEY) */
  apiKey?: string;
  /** PEM of a CA to trust for the gateway (Node only), e.g. a local gateway's DATA_DIR/tls/ca.pem (default: the file AGENTPAY_CA names) */
  ca?: string;
  /** the capability every paid route of this seller sells (default, when routes is not given either: AGENTPAY_CAPABILITY_ID) */
  capabilityId?: string;
  /** per route: 'GET /weather' or '/weather' (any method) -> capability id; wins over capabilityId */
  routes?: Record<string, string>;
  /**
   * How long a paid handler may take, ms (default 30 000; 0: no limit). Past it the buyer gets
   * `504 HANDLER_TIMEOUT`, the call fails as `provider_error` (refund; counts toward the breaker)
   * and whatever the handler sends later is dropped.
   */
  handlerTimeoutMs?: number;
  /** retries of `complete` when the gateway is unreachable or answers 5xx (default 4 tries, 250 ms doubling) */
  completeRetry?: { attempts?: number; baseDelayMs?: number };
  /** told about every problem the buyer cannot see (default: console.error) */
  onError?: (error: unknown, context: { stage: 'challenge' | 'authorize' | 'complete' | 'fail'; transactionId?: string }) => void;
  /** fetch used for the gateway (tests, proxies) */
  fetch?: typeof fetch;
  /**
   * Under load, the gateway calls of concurrent paid calls share requests (POST /v1/x402/batch);
   * an idle seller sends each at once on its own route. `false`: every call on its own route.
   */
  batch?: BatchOptions | false;
  /**
   * Offer x402's `exact` scheme (USDC by EIP-3009 on the gateway's chain) beside ours when the
   * gateway has a chain configured (GET /v1/x402/exact, read once); the gateway verifies the
   * authorization before the handler and settles it after. Default true; false: agentpay only.
   */
  offerExact?: boolean;
  /**
   * Offer payment sessions beside per-call payment (docs/sdk.md § Payment sessions): the 402 says
   * so, a buyer opens a session once (one gateway trip), and every later call carries a voucher
   * this middleware checks and persists by itself; what the calls served is claimed in batches.
   * `{}` keeps vouchers in memory; give a durable `store` (FileVoucherStore) to keep them across
   * restarts. Absent: per-call payment only.
   */
  sessions?: SellerSessionOptions;
}

/** A call whose payment the gateway authorized: a hold is placed, the handler may run. */
export interface PaidCall {
  transactionId: string;
  capabilityId: string;
  walletId: string;
  /** what the buyer authorized: the price, or a metered capability's maximum */
  amountMinor: string;
  currency: string;
  /** a metered capability's price, as the platform-signed challenge the buyer paid states it (docs/protocol.md § Metered prices) */
  metering?: Metering;
  /**
   * A metered capability: the handler reports the units the call used, `call.charge(1200)`
   * (several calls add up; at most `metering.maxUnits` in all, else a RangeError). The call is then
   * charged units × unitPriceMinor and the rest of what was authorized goes back to the buyer;
   * never called, the whole authorized amount is charged. Not metered: a TypeError.
   */
  charge?: (units: number | bigint | string) => void;
  /** the units reported with `charge` so far (a count as a string); sent with the call's complete */
  units?: string;
  /** authorized with an idempotency key: complete sends the answer for the gateway to keep */
  idempotent?: boolean;
  /** an x402 `exact` payment the gateway verified (transactionId is then the authorization's id) */
  exact?: { authorizationId: string; payer: string };
  /** paid with a session's voucher (transactionId is then the session id): checked by the seller, no gateway trip */
  session?: SessionCall;
}

/** A count of units as the handler reports it: a non-negative safe integer, a bigint or a decimal string. */
function unitCount(units: number | bigint | string): bigint {
  if (typeof units === 'bigint' && units >= 0n) return units;
  if (typeof units === 'number' && Number.isSafeInteger(units) && units >= 0) return BigInt(units);
  if (typeof units === 'string' && /^(0|[1-9][0-9]*)$/.test(units)) return BigInt(units);
  throw new TypeError(`agentpay seller: charge(units) takes a count of units, a non-negative integer; got ${String(units)}`);
}

/**
 * Gives a call its metering (when the capability is metered) and its `charge`: what the handler
 * calls to report usage. Returns the same call.
 */
export function meteredCall(call: PaidCall, metering: Metering | undefined): PaidCall {
  if (metering) call.metering = metering;
  call.charge = (units) => {
    if (!call.metering) throw new TypeError(`agentpay seller: capability ${call.capabilityId} is not metered (a flat price per call): charge(units) applies to metered capabilities only`);
    const total = BigInt(call.units ?? '0') + unitCount(units);
    if (total > BigInt(call.metering.maxUnits)) {
      throw new RangeError(`agentpay seller: ${total} ${call.metering.unit} units is more than the ${call.metering.maxUnits} a call of ${call.capabilityId} may use (metering.maxUnits)`);
    }
    call.units = total.toString();
  };
  return call;
}

/** What a metered call charges for the units its handler reported: units × unitPriceMinor; undefined when it reported none. */
export function chargedFor(call: PaidCall): string | undefined {
  if (call.units === undefined || !call.metering) return undefined;
  return (BigInt(call.units) * BigInt(call.metering.unitPriceMinor)).toString();
}

/** The metering the platform signed into the challenge a proof embeds (the gateway verified it at authorize), if any. */
function meteringOfProof(payment: string | Record<string, unknown>): Metering | undefined {
  try {
    const proof = (typeof payment === 'string' ? decodeHeader(payment) : payment) as { challenge?: { metering?: Metering } };
    return proof.challenge?.metering ?? undefined;
  } catch {
    return undefined;
  }
}

// ---- decisions ----

/** An answer an adapter sends as is: the status, every header agentpay puts on it, the exact bytes. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** 402: the call is unpaid; the body carries the signed price challenge. */
export interface ChallengeDecision extends Answer {
  kind: 'challenge';
  challenge: Challenge;
}

/**
 * The call is refused before the handler: HEAD on a paid route (405), the gateway's refusal of
 * the proof or of the challenge (its status and envelope), the gateway unreachable (503).
 */
export interface RefusalDecision extends Answer {
  kind: 'refusal';
  /** the error code of the body's envelope */
  code: string;
}

/** The answer to a CORS preflight of a paid route (204). */
export interface PreflightDecision extends Answer {
  kind: 'preflight';
}

/**
 * A retry with the idempotency key of a call that succeeded (docs/protocol.md § Idempotent
 * retries): the first answer, kept by the gateway, with the first receipt (x-service-receipt and
 * the buyer's dialect's header) and `idempotent-replayed: true`. Nothing was held or charged;
 * the adapter sends it as is and does not run the handler. When the first answer was too big to
 * keep: 409 IDEMPOTENT_REPLAY_WITHOUT_ANSWER with the receipt in its details.
 */
export interface ReplayDecision extends Answer {
  kind: 'replay';
  replay: Replay;
}

/** What the gateway said about a payment (SellerPayments.admit). */
export type Admission = ChallengeDecision | RefusalDecision | { kind: 'replay'; replay: Replay } | { kind: 'admitted'; call: PaidCall };

/** Where an answer goes, as far as its headers depend on it. */
export interface AnswerContext {
  /** the adapter's CORS setting; without it only the expose list is added */
  cors?: CorsOptions;
  /** the request's Origin header */
  origin?: string;
}

/** The payment is authorized (a hold is placed): run the handler, then `finish`. */
export interface AdmittedDecision {
  kind: 'admitted';
  call: PaidCall;
  /**
   * How long the handler may take, ms (0: no limit). Past it the adapter sends `timeoutAnswer`
   * in the handler's place, finishes with it as `threw` and drops whatever the handler sends later.
   */
  timeoutMs: number;
  context: AnswerContext;
  /** the dialect the buyer paid in, for the receipt header of its answer */
  dialect?: { name: Dialect; challengeId?: string | undefined; idempotencyKey?: string | undefined };
}

/**
 * A payment session's own request on a paid route, answered without the handler: the open (200
 * with the grant) or the buyer's close (200 with the session), docs/protocol.md § Sessions on the wire.
 */
export interface SessionStepDecision extends Answer {
  kind: 'session';
  step: 'open' | 'topup' | 'close';
}

export type Decision = { kind: 'free' } | PreflightDecision | ChallengeDecision | RefusalDecision | ReplayDecision | SessionStepDecision | AdmittedDecision;

/** A request as the seller core needs to see it. */
export interface SellerRequest {
  /** the HTTP method; absent for an MCP tool call */
  method?: string;
  /** the capability the route sells (the adapter's lookup); undefined: a free route */
  capabilityId: string | undefined;
  /** the x-payment header as received, or the proof object (MCP `_meta`); absent: unpaid */
  payment?: string | Record<string, unknown> | undefined;
  /** the Origin header */
  origin?: string | undefined;
  /** an OPTIONS request's Access-Control-Request-Method and -Headers (a CORS preflight) */
  preflight?: { method: string; headers?: string | undefined } | undefined;
  /**
   * The request's headers, path and scheme, for the other dialects (../interop/seller-dialects.ts):
   * with it a payment is also read from PAYMENT-SIGNATURE (x402 v2) and `Authorization: Payment`,
   * and the answers carry PAYMENT-REQUIRED, WWW-Authenticate: Payment, PAYMENT-RESPONSE,
   * Payment-Receipt and, when asked for, problem details. Without it (MCP): agentpay only.
   */
  http?: DialectRequest | undefined;
  /**
   * The request body for the idempotency fingerprint (method, path and query, body), read only
   * when the buyer sent an idempotency key: the bytes as received, a parsed body (hashed as its
   * JSON), or a function that reads them (web: a clone of the request). Absent: the fingerprint
   * covers the method, path and query only.
   */
  body?: unknown | (() => unknown | Promise<unknown>);
  /**
   * Without `http`: where a payment session's open, top-up, close and voucher are read (MCP: the
   * call's `_meta`, ../mcp/seller.ts), by the name of the header that carries each over HTTP, and
   * the path the voucher's request hash covers. Absent (and no `http`): no sessions are offered.
   */
  sessionSource?: SessionSource | undefined;
}

/** Where a session's steps are read from: a header's value (base64url JSON) or the object itself. */
export interface SessionSource {
  header(name: string): string | object | undefined;
  path: string;
}

/** How the handler ended, as the adapter will send it. */
export interface HandlerOutcome {
  status: number;
  /** exactly the bytes that will be sent (and hashed); dropped for 1xx, 204 and 304 */
  body: Uint8Array;
  /** the handler threw or ran out of time: fails as provider_error whatever the status */
  threw?: boolean;
  /** the answer's content type, kept with it for a replay of an idempotent call */
  contentType?: string | undefined;
}

/** The paid answer: the handler's status and bytes, the headers to add to the handler's own. */
export interface PaidAnswer extends Answer {
  /** a 1xx, 204 or 304: sent without a body (and without content-length) */
  bodyless: boolean;
  /** null when the gateway could not be reached: the call settles later or is refunded */
  receipt: Receipt | null;
}

export interface Settlement {
  receipt: Receipt | null;
  /** an x402 `exact` payment settled on chain: the chain transaction beside the receipt */
  exact?: ExactSettled;
}

/**
 * How the handler ended, for the gateway. `body` is exactly what will be sent (and hashed). HTTP
 * adapters give `statusCode` (2xx/3xx complete, 4xx client_error, 5xx provider_error); `threw`
 * (handler threw) and `isError` (an MCP tool error result) fail as provider_error.
 */
export interface SettleOutcome {
  body: Uint8Array;
  statusCode?: number;
  threw?: boolean;
  isError?: boolean;
  /** the answer's content type, kept with it for a replay of an idempotent call */
  contentType?: string | undefined;
}

export interface SellerPayments {
  readonly client: AgentpayClient;
  /** the handler time limit, ms; 0 or absent: none */
  readonly handlerTimeoutMs?: number;
  /** x402 network and public URL of the other dialects' answers (SellerOptions) */
  readonly dialects?: DialectOptions;
  /** The capability a request sells, or undefined for a free route. */
  capabilityFor(method: string, routeOrPath: string): string | undefined;
  /**
   * The gateway's word on a payment: a challenge (no payment), its refusal, an authorized call,
   * or (`idempotent`: the buyer's key and the request's fingerprint) the replay of a call that succeeded.
   */
  admit(capabilityId: string, payment: string | Record<string, unknown> | undefined, idempotent?: IdempotentRequest): Promise<Admission>;
  /** Completes or fails an authorized call with the hash of the exact bytes sent. */
  settle(call: PaidCall, outcome: SettleOutcome): Promise<Settlement>;
  /** The gateway's x402 `exact` offer, read once; undefined when it has no chain (or `exact: false`). */
  exactOffer?(): Promise<X402ExactOffer | undefined>;
  /** The gateway's word on an x402 `exact` PaymentPayload: verified and reserved, or refused. */
  admitExact?(capabilityId: string, payload: Record<string, unknown>): Promise<Admission>;
  /** Payment sessions, when the seller takes them (SellerOptions.sessions). */
  readonly sessions?: SellerSessions;
  /** Claims what sessions served and stops their timer: call it when the server shuts down (the fastify plugin does). */
  close?(): Promise<void>;
}

const utf8 = new TextEncoder();
const JSON_TYPE = 'application/json; charset=utf-8';

/** The error envelope the seller writes itself, the same as the gateway's. */
const errorBody = (code: string, message: string, details: Record<string, unknown> = {}) => JSON.stringify({ error: { code, message, details } });

/** The body a seller answers when a handler threw. */
export const INTERNAL_ERROR_BODY = errorBody('INTERNAL', 'internal error');

export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

/** What the buyer gets (status 504) when a paid handler outlived `handlerTimeoutMs`; the call is refunded. */
export function handlerTimeoutBody(ms: number): string {
  return errorBody('HANDLER_TIMEOUT', `the seller's handler did not answer within ${ms} ms; you were refunded (see the failed receipt)`, { timeoutMs: ms });
}

/**
 * Statuses whose responses carry no body over HTTP (RFC 9110 §6.4.1): whatever a handler
 * writes with them never reaches the buyer, so the adapters hash and send an empty body.
 */
export function bodylessStatus(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** A paid route answers HEAD with this: a response without a body has nothing to hash, pay for or carry a challenge. */
export const HEAD_NOT_ALLOWED_BODY = errorBody('METHOD_NOT_ALLOWED', 'paid routes do not answer HEAD: request the route with its own method (e.g. GET)');

// ---- headers: the one place that chooses them ----

/**
 * Every header agentpay puts on an answer of a paid route, whatever the framework: the answer's
 * own (`own`: content type, retry-after, allow), the receipt of a settled call, and CORS (the
 * payment headers exposed to browsers; the configured origin allowed when the request has one).
 * A header dialect (another protocol's names for the challenge or the receipt) goes here.
 */
export function answerHeaders(context: AnswerContext, own: Record<string, string>, receipt?: Receipt | null): Record<string, string> {
  return {
    ...own,
    ...(receipt ? { [RECEIPT_HEADER]: encodeHeader(receipt) } : {}),
    'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', '),
    ...(context.cors && context.origin ? { 'access-control-allow-origin': context.cors.origin ?? '*' } : {}),
  };
}

/** Headers whose values are comma lists: the adapters merge them with what the response has. */
const LIST_HEADERS = new Set(['access-control-expose-headers', 'vary']);

/**
 * The value a header of a decision takes on a response that may already have one (set by the
 * handler or another middleware): list headers are merged, an allowed origin already chosen is
 * kept, any other header is agentpay's.
 */
export function renderHeader(name: string, existing: string | undefined, value: string): string {
  const n = name.toLowerCase();
  if (LIST_HEADERS.has(n)) return mergeList(existing, value.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
  if (n === 'access-control-allow-origin' && existing) return existing;
  return value;
}

const jsonAnswer = (status: number, text: string, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'content-type': JSON_TYPE, ...headers },
  body: utf8.encode(text),
});

/** The gateway's refusal, passed to the buyer with the gateway's status and envelope. */
function gatewayRefusal(e: AgentpayError): RefusalDecision {
  return { kind: 'refusal', code: e.code, ...jsonAnswer(e.status ?? 502, JSON.stringify({ error: { code: e.code, message: e.message, details: e.details }, ...e.body })) };
}

/**
 * The gateway could not be reached, or its answer was lost: nothing was charged and the handler
 * did not run. An authorization whose answer was lost may have placed a hold on the buyer's
 * wallet; the gateway releases it when its in-flight time runs out. That time is the gateway's
 * (the authorization's expiresAt), and the authorization never arrived: the message names no number.
 */
function unavailable(stage: string): RefusalDecision {
  const held = stage === 'authorize' ? ' (a hold the gateway may have placed is released when its authorization expires)' : '';
  const text = JSON.stringify({ error: { code: 'GATEWAY_UNAVAILABLE', message: `the seller could not reach its payment gateway (${stage}); nothing was charged${held}, retry later`, details: { stage } } });
  return { kind: 'refusal', code: 'GATEWAY_UNAVAILABLE', ...jsonAnswer(503, text, { 'retry-after': '5' }) };
}

// ---- the decisions ----

/**
 * What to do with a request: the first half of the table. HEAD on a paid route is refused here
 * (fastify adds HEAD to every GET route; a response without a body has nothing to pay for).
 */
export async function decide(seller: SellerPayments, request: SellerRequest, cors?: CorsOptions): Promise<Decision> {
  const { capabilityId } = request;
  if (!capabilityId) return { kind: 'free' };
  const context: AnswerContext = { ...(cors ? { cors } : {}), ...(request.origin ? { origin: request.origin } : {}) };
  if (cors && request.preflight) {
    return { kind: 'preflight', status: 204, headers: preflightHeaders(cors, request.preflight.method, request.preflight.headers), body: new Uint8Array(0) };
  }
  if (request.method?.toUpperCase() === 'HEAD') {
    const answer = jsonAnswer(405, HEAD_NOT_ALLOWED_BODY, { allow: 'GET' });
    return { kind: 'refusal', code: 'METHOD_NOT_ALLOWED', ...answer, headers: answerHeaders(context, answer.headers) };
  }
  const http = request.http;
  const steps = http ?? request.sessionSource;
  if (seller.sessions && steps) {
    const s = await sessionDecision(seller, seller.sessions, request, steps, capabilityId, context);
    if (s) return s;
  }
  // one endpoint, three dialects: x-payment (ours), PAYMENT-SIGNATURE (x402 v2), Authorization: Payment
  const idempotencyKey = http?.header('idempotency-key')?.trim() || undefined;
  const exact = http && seller.exactOffer ? await seller.exactOffer() : undefined;
  const read: PaymentCredentialRead = request.payment !== undefined && request.payment !== ''
    ? { kind: 'payment', dialect: 'agentpay', payment: request.payment as string, ...(idempotencyKey ? { idempotencyKey } : {}) }
    : http ? readRequestPayment(http, exact !== undefined) : { kind: 'none' };
  const options: DialectOptions = { ...(seller.dialects ?? {}), ...(exact ? { exact } : {}) };
  if (read.kind === 'exact' && http && seller.admitExact) {
    const admission = await seller.admitExact(capabilityId, read.payload as unknown as Record<string, unknown>);
    if (admission.kind === 'admitted') return { kind: 'admitted', call: admission.call, timeoutMs: seller.handlerTimeoutMs ?? 0, context, dialect: { name: 'x402' } };
    if (admission.kind === 'refusal' && admission.status === 402) {
      // x402's way: a fresh PAYMENT-REQUIRED whose error is the facilitator's reason
      const fresh = await seller.admit(capabilityId, undefined);
      if (fresh.kind === 'challenge') {
        const reason = refusalReason(admission);
        const answer = unpaidAnswer(fresh.challenge, http, options, { kind: 'invalid', dialect: 'x402', problem: 'verification-failed', status: 402, message: reason });
        return { kind: 'refusal', code: 'PAYMENT_REQUIRED', ...answer, headers: answerHeaders(context, answer.headers) };
      }
    }
    if (admission.kind === 'refusal') {
      const answer = refusalAnswer(admission, http);
      return { ...admission, ...answer, headers: answerHeaders(context, answer.headers) };
    }
    return unavailableDecision(context);
  }
  // the buyer's key (x402 payment-identifier, else Idempotency-Key) and the request's fingerprint go to authorize
  const idempotent = read.kind === 'payment' && http ? await idempotentRequestOf(request, http, read.idempotencyKey) : undefined;
  // a credential that cannot be used is answered as an unpaid call: a fresh challenge (402), or 400 for another scheme
  const admission = await seller.admit(capabilityId, read.kind === 'payment' ? (read.payment as string | Record<string, unknown>) : undefined, idempotent);
  if (admission.kind === 'replay') {
    const { replay } = admission;
    const answer = replayAnswer(replay);
    const dialectHeaders = replay.response && read.kind === 'payment'
      ? receiptHeaders(read.dialect, replay.receipt, { ...options, challengeId: read.challengeId, statusCode: answer.status })
      : {};
    // the receipt signs the first answer's bytes: it goes in the header only with them
    return { kind: 'replay', replay, status: answer.status, body: answer.body, headers: answerHeaders(context, { ...answer.headers, ...dialectHeaders }, replay.response ? replay.receipt : null) };
  }
  if (admission.kind === 'admitted') {
    const dialect = read.kind === 'payment' ? { name: read.dialect, challengeId: read.challengeId, idempotencyKey: read.idempotencyKey } : undefined;
    return { kind: 'admitted', call: admission.call, timeoutMs: seller.handlerTimeoutMs ?? 0, context, ...(dialect ? { dialect } : {}) };
  }
  if (!http) {
    const offered = admission.kind === 'challenge' && seller.sessions && request.sessionSource ? await withSessionOffer(seller.sessions, admission.challenge, admission) : admission;
    return { ...admission, ...offered, headers: answerHeaders(context, admission.headers) };
  }
  let answer = admission.kind === 'challenge'
    ? unpaidAnswer(admission.challenge, http, options, read.kind === 'invalid' ? read : undefined)
    : refusalAnswer(admission, http);
  if (admission.kind === 'challenge' && seller.sessions) answer = await withSessionOffer(seller.sessions, admission.challenge, answer, { requestHash: await requestFingerprint(request.method ?? 'POST', http.path), network: options.network });
  return { ...admission, ...answer, headers: answerHeaders(context, answer.headers) };
}

// ---- payment sessions (docs/protocol.md § Sessions on the wire) ----

/** The session offer added to an unpaid answer: in our body, and (`dialects`: an HTTP answer) as x402's and MPP's entries too. */
async function withSessionOffer(sessions: SellerSessions, challenge: Challenge, answer: Answer, dialects?: { requestHash: string; network: string | undefined }): Promise<Answer> {
  sessions.notePrice(challenge.capabilityId, challenge.amountMinor, challenge.currency, challenge.metering);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(new TextDecoder().decode(answer.body)) as Record<string, unknown>;
  } catch {
    return answer;
  }
  if (!body || typeof body !== 'object' || body.challenge === undefined) return answer;
  const offer: SessionOffer = {
    version: 1, providerId: challenge.providerId, capabilityId: challenge.capabilityId, priceMinor: challenge.amountMinor, currency: challenge.currency,
    openHeader: SESSION_OPEN_HEADER, voucherHeader: VOUCHER_HEADER,
  };
  const headers = dialects ? withSessionEntries(answer.headers, challenge, { challenge, requestHash: dialects.requestHash, session: offer }, dialects.network ? { network: dialects.network } : {}) : answer.headers;
  return { ...answer, headers, body: utf8.encode(JSON.stringify({ ...body, session: offer })) };
}

function decoded<T>(value: string | object, header: string): T {
  if (typeof value === 'object' && value !== null) return value as T;
  try {
    const v = decodeHeader<T>(value);
    if (v && typeof v === 'object') return v;
  } catch {
    // answered below
  }
  throw new AgentpayError('VALIDATION_FAILED', `the ${header} header is not base64url JSON of an object`, { status: 400, details: { field: header } });
}

/** An error of a session step, as the buyer gets it: the gateway's refusal as it came, ours with its status, 503 when the gateway is unreachable. */
function sessionRefusal(e: unknown, stage: string, context: AnswerContext): RefusalDecision {
  const r = e instanceof AgentpayError && e.status !== undefined && e.status < 500 ? gatewayRefusal(e) : unavailable(stage);
  return { ...r, headers: answerHeaders(context, r.headers) };
}

/** A session open, close or voucher on a paid route: its decision; undefined when the request carries none of them. */
async function sessionDecision(seller: SellerPayments, sessions: SellerSessions, request: SellerRequest, http: SessionSource, capabilityId: string, context: AnswerContext): Promise<Decision | undefined> {
  // x402's batch-settlement and MPP's session credentials come in HTTP headers (an MCP call's steps are ours)
  const textHeader = (n: string) => { const v = http.header(n); return typeof v === 'string' ? v : undefined; };
  const other = readSessionCredential(textHeader);
  if (other?.kind === 'invalid') {
    const answer = jsonAnswer(402, errorBody('VALIDATION_FAILED', other.message));
    return { kind: 'refusal', code: 'VALIDATION_FAILED', ...answer, headers: answerHeaders(context, answer.headers) };
  }
  if (other) return dialectSessionDecision(seller, sessions, request, { ...(http as Partial<DialectRequest>), header: textHeader, path: http.path }, capabilityId, context, other);
  const open = http.header(SESSION_OPEN_HEADER);
  if (open) {
    try {
      const grant = await sessions.open(decoded<SessionOpen>(open, SESSION_OPEN_HEADER), capabilityId);
      const answer = jsonAnswer(200, JSON.stringify({ grant }), { [SESSION_GRANT_HEADER]: encodeHeader(grant) });
      return { kind: 'session', step: 'open', ...answer, headers: answerHeaders(context, answer.headers) };
    } catch (e) {
      return sessionRefusal(e, 'session open', context);
    }
  }
  const topUp = http.header(SESSION_TOPUP_HEADER);
  if (topUp) {
    try {
      const grant = await sessions.topUp(decoded<SessionTopUp>(topUp, SESSION_TOPUP_HEADER), capabilityId);
      const answer = jsonAnswer(200, JSON.stringify({ grant }), { [SESSION_GRANT_HEADER]: encodeHeader(grant) });
      return { kind: 'session', step: 'topup', ...answer, headers: answerHeaders(context, answer.headers) };
    } catch (e) {
      return sessionRefusal(e, 'session top-up', context);
    }
  }
  const close = http.header(SESSION_CLOSE_HEADER);
  if (close) {
    try {
      const session = await sessions.closeFor(decoded<SessionCloseRequest>(close, SESSION_CLOSE_HEADER));
      const answer = jsonAnswer(200, JSON.stringify({ session }));
      return { kind: 'session', step: 'close', ...answer, headers: answerHeaders(context, answer.headers) };
    } catch (e) {
      return sessionRefusal(e, 'session close', context);
    }
  }
  const header = http.header(VOUCHER_HEADER);
  if (!header) return undefined;
  let d;
  let currency: string;
  let metering: Metering | undefined;
  try {
    const voucher = decoded<Voucher>(header, VOUCHER_HEADER);
    const price = await sessions.priceOf(capabilityId);
    currency = price.currency;
    metering = price.metering;
    // the voucher binds the method, path and query (not the body: a parsed body is not the buyer's bytes)
    const requestHash = await requestFingerprint(request.method ?? 'POST', http.path);
    d = await sessions.check(voucher, { priceMinor: price.priceMinor, requestHash, capabilityId });
  } catch (e) {
    return sessionRefusal(e, 'voucher', context);
  }
  if (d.kind === 'refuse') {
    // the corrective 402: where the seller stands with the session, for the buyer to resync from
    const answer = jsonAnswer(402, JSON.stringify({ error: { code: d.code, message: d.message, details: { sessionId: d.state?.sessionId ?? null } }, state: d.state }));
    return { kind: 'refusal', code: d.code, ...answer, headers: answerHeaders(context, answer.headers) };
  }
  return {
    kind: 'admitted',
    call: meteredCall({ transactionId: d.sessionId, capabilityId, walletId: d.walletId ?? '', amountMinor: d.chargedMinor, currency, session: d }, metering),
    timeoutMs: seller.handlerTimeoutMs ?? 0,
    context,
  };
}

/**
 * A session step in another dialect (docs/protocol.md § Sessions in the other dialects): the same
 * SellerSessions as our headers, answered in the buyer's dialect. An open is answered with a
 * corrective 402 carrying the grant (the stock client retries, paying with the first voucher); a
 * refused voucher with a corrective 402 carrying the session's state; a close with the session.
 */
async function dialectSessionDecision(
  seller: SellerPayments, sessions: SellerSessions, request: SellerRequest, http: DialectRequest, capabilityId: string, context: AnswerContext,
  read: { dialect: 'x402' | 'payment'; step: SessionStep; challengeId?: string },
): Promise<Decision> {
  const { dialect, step } = read;
  const network = seller.dialects?.network;
  const { url, realm } = resourceOf(http, seller.dialects ?? {});
  const corrective = async (error: string, details: Omit<SessionDetails, 'requestHash' | 'session'>, body: string): Promise<RefusalDecision> => {
    const price = await sessions.priceOf(capabilityId);
    const grant = details.grant ?? (details.channelId ? await sessions.grantOf(details.channelId) : undefined);
    const payTo = grant?.payTo ?? '';
    const offer: SessionOffer = { version: 1, providerId: grant?.providerId ?? '', capabilityId, priceMinor: price.priceMinor, currency: price.currency, openHeader: SESSION_OPEN_HEADER, voucherHeader: VOUCHER_HEADER };
    const full: SessionDetails = { ...details, requestHash: await requestFingerprint(request.method ?? 'POST', http.path), session: offer };
    const headers = sessionCorrectiveHeaders(dialect, { price: { amountMinor: price.priceMinor, currency: price.currency, payTo }, details: full, error, resourceUrl: url, realm, ...(network ? { network } : {}) });
    const answer = jsonAnswer(402, body, headers);
    return { kind: 'refusal', code: error, ...answer, headers: answerHeaders(context, answer.headers) };
  };
  if (step.kind === 'open') {
    let grant;
    try {
      grant = await sessions.open(step.open, capabilityId);
    } catch (e) {
      return sessionRefusal(e, 'session open', context);
    }
    return corrective('agentpay_session_opened', { grant, channelId: grant.sessionId }, JSON.stringify({ grant }));
  }
  if (step.kind === 'close') {
    try {
      const session = await sessions.closeFor(step.close);
      const answer = jsonAnswer(200, JSON.stringify({ session }), sessionCloseHeaders(dialect, session, { ...(network ? { network } : {}), ...(read.challengeId ? { challengeId: read.challengeId } : {}) }));
      return { kind: 'session', step: 'close', ...answer, headers: answerHeaders(context, answer.headers) };
    } catch (e) {
      return sessionRefusal(e, 'session close', context);
    }
  }
  let d;
  let currency: string;
  try {
    const price = await sessions.priceOf(capabilityId);
    currency = price.currency;
    d = await sessions.check(step.voucher, { priceMinor: price.priceMinor, requestHash: await requestFingerprint(request.method ?? 'POST', http.path), capabilityId });
  } catch (e) {
    return sessionRefusal(e, 'voucher', context);
  }
  if (d.kind === 'refuse') {
    const body = JSON.stringify({ error: { code: d.code, message: d.message, details: { sessionId: d.state?.sessionId ?? null } }, state: d.state });
    return corrective(dialect === 'x402' ? x402SessionError(d.code) : d.code, { channelId: step.voucher.sessionId, channelState: d.state, refusal: d.code }, body);
  }
  return {
    kind: 'admitted',
    call: { transactionId: d.sessionId, capabilityId, walletId: d.walletId ?? '', amountMinor: d.chargedMinor, currency, session: d },
    timeoutMs: seller.handlerTimeoutMs ?? 0,
    context,
    dialect: { name: dialect, challengeId: read.challengeId },
  };
}

function unavailableDecision(context: AnswerContext): RefusalDecision {
  const u = unavailable('authorize');
  return { ...u, headers: answerHeaders(context, u.headers) };
}

/** x402's error reason of a gateway refusal of an `exact` payment (details.reason), else its message. */
export function refusalReason(answer: Answer): string {
  try {
    const e = JSON.parse(new TextDecoder().decode(answer.body)) as { error?: { message?: string; details?: { reason?: string } } };
    return e.error?.details?.reason ?? e.error?.message ?? 'payment refused';
  } catch {
    return 'payment refused';
  }
}

/** The key (when usable) and the request's fingerprint; undefined when the buyer sent no key. */
async function idempotentRequestOf(request: SellerRequest, http: DialectRequest, key: string | undefined): Promise<IdempotentRequest | undefined> {
  const idempotencyKey = idempotencyKeyOf(key);
  if (idempotencyKey === undefined) return undefined;
  const body = typeof request.body === 'function' ? await (request.body as () => unknown)() : request.body;
  return { idempotencyKey, requestHash: await requestFingerprint(request.method ?? 'POST', http.path, body) };
}

/** What the adapter sends in the handler's place when it ran out of time (finish it as `threw`). */
export function timeoutAnswer(admitted: AdmittedDecision): Answer {
  return jsonAnswer(504, handlerTimeoutBody(admitted.timeoutMs));
}

/** What the adapter sends when the handler threw (finish it as `threw`): its partial output is dropped. */
export function thrownAnswer(): Answer {
  return jsonAnswer(500, INTERNAL_ERROR_BODY);
}

/**
 * Starts the handler's time limit: `onTimeout` runs once it is over (send `timeoutAnswer`).
 * Returns the function that stops it (call it when the handler ended). No limit: nothing runs.
 */
export function startDeadline(admitted: AdmittedDecision, onTimeout: () => void): () => void {
  if (!(admitted.timeoutMs > 0)) return () => {};
  const timer = setTimeout(onTimeout, admitted.timeoutMs);
  return () => clearTimeout(timer);
}

export type Ran<T> = { kind: 'done'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'timeout' };

/** A handler that returns its answer (MCP tools, web handlers), run within the time limit. */
export async function runWithinDeadline<T>(admitted: AdmittedDecision, invoke: () => T | Promise<T>): Promise<Ran<T>> {
  let stop = () => {};
  // settles either way, so that what a handler past its time does later (even a throw) is dropped
  const work: Promise<Ran<T>> = Promise.resolve()
    .then(invoke)
    .then((value) => ({ kind: 'done' as const, value }), (error: unknown) => ({ kind: 'threw' as const, error }));
  const timedOut = new Promise<Ran<T>>((resolve) => { stop = startDeadline(admitted, () => resolve({ kind: 'timeout' })); });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    stop();
  }
}

/**
 * The second half of the table: hash exactly the bytes that will be sent, complete or fail the
 * call, and the headers (receipt, CORS) to add. A 1xx, 204 or 304 goes out without a body
 * whatever the handler gave: the empty body is what is hashed.
 */
export async function finish(seller: SellerPayments, admitted: AdmittedDecision, outcome: HandlerOutcome): Promise<PaidAnswer> {
  const bodyless = bodylessStatus(outcome.status);
  const body = bodyless ? new Uint8Array(0) : outcome.body;
  const session = admitted.call.session;
  if (session && seller.sessions) {
    // charged only when it succeeded (2xx, 3xx); a failure gives its price back to the session's credit
    // a metered call whose handler reported its units: charged units × unit price, the rest of the voucher's maximum back to the credit
    const sessionReceipt = await settleSessionCall(seller, session, outcome.threw !== true && outcome.status < 400, body, chargedFor(admitted.call));
    const d = admitted.dialect?.name;
    const own: Record<string, string> = !sessionReceipt ? {}
      : d === 'x402' || d === 'payment'
        ? { [SESSION_RECEIPT_HEADER]: encodeHeader(sessionReceipt), ...sessionReceiptHeaders(d, sessionReceipt, { walletId: admitted.call.walletId, ...(seller.dialects?.network ? { network: seller.dialects.network } : {}), ...(admitted.dialect?.challengeId ? { challengeId: admitted.dialect.challengeId } : {}) }) }
        : { [SESSION_RECEIPT_HEADER]: encodeHeader(sessionReceipt) };
    return { status: outcome.status, body, bodyless, receipt: null, headers: answerHeaders(admitted.context, own) };
  }
  const { receipt, exact } = await seller.settle(admitted.call, { statusCode: outcome.status, body, threw: outcome.threw === true, ...(outcome.contentType ? { contentType: outcome.contentType } : {}) });
  const own = exact ? { [X402_PAYMENT_RESPONSE_HEADER]: encodeX402Header(x402ExactSettlementResponse(exact)) }
    : admitted.call.exact ? {}
    : admitted.dialect ? receiptHeaders(admitted.dialect.name, receipt ?? null, { ...seller.dialects, challengeId: admitted.dialect.challengeId, statusCode: outcome.status }) : {};
  return { status: outcome.status, body, bodyless, receipt: receipt ?? null, headers: answerHeaders(admitted.context, own, receipt) };
}

/**
 * Settles a call paid with a voucher (`call.session`) once its answer is known (`chargedMinor`: what a
 * metered call used, else its price): the seller-signed receipt of a success, null for a failure (its price goes back to the session's credit). A
 * receipt that cannot be signed (the record gone) is null too: the buyer counts the call as charged.
 */
export async function settleSessionCall(seller: SellerPayments, session: SessionCall, ok: boolean, body: Uint8Array, chargedMinor?: string): Promise<SessionReceipt | null> {
  if (!seller.sessions) return null;
  return seller.sessions.settle(session, { ok, responseHash: await responseHash(body), ...(chargedMinor !== undefined ? { chargedMinor } : {}) }).catch(() => null);
}

// ---- the gateway ----

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Worth retrying: the request may not have arrived, or the gateway had a moment. */
const transient = (e: unknown) =>
  !(e instanceof AgentpayError) || e.code === 'GATEWAY_UNAVAILABLE' || (e.status ?? 0) >= 500 || e.status === 429;

export function createSellerPayments(given: SellerOptions = {}): SellerPayments {
  const opts = withEnvDefaults(given, given.routes ? ['gatewayUrl', 'apiKey', 'ca'] : ['gatewayUrl', 'apiKey', 'ca', 'capabilityId']);
  if (!opts.gatewayUrl) throw missingSetting('agentpay seller', 'gatewayUrl');
  if (!opts.apiKey) throw missingSetting('agentpay seller', 'apiKey', ' (a provider key with payments:write)');
  const client = new AgentpayClient({ gatewayUrl: opts.gatewayUrl, apiKey: opts.apiKey, env: false, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const gateway = new GatewayBatcher(client, opts.batch === false ? { maxInFlight: Infinity } : opts.batch);
  const attempts = Math.max(1, opts.completeRetry?.attempts ?? 4);
  const baseDelayMs = opts.completeRetry?.baseDelayMs ?? 250;
  const report = opts.onError ?? ((error, c) => console.error(`agentpay seller: ${c.stage}${c.transactionId ? ` ${c.transactionId}` : ''} failed:`, error));

  /** complete/fail are idempotent at the gateway, so retrying cannot pay twice. */
  async function withRetry<T>(fn: () => Promise<T>, retryable: (e: unknown) => boolean = transient): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (e) {
        if (i >= attempts || !retryable(e)) throw e;
        await sleep(baseDelayMs * 2 ** (i - 1));
      }
    }
  }

  // the gateway's exact offer: read once; a failed read is tried again on a later call
  let offer: Promise<X402ExactOffer | undefined> | undefined;
  const readOffer = (): Promise<X402ExactOffer | undefined> => {
    if (opts.offerExact === false) return Promise.resolve(undefined);
    offer ??= client.payments.exactOffer().then((o) => o ?? undefined, () => {
      offer = undefined; // unreachable now: asked again on a later call
      return undefined;
    });
    return offer;
  };

  const sessions = opts.sessions ? new SellerSessions(client, opts.sessions, async (capabilityId) => {
    const { challenge } = (await gateway.run({ op: 'challenge', capabilityId })) as { challenge: Challenge };
    return { priceMinor: challenge.amountMinor, currency: challenge.currency, providerId: challenge.providerId, ...(challenge.metering ? { metering: challenge.metering } : {}) };
  }, (e) => report(e, { stage: 'complete' })) : undefined;

  return {
    client,
    ...(sessions ? { sessions } : {}),
    close: async () => { await sessions?.close(); },
    exactOffer: readOffer,
    async admitExact(capabilityId, payload): Promise<Admission> {
      try {
        const v = await client.payments.exactVerify({ capabilityId, payload });
        return { kind: 'admitted', call: { transactionId: v.authorizationId, capabilityId, walletId: v.payer, amountMinor: v.amountMinor, currency: v.currency, exact: { authorizationId: v.authorizationId, payer: v.payer } } };
      } catch (e) {
        if (e instanceof AgentpayError && e.status !== undefined && e.status < 500) return gatewayRefusal(e);
        report(e, { stage: 'authorize' });
        return unavailable('authorize');
      }
    },
    handlerTimeoutMs: opts.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    dialects: { ...(opts.network ? { network: opts.network } : {}), ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}) },

    capabilityFor(method, routeOrPath) {
      const routes = opts.routes ?? {};
      return routes[`${method.toUpperCase()} ${routeOrPath}`] ?? routes[routeOrPath] ?? opts.capabilityId;
    },

    async admit(capabilityId, payment, idempotent): Promise<Admission> {
      if (!payment) {
        try {
          const { challenge } = (await gateway.run({ op: 'challenge', capabilityId })) as { challenge: Challenge };
          return { kind: 'challenge', challenge, ...jsonAnswer(402, JSON.stringify(paymentRequiredBody(challenge))) };
        } catch (e) {
          report(e, { stage: 'challenge' });
          return e instanceof AgentpayError && e.status !== undefined && e.status < 500 ? gatewayRefusal(e) : unavailable('challenge');
        }
      }
      try {
        // the payment goes as received: the gateway decodes and validates it
        const t = (await gateway.run({ op: 'authorize', capabilityId, payment: payment as PaymentProof | string, ...idempotent })) as Authorization | Replay;
        if (t.status === 'replayed') return { kind: 'replay', replay: t };
        const call: PaidCall = { transactionId: t.transactionId, capabilityId, walletId: t.walletId, amountMinor: t.amountMinor, currency: t.currency, ...(idempotent ? { idempotent: true } : {}) };
        return { kind: 'admitted', call: meteredCall(call, meteringOfProof(payment)) };
      } catch (e) {
        if (e instanceof AgentpayError && e.status !== undefined && e.status < 500) return gatewayRefusal(e);
        report(e, { stage: 'authorize' });
        return unavailable('authorize');
      }
    },

    async settle(call, outcome): Promise<Settlement> {
      const hash = await responseHash(outcome.body);
      const status = outcome.statusCode ?? 200;
      const providerError = outcome.threw === true || outcome.isError === true || status >= 500;
      const ok = !providerError && status < 400;
      if (call.exact) {
        const authorizationId = call.exact.authorizationId;
        try {
          if (!ok) {
            // the handler failed: nothing is settled, the buyer keeps its money
            await withRetry(() => client.payments.exactRelease({ authorizationId }));
            return { receipt: null };
          }
          // TREASURY_UNAVAILABLE: the gateway tried the chain itself and recorded the settlement failed (its duty
          // retries it); asked again it would only answer that the authorization is no longer reserved
          const settled = await withRetry(() => client.payments.exactSettle({ authorizationId, responseHash: hash }),
            (e) => transient(e) && !(e instanceof AgentpayError && e.code === 'TREASURY_UNAVAILABLE'));
          return { receipt: settled.receipt, exact: settled };
        } catch (e) {
          report(e, { stage: ok ? 'complete' : 'fail', transactionId: authorizationId });
          return { receipt: null };
        }
      }
      const stage = ok ? 'complete' : 'fail';
      const kept = ok && call.idempotent ? keptResponse(status, outcome.contentType, outcome.body) : undefined;
      try {
        const { receipt } = (ok
          ? await withRetry(() => gateway.run({ op: 'complete', transactionId: call.transactionId, responseHash: hash, ...(kept ? { response: kept } : {}), ...(call.units !== undefined ? { units: call.units } : {}) }))
          : await withRetry(() => gateway.run({
              op: 'fail',
              transactionId: call.transactionId,
              reason: providerError ? 'provider_error' : 'client_error',
              responseHash: hash,
              ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
            }))) as { receipt: Receipt };
        return { receipt };
      } catch (e) {
        // The transaction stays authorized and durable at the gateway: a later complete
        // (same transactionId and hash) still settles it, otherwise the sweeper refunds
        // the buyer after releaseUnsettledAfterMs (15 minutes by default).
        report(e, { stage, transactionId: call.transactionId });
        return { receipt: null };
      }
    },
  };
}

export type { CorsOptions } from './cors.js';
