/**
 * The shape checks of the payment protocol's signed objects, once: the price challenge, the
 * payment proof that embeds it, and the receipt (docs/protocol.md). The gateway checks proofs
 * with them before it verifies a signature, the SDK checks challenges and receipts before it
 * signs or trusts one, the CLI checks a receipt before `receipts verify`. Each returns the
 * problems by field, with a reason worded for people and a `kind` a caller can map to its own
 * error code or wording. Signatures are not verified here, only their encoding.
 *
 * The lengths come from the TypeBox schemas of payment.ts (PriceChallenge, PaymentProof), so the
 * two cannot disagree on what fits; test/sdk/checks-agree.test.ts proves that the checks accept
 * exactly the lengths the schemas accept.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import { PaymentProof, PriceChallenge } from './payment.js';

/** One field that is not what the protocol says. */
export interface ShapeProblem {
  /** the field, as a path: `payment.challenge.nonce`, `amount.currency`, `(receipt)` for the whole */
  field: string;
  /** what is wrong and what it should be, e.g. "must be 1" */
  reason: string;
  /**
   * what kind of rule failed: `object` (not an object at all), `amount` (not integer minor units
   * in range), `success-without-response` (a success receipt whose responseHash is null; the
   * shape is otherwise fine), `field` (anything else)
   */
  kind: 'object' | 'amount' | 'success-without-response' | 'field';
}

/** The largest amount the platform handles (10^15 minor units), as on every amount of the API. */
const MAX_MINOR = 10n ** 15n;
const MINOR = /^(0|[1-9][0-9]*)$/;
/** base64 of a 64-byte ed25519 signature. */
const SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;
const RESPONSE_HASH = /^sha256:[0-9a-f]{64}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const problem = (field: string, reason: string, kind: ShapeProblem['kind'] = 'field'): ShapeProblem => ({ field, reason, kind });

/**
 * An ISO 8601 time in UTC (`2026-11-21T10:05:00.000Z`) naming a real moment, as epoch
 * milliseconds; undefined otherwise (Date.parse alone would roll 2026-02-30 over to March 2).
 */
export function isoUtcMs(text: string): number | undefined {
  const m = ISO_UTC.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A positive amount of integer minor units, at most 10^15, as a string. */
export function isPositiveMinor(v: unknown): v is string {
  return typeof v === 'string' && MINOR.test(v) && v !== '0' && BigInt(v) <= MAX_MINOR;
}

/** The longest string a schema's field takes: its maxLength, else 200. */
const maxOf = (schema: TObject, key: string): number => ((schema.properties as Record<string, TSchema>)[key]?.maxLength as number | undefined) ?? 200;

function str(o: Record<string, unknown>, key: string, path: string, max = 200): ShapeProblem | undefined {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) return problem(`${path}.${key}`, `must be a non-empty string of at most ${max} characters`);
  return undefined;
}

function time(o: Record<string, unknown>, key: string, path: string): ShapeProblem | undefined {
  const bad = str(o, key, path, 40);
  if (bad) return bad;
  if (isoUtcMs(o[key] as string) === undefined) return problem(`${path}.${key}`, 'must be an ISO-8601 time in UTC, e.g. "2026-11-21T10:05:00.000Z"');
  return undefined;
}

function signature(o: Record<string, unknown>, path: string): ShapeProblem | undefined {
  const v = o.signature;
  if (typeof v !== 'string' || !SIGNATURE.test(v)) return problem(`${path}.signature`, 'must be a base64 ed25519 signature (88 characters)');
  return undefined;
}

export interface ChallengeCheckOptions {
  /** the currencies accepted; default any non-empty string of at most 200 characters */
  currencies?: readonly string[];
}

/**
 * The first problem of a signed price challenge, or undefined when its shape is right. `path`
 * prefixes the field names (`challenge` alone, `payment.challenge` inside a proof).
 */
export function challengeProblem(v: unknown, path = 'challenge', opts: ChallengeCheckOptions = {}): ShapeProblem | undefined {
  if (!isObject(v)) return problem(path, 'must be the signed price challenge the seller answered 402 with', 'object');
  for (const k of ['capabilityId', 'providerId', 'payTo', 'signingKeyId']) {
    const bad = str(v, k, path, maxOf(PriceChallenge, k));
    if (bad) return bad;
  }
  const nonce = str(v, 'nonce', path, maxOf(PriceChallenge, 'nonce'));
  if (nonce) return nonce;
  if (!isPositiveMinor(v.amountMinor)) return problem(`${path}.amountMinor`, `must be a string of integer minor units from 1 to ${MAX_MINOR}, e.g. "100"`, 'amount');
  if (opts.currencies ? !opts.currencies.includes(v.currency as string) : typeof v.currency !== 'string' || !v.currency || v.currency.length > 200) {
    return problem(`${path}.currency`, opts.currencies ? `must be one of ${opts.currencies.join(', ')}` : 'must be a currency code string, e.g. "USD"');
  }
  return time(v, 'expiresAt', path) ?? signature(v, path);
}

/**
 * The first problem of a payment proof (the decoded x-payment header), fields under `payment.`,
 * or undefined when its shape is right; with it, the challenge's expiry as epoch milliseconds.
 */
export function proofProblem(v: unknown, opts: ChallengeCheckOptions = {}): ShapeProblem | undefined {
  if (!isObject(v)) return problem('payment', 'must be a payment proof object or the x-payment header value', 'object');
  if (v.version !== 1) return problem('payment.version', 'must be 1');
  return challengeProblem(v.challenge, 'payment.challenge', opts) ?? str(v, 'walletId', 'payment', maxOf(PaymentProof, 'walletId')) ?? time(v, 'signedAt', 'payment') ?? signature(v, 'payment');
}

const RECEIPT_IDS = ['id', 'transactionId', 'providerId', 'consumerId', 'capabilityId'] as const;

/** Every field of a receipt that is not what the protocol (docs/protocol.md, Receipt) says, by name. */
export function receiptProblems(v: unknown): ShapeProblem[] {
  if (!isObject(v)) return [problem('(receipt)', 'is not a JSON object', 'object')];
  const out: ShapeProblem[] = [];
  for (const f of RECEIPT_IDS) if (typeof v[f] !== 'string' || !v[f]) out.push(problem(f, 'must be a non-empty string'));
  const amount = v.amount;
  if (!isObject(amount)) out.push(problem('amount', 'must be an object {amountMinor, currency}'));
  else {
    if (typeof amount.amountMinor !== 'string' || !MINOR.test(amount.amountMinor)) out.push(problem('amount.amountMinor', 'must be a string of integer minor units, e.g. "100"', 'amount'));
    if (typeof amount.currency !== 'string' || !amount.currency) out.push(problem('amount.currency', 'must be a currency code string, e.g. "USD"'));
  }
  if (v.status !== 'success' && v.status !== 'failed') out.push(problem('status', 'must be "success" or "failed"'));
  if (!('responseHash' in v)) out.push(problem('responseHash', 'is missing (a receipt carries it, null when there was no response)'));
  else if (v.responseHash === null) {
    if (v.status === 'success') out.push(problem('responseHash', 'a success receipt must cover a response, but it is null', 'success-without-response'));
  } else if (typeof v.responseHash !== 'string' || !RESPONSE_HASH.test(v.responseHash)) {
    out.push(problem('responseHash', 'must be "sha256:" and 64 lowercase hex digits, or null'));
  }
  if (typeof v.timestamp !== 'string' || Number.isNaN(Date.parse(v.timestamp))) out.push(problem('timestamp', 'must be an ISO-8601 time string'));
  if (typeof v.signature !== 'string' || !SIGNATURE.test(v.signature)) out.push(problem('signature', 'must be the base64 of a 64-byte ed25519 signature'));
  if (typeof v.signingKeyId !== 'string' || !v.signingKeyId) out.push(problem('signingKeyId', 'must name the receipt key, e.g. "sk_…"'));
  return out;
}
