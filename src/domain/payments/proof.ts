/**
 * Payment proofs as they arrive: the object, or the `x-payment` header value
 * (base64url of its UTF-8 JSON). Parsing checks shape only; signatures are checked
 * by `authorize`. Every refusal names the field, under `payment.`.
 */
import { validationError } from '../../core/errors.js';
import { parseIsoTime } from '../../core/clock.js';
import { CURRENCIES, parseMinor } from '../../core/money.js';
import type { PaymentProof as ContractPaymentProof } from 'agentpay-sdk/contract';

/** The wire shape, from the contract (agentpay-sdk/contract); a proof may carry more fields, all signed. */
export type PaymentProof = ContractPaymentProof & Record<string, unknown>;

/** A proof with the challenge fields the gateway computes with, already parsed. */
export interface ParsedProof {
  proof: PaymentProof;
  amountMinor: bigint;
  expiresAtMs: number;
}

/** Far more than any real proof (about 1 KB); keeps a hostile header from costing much. */
const MAX_HEADER_LENGTH = 16_384;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodeHeader(value: string): unknown {
  if (value.length > MAX_HEADER_LENGTH || !BASE64URL.test(value)) {
    throw validationError('payment', 'must be a payment proof object or the x-payment header value (base64url of the proof JSON)');
  }
  try {
    return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw validationError('payment', 'is not base64url of a JSON payment proof');
  }
}

function str(obj: Record<string, unknown>, key: string, path: string, max = 200): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw validationError(`${path}.${key}`, `must be a non-empty string of at most ${max} characters`);
  return v;
}

function time(obj: Record<string, unknown>, key: string, path: string): number {
  const v = str(obj, key, path, 40);
  const ms = ISO_UTC.test(v) ? parseIsoTime(v) : undefined;
  if (ms === undefined) throw validationError(`${path}.${key}`, 'must be an ISO-8601 time in UTC, e.g. "2026-11-21T10:05:00.000Z"');
  return ms;
}

function signature(obj: Record<string, unknown>, path: string): string {
  const v = obj.signature;
  if (typeof v !== 'string' || !SIGNATURE.test(v)) throw validationError(`${path}.signature`, 'must be a base64 ed25519 signature (88 characters)');
  return v;
}

export function parsePaymentProof(payment: unknown): ParsedProof {
  const raw = typeof payment === 'string' ? decodeHeader(payment) : payment;
  if (!isPlainObject(raw)) throw validationError('payment', 'must be a payment proof object or the x-payment header value');
  if (raw.version !== 1) throw validationError('payment.version', 'must be 1');
  const c = raw.challenge;
  if (!isPlainObject(c)) throw validationError('payment.challenge', 'must be the signed price challenge the seller answered 402 with');
  const cp = 'payment.challenge';
  for (const k of ['capabilityId', 'providerId', 'payTo', 'signingKeyId']) str(c, k, cp);
  str(c, 'nonce', cp, 100);
  const amountMinor = parseMinor(c.amountMinor, `${cp}.amountMinor`);
  if (!(CURRENCIES as readonly unknown[]).includes(c.currency)) throw validationError(`${cp}.currency`, `must be one of ${CURRENCIES.join(', ')}`);
  const expiresAtMs = time(c, 'expiresAt', cp);
  signature(c, cp);
  str(raw, 'walletId', 'payment');
  time(raw, 'signedAt', 'payment');
  signature(raw, 'payment');
  return { proof: raw as PaymentProof, amountMinor, expiresAtMs };
}
