/**
 * The wire pieces of the 402 payment protocol (docs/protocol.md) shared by the seller
 * middleware and the buyer client: header names, the header encoding (base64url of
 * UTF-8 JSON, no padding), the response hash and the shapes that travel. Runs in
 * browsers and edge runtimes: WebCrypto and plain JavaScript only, no Node imports.
 */
import { fromBase64Url, toBase64Url } from './contract/base64.js';
import { challengeProblem, receiptProblems } from './contract/checks.js';
import { decodeHeader, encodeHeader } from './contract/header.js';
import { SESSION_CLOSE_HEADER, SESSION_GRANT_HEADER, SESSION_OPEN_HEADER, SESSION_RECEIPT_HEADER, VOUCHER_HEADER } from './contract/sessions.js';
import type { Challenge, PaymentProof, Receipt } from './types.js';

/** Request header carrying the buyer's payment proof. */
export const PAYMENT_HEADER = 'x-payment';
/** Response header carrying the signed receipt of a paid call. */
export const RECEIPT_HEADER = 'x-service-receipt';

/**
 * What a browser needs to see the protocol headers (seller CORS settings), ours and those of the
 * other dialects a seller speaks (interop/wire.ts: x402 v2, the HTTP Payment scheme), and those of
 * payment sessions (contract/sessions.ts: the grant and the per-call receipt read; the open, the
 * voucher and the close sent).
 */
export const CORS_EXPOSE_HEADERS: readonly string[] = [PAYMENT_HEADER, RECEIPT_HEADER, 'payment-required', 'payment-response', 'www-authenticate', 'payment-receipt', 'idempotent-replayed', SESSION_GRANT_HEADER, SESSION_RECEIPT_HEADER];
export const CORS_ALLOW_HEADERS: readonly string[] = [PAYMENT_HEADER, 'content-type', 'payment-signature', 'authorization', 'idempotency-key', 'accept-payment', SESSION_OPEN_HEADER, VOUCHER_HEADER, SESSION_CLOSE_HEADER];

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

export function base64UrlEncode(bytes: Uint8Array): string {
  return toBase64Url(bytes);
}

/** Throws on anything that is not base64url (padding tolerated). */
export function base64UrlDecode(text: string): Uint8Array {
  return fromBase64Url(text);
}

/** The header encoding is the contract's (contract/header.ts): one for the gateway, the SDK and the CLI. */
export { decodeHeader, encodeHeader };

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

/**
 * Shape checks, so a malformed header fails with a clear reason instead of deep inside: the
 * contract's one challenge and receipt checks (contract/checks.ts), which the gateway and the CLI
 * use too. A success receipt without a responseHash passes here: the payer refuses it with its own reason.
 */
export function isPriceChallenge(v: unknown): v is PriceChallenge {
  return challengeProblem(v) === undefined;
}

export function isReceipt(v: unknown): v is Receipt {
  return receiptProblems(v).every((p) => p.kind === 'success-without-response');
}
