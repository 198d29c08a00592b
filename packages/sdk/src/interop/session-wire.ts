/**
 * Payment sessions in the other two dialects (docs/protocol.md § Sessions in the other dialects):
 * x402 v2's `batch-settlement` scheme and the `session` intent of the HTTP `Payment` scheme (MPP).
 * Only an encoding of our own session protocol: the open is our wallet-signed SessionOpen (the
 * seller opens the session at the gateway, the cap is held on the buyer's wallet), each call's
 * payment is our session-key-signed Voucher, the close is our SessionCloseRequest, the state of a
 * corrective 402 is our SessionState and the receipt of a call is the seller-signed SessionReceipt.
 * None of it is on a chain.
 *
 *   x402 PAYMENT-SIGNATURE payload   {type: 'deposit', open} | {type: 'voucher', voucher} | {type: 'refund', close}
 *   Payment credential payload       {action: 'open', open} | {action: 'voucher', voucher} | {action: 'close', close}
 *
 * Our voucher binds the session id, which the gateway names at the open: the open cannot carry
 * the first voucher (as x402's deposit and MPP's open do). The seller answers an open with a
 * corrective 402 that carries the grant (x402: `accepts[].extra.grant`; Payment: the session
 * challenge's `request.methodDetails.grant`); the stock clients retry, and the plug-in pays that
 * retry with the first voucher.
 *
 * Pure functions, no Node imports: shared by the seller core and the client plug-ins.
 */
import { Value } from '@sinclair/typebox/value';
import {
  SessionCloseRequest as SessionCloseRequestSchema, SessionOpen as SessionOpenSchema, Voucher as VoucherSchema,
  type Session, type SessionCloseRequest, type SessionGrant, type SessionOffer, type SessionOpen, type SessionReceipt, type SessionState, type Voucher,
} from '../contract/sessions.js';
import type { PriceChallenge } from '../protocol.js';
import {
  AGENTPAY_SCHEME, AUTHORIZATION_HEADER, decodePaymentCredential, decodeX402Header, encodePaymentRequest, encodeX402Header, parsePaymentChallenges,
  PAYMENT_RECEIPT_HEADER, WWW_AUTHENTICATE_HEADER, X402_PAYMENT_REQUIRED_HEADER, X402_PAYMENT_RESPONSE_HEADER, X402_PAYMENT_SIGNATURE_HEADER,
  asX402PaymentPayload, DEFAULT_AGENTPAY_NETWORK, type PaymentChallengeParams, type X402PaymentRequired, type X402PaymentRequirements, type X402SettlementResponse,
} from './wire.js';
import { toBase64Url } from '../contract/base64.js';

/** The x402 scheme name of a payment session (x402 v2's `batch-settlement`, on the agentpay network). */
export const X402_SESSION_SCHEME = 'batch-settlement';
/** The Payment-scheme intent of a payment session (MPP's `session`), method `agentpay`. */
export const AGENTPAY_SESSION_INTENT = 'session';

export const X402_SESSION_HINT = 'a payment session in the agentpay scheme: npm install agentpay-sdk and register createAgentpayX402SessionScheme from agentpay-sdk/x402 on your x402Client for agentpay:*';
export const MPP_SESSION_HINT = 'a payment session in the agentpay method: npm install agentpay-sdk and add agentpayMppxSession(...).method from agentpay-sdk/mppx to Mppx.create({ methods })';

/**
 * What a session entry of a 402 carries beside the plain fields (x402 `extra`, Payment
 * `request.methodDetails`). A first 402 has the signed price challenge; a corrective 402 has the
 * grant (after an open) or the state (after a refused voucher) instead.
 */
export interface SessionDetails {
  howToPay?: string;
  /** the platform-signed price of one call: what the plug-in opens for and checks each price against */
  challenge?: PriceChallenge;
  /** the fingerprint of the request this 402 answers: what the voucher of its retry signs */
  requestHash: string;
  session: SessionOffer;
  /** after an open: the platform-signed grant, pay the retry with the first voucher */
  grant?: SessionGrant;
  /** after a refused voucher: where the seller stands with the session (the corrective 402) */
  channelState?: SessionState | null;
  /** the session the corrective 402 is about */
  channelId?: string;
  /** why the voucher was refused (our code: VOUCHER_STALE, SESSION_NOT_FOUND, …) */
  refusal?: string;
}

export type SessionStep =
  | { kind: 'open'; open: SessionOpen }
  | { kind: 'voucher'; voucher: Voucher }
  | { kind: 'close'; close: SessionCloseRequest };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The session details of an x402 entry or a Payment request (undefined when it carries none). */
export function sessionDetailsOf(v: unknown): SessionDetails | undefined {
  return isObject(v) && typeof v.requestHash === 'string' && isObject(v.session) ? (v as unknown as SessionDetails) : undefined;
}

// ---- x402 batch-settlement ----

const X402_TYPE = { open: 'deposit', voucher: 'voucher', close: 'refund' } as const;
const PAYMENT_ACTION = { open: 'open', voucher: 'voucher', close: 'close' } as const;

/** The x402 payload of a session step. */
export function x402SessionPayload(step: SessionStep): Record<string, unknown> {
  return step.kind === 'open' ? { type: X402_TYPE.open, open: step.open } : step.kind === 'voucher' ? { type: X402_TYPE.voucher, voucher: step.voucher } : { type: X402_TYPE.close, close: step.close };
}

/** The Payment credential payload of a session step. */
export function paymentSessionPayload(step: SessionStep): Record<string, unknown> {
  return step.kind === 'open' ? { action: PAYMENT_ACTION.open, open: step.open } : step.kind === 'voucher' ? { action: PAYMENT_ACTION.voucher, voucher: step.voucher } : { action: PAYMENT_ACTION.close, close: step.close };
}

/** The session step a payload carries (either dialect's discriminator), checked against the contract; a string says what is wrong. */
export function sessionStepOf(payload: Record<string, unknown>): SessionStep | string {
  const tag = payload.type ?? payload.action;
  if (tag === X402_TYPE.open || tag === PAYMENT_ACTION.open) {
    return Value.Check(SessionOpenSchema, payload.open) ? { kind: 'open', open: payload.open as SessionOpen } : 'payload.open is not a signed session open request';
  }
  if (tag === X402_TYPE.voucher) {
    return Value.Check(VoucherSchema, payload.voucher) ? { kind: 'voucher', voucher: payload.voucher as Voucher } : 'payload.voucher is not a signed voucher';
  }
  if (tag === X402_TYPE.close || tag === PAYMENT_ACTION.close) {
    return Value.Check(SessionCloseRequestSchema, payload.close) ? { kind: 'close', close: payload.close as SessionCloseRequest } : 'payload.close is not a signed session close';
  }
  if (tag === 'topUp') return 'topUp is not taken on the wire yet: open another session';
  return `unknown session step ${JSON.stringify(tag)}: deposit/open, voucher or refund/close`;
}

export type SessionCredentialRead =
  | { kind: 'step'; dialect: 'x402' | 'payment'; step: SessionStep; challengeId?: string }
  | { kind: 'invalid'; dialect: 'x402' | 'payment'; message: string };

type HeaderGetter = (name: string) => string | undefined;

/**
 * The session step of a request in another dialect: PAYMENT-SIGNATURE of scheme
 * `batch-settlement`, or `Authorization: Payment` of method `agentpay`, intent `session`.
 * undefined when the request carries neither (a per-call credential is read elsewhere).
 */
export function readSessionCredential(get: HeaderGetter): SessionCredentialRead | undefined {
  const sig = get(X402_PAYMENT_SIGNATURE_HEADER);
  if (sig) {
    let p;
    try {
      p = asX402PaymentPayload(decodeX402Header(sig));
    } catch {
      return undefined; // the per-call reader answers a malformed header
    }
    if (!p || p.accepted.scheme !== X402_SESSION_SCHEME) return undefined;
    const step = sessionStepOf(p.payload);
    return typeof step === 'string' ? { kind: 'invalid', dialect: 'x402', message: step } : { kind: 'step', dialect: 'x402', step };
  }
  const auth = get(AUTHORIZATION_HEADER);
  if (auth && /(^|,)\s*Payment\s+/i.test(auth)) {
    let c;
    try {
      c = decodePaymentCredential(auth);
    } catch {
      return undefined;
    }
    if (!c || c.challenge.method !== AGENTPAY_SCHEME || c.challenge.intent !== AGENTPAY_SESSION_INTENT) return undefined;
    const step = sessionStepOf(c.payload);
    return typeof step === 'string' ? { kind: 'invalid', dialect: 'payment', message: step } : { kind: 'step', dialect: 'payment', step, challengeId: String(c.challenge.id) };
  }
  return undefined;
}

export interface SessionEntryOptions {
  network?: string;
  /** seconds a buyer has to answer (x402 maxTimeoutSeconds) */
  timeoutSeconds?: number;
}

/** The `batch-settlement` entry of a 402's accepts. */
export function x402SessionRequirements(price: { amountMinor: string; currency: string; payTo: string }, details: SessionDetails, o: SessionEntryOptions = {}): X402PaymentRequirements {
  return {
    scheme: X402_SESSION_SCHEME,
    network: o.network ?? DEFAULT_AGENTPAY_NETWORK,
    amount: price.amountMinor,
    asset: price.currency,
    payTo: price.payTo,
    maxTimeoutSeconds: o.timeoutSeconds ?? 60,
    extra: { howToPay: X402_SESSION_HINT, ...details } as unknown as Record<string, unknown>,
  };
}

/** The Payment challenge of a session (intent `session`): id is the price challenge's nonce, or the session's id and state in a corrective 402. */
export function paymentSessionChallenge(id: string, realm: string, price: { amountMinor: string; currency: string; payTo: string }, details: SessionDetails, expires?: string): PaymentChallengeParams {
  return {
    id,
    realm,
    method: AGENTPAY_SCHEME,
    intent: AGENTPAY_SESSION_INTENT,
    request: { amount: price.amountMinor, currency: price.currency.toLowerCase(), recipient: price.payTo, unitType: 'call', methodDetails: { ...details } },
    ...(expires ? { expires } : {}),
    description: MPP_SESSION_HINT,
  };
}

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export function paymentChallengeHeaderOf(p: PaymentChallengeParams): string {
  return `Payment id=${quote(p.id)}, realm=${quote(p.realm)}, method=${quote(p.method)}, intent=${quote(p.intent)}, ${p.expires ? `expires=${quote(p.expires)}, ` : ''}request=${quote(encodePaymentRequest(p.request))}${p.description ? `, description=${quote(p.description)}` : ''}`;
}

/**
 * The headers of a first 402 with the session offered beside per-call payment: PAYMENT-REQUIRED
 * gets a `batch-settlement` entry after the others, WWW-Authenticate a second Payment challenge
 * (intent `session`).
 */
export function withSessionEntries(headers: Record<string, string>, challenge: PriceChallenge, details: SessionDetails, o: SessionEntryOptions = {}): Record<string, string> {
  const out = { ...headers };
  const price = { amountMinor: challenge.amountMinor, currency: challenge.currency, payTo: challenge.payTo };
  const timeoutSeconds = Math.max(1, Math.ceil((Date.parse(challenge.expiresAt) - Date.now()) / 1000));
  const required = out[X402_PAYMENT_REQUIRED_HEADER];
  if (required) {
    try {
      const r = decodeX402Header<X402PaymentRequired>(required);
      r.accepts = [...r.accepts, x402SessionRequirements(price, details, { ...o, timeoutSeconds })];
      out[X402_PAYMENT_REQUIRED_HEADER] = encodeX402Header(r);
    } catch {
      // not ours to repair
    }
  }
  const auth = out[WWW_AUTHENTICATE_HEADER];
  if (auth) {
    const realm = parsePaymentChallenges(auth)[0]?.realm ?? 'agentpay';
    out[WWW_AUTHENTICATE_HEADER] = `${auth}, ${paymentChallengeHeaderOf(paymentSessionChallenge(`${challenge.nonce}.session`, realm, price, details, challenge.expiresAt))}`;
  }
  return out;
}

/** x402's error of a refused voucher (`invalid_batch_settlement_<network binding>_<reason>`). */
export function x402SessionError(code: string): string {
  const reason: Record<string, string> = {
    VOUCHER_STALE: 'cumulative_amount_mismatch',
    VOUCHER_ABOVE_CAP: 'charge_exceeds_signed_cumulative',
    SESSION_NOT_FOUND: 'channel_not_found',
    SESSION_CLOSED: 'channel_not_found',
    SESSION_EXPIRED: 'channel_expired',
    VOUCHER_INVALID: 'invalid_voucher',
  };
  return `invalid_batch_settlement_agentpay_${reason[code] ?? code.toLowerCase()}`;
}

/**
 * The dialect headers of a corrective 402 (after an open: `details.grant`; after a refused
 * voucher: `details.channelState`): a PAYMENT-REQUIRED with the one session entry and the
 * error, or a WWW-Authenticate with the one session challenge.
 */
export function sessionCorrectiveHeaders(dialect: 'x402' | 'payment', o: {
  price: { amountMinor: string; currency: string; payTo: string }; details: SessionDetails; error: string; resourceUrl: string; realm: string; network?: string;
}): Record<string, string> {
  if (dialect === 'x402') {
    const required: X402PaymentRequired = { x402Version: 2, error: o.error, resource: { url: o.resourceUrl }, accepts: [x402SessionRequirements(o.price, o.details, o.network ? { network: o.network } : {})] };
    return { [X402_PAYMENT_REQUIRED_HEADER]: encodeX402Header(required), 'cache-control': 'no-store' };
  }
  const state = o.details.channelState;
  const id = `${o.details.channelId ?? o.details.grant?.sessionId ?? 'session'}.${state?.sequence ?? 0}.${o.error}`;
  return { [WWW_AUTHENTICATE_HEADER]: paymentChallengeHeaderOf(paymentSessionChallenge(id, o.realm, o.price, o.details)), 'cache-control': 'no-store' };
}

/** What a call paid with a voucher answers in the buyer's dialect: the seller-signed session receipt inside PAYMENT-RESPONSE or Payment-Receipt. */
export function sessionReceiptHeaders(dialect: 'x402' | 'payment', receipt: SessionReceipt, o: { walletId: string; network?: string; challengeId?: string }): Record<string, string> {
  if (dialect === 'x402') {
    // x402's voucher-only answer: no transaction, no amount moved now; what the call charged and the seller's signed receipt
    const s: X402SettlementResponse = { success: true, payer: o.walletId, transaction: '', network: o.network ?? DEFAULT_AGENTPAY_NETWORK, amount: '', extra: { chargedAmount: receipt.chargedMinor, sessionReceipt: receipt } };
    return { [X402_PAYMENT_RESPONSE_HEADER]: encodeX402Header(s) };
  }
  const v = { status: 'success', method: AGENTPAY_SCHEME, intent: AGENTPAY_SESSION_INTENT, timestamp: receipt.timestamp, reference: receipt.sessionId, challengeId: o.challengeId ?? '', sessionReceipt: receipt };
  return { [PAYMENT_RECEIPT_HEADER]: toBase64Url(new TextEncoder().encode(JSON.stringify(v))) };
}

/** What a close answers in the buyer's dialect (x402's refund: the rest of the cap released to the wallet). */
export function sessionCloseHeaders(dialect: 'x402' | 'payment', session: Session, o: { network?: string; challengeId?: string } = {}): Record<string, string> {
  const released = (BigInt(session.capMinor) - BigInt(session.claimedMinor)).toString();
  if (dialect === 'x402') {
    const s: X402SettlementResponse = { success: true, payer: session.walletId, transaction: session.id, network: o.network ?? DEFAULT_AGENTPAY_NETWORK, amount: released, extra: { session } };
    return { [X402_PAYMENT_RESPONSE_HEADER]: encodeX402Header(s) };
  }
  const v = { status: 'success', method: AGENTPAY_SCHEME, intent: AGENTPAY_SESSION_INTENT, timestamp: session.closedAt ?? new Date().toISOString(), reference: session.id, challengeId: o.challengeId ?? '', session };
  return { [PAYMENT_RECEIPT_HEADER]: toBase64Url(new TextEncoder().encode(JSON.stringify(v))) };
}
