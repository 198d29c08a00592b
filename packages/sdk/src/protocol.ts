/**
 * The wire pieces of the 402 payment protocol (docs/protocol.md) shared by the seller
 * middleware and the buyer client: header names, the header encoding (base64url of
 * UTF-8 JSON, no padding), the response hash and the shapes that travel. Runs in
 * browsers and edge runtimes: WebCrypto and plain JavaScript only, no Node imports.
 */
import { fromBase64Url, toBase64Url } from './base64.js';
import type { Challenge, PaymentProof, Receipt } from './types.js';

/** Request header carrying the buyer's payment proof. */
export const PAYMENT_HEADER = 'x-payment';
/** Response header carrying the signed receipt of a paid call. */
export const RECEIPT_HEADER = 'x-service-receipt';

/**
 * What a browser needs to see the protocol headers (seller CORS settings), ours and those of the
 * other dialects a seller speaks (interop/wire.ts: x402 v2, the HTTP Payment scheme).
 */
export const CORS_EXPOSE_HEADERS: readonly string[] = [PAYMENT_HEADER, RECEIPT_HEADER, 'payment-required', 'payment-response', 'www-authenticate', 'payment-receipt', 'idempotent-replayed'];
export const CORS_ALLOW_HEADERS: readonly string[] = [PAYMENT_HEADER, 'content-type', 'payment-signature', 'authorization', 'idempotency-key', 'accept-payment'];

/** The wire shapes live in types.ts with the rest of the API; these names read as the protocol does. */
export type PriceChallenge = Challenge;
export type { PaymentProof, Receipt };
export type UnsignedPaymentProof = Omit<PaymentProof, 'signature'>;

/** Body of the seller's answer to an unpaid call. */
export interface PaymentRequiredBody {
  error: { code: 'PAYMENT_REQUIRED'; message: string; details?: Record<string, unknown> };
  challenge: PriceChallenge;
}

export function paymentRequiredBody(challenge: PriceChallenge): PaymentRequiredBody {
  return {
    error: { code: 'PAYMENT_REQUIRED', message: `payment required: ${challenge.amountMinor} ${challenge.currency} minor units per call; send a signed proof in the ${PAYMENT_HEADER} header` },
    challenge,
  };
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function base64UrlEncode(bytes: Uint8Array): string {
  return toBase64Url(bytes);
}

/** Throws on anything that is not base64url (padding tolerated). */
export function base64UrlDecode(text: string): Uint8Array {
  return fromBase64Url(text);
}

/** A JSON object as a header value: base64url of its UTF-8 JSON text. */
export function encodeHeader(value: unknown): string {
  return base64UrlEncode(utf8.encode(JSON.stringify(value)));
}

/** The inverse of encodeHeader; throws if the value is not base64url JSON of an object. */
export function decodeHeader<T = Record<string, unknown>>(value: string): T {
  const parsed: unknown = JSON.parse(utf8Decoder.decode(base64UrlDecode(value.trim())));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('header is not a JSON object');
  return parsed as T;
}

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** `sha256:<lowercase hex>` of the exact body bytes (strings are hashed as UTF-8). */
export async function responseHash(body: Uint8Array | ArrayBuffer | string): Promise<string> {
  const bytes = typeof body === 'string' ? utf8.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body);
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
  return `sha256:${toHex(new Uint8Array(digest))}`;
}

/** Minimal shape checks, so a malformed header fails with a clear reason instead of deep inside. */
export function isPriceChallenge(v: unknown): v is PriceChallenge {
  if (!v || typeof v !== 'object') return false;
  const c = v as Record<string, unknown>;
  return ['capabilityId', 'providerId', 'amountMinor', 'currency', 'nonce', 'expiresAt', 'payTo', 'signature', 'signingKeyId'].every((k) => typeof c[k] === 'string')
    && /^(0|[1-9][0-9]*)$/.test(c.amountMinor as string);
}

export function isReceipt(v: unknown): v is Receipt {
  if (!v || typeof v !== 'object') return false;
  const r = v as Record<string, unknown>;
  const amount = r.amount as Record<string, unknown> | undefined;
  return ['id', 'transactionId', 'providerId', 'consumerId', 'capabilityId', 'timestamp', 'signature', 'signingKeyId'].every((k) => typeof r[k] === 'string')
    && (r.status === 'success' || r.status === 'failed')
    && (r.responseHash === null || r.responseHash === undefined || typeof r.responseHash === 'string')
    && !!amount && typeof amount.amountMinor === 'string' && typeof amount.currency === 'string';
}
