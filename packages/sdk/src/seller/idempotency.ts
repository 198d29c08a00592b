/**
 * Idempotent retries, the seller's part (docs/protocol.md § Idempotent retries). The buyer's
 * key (the `Idempotency-Key` header; the x402 payment-identifier id maps to the same) goes to
 * the gateway's authorize with the seller's fingerprint of the request. A retry of a call that
 * succeeded comes back as a `Replay`: the seller answers the first answer, kept by the gateway,
 * with the first receipt, and does not run its handler again (so the answer is the one the
 * receipt signs, and a handler with side effects runs once).
 *
 * Portable like the rest of the seller core: WebCrypto for the fingerprint, ../base64.ts for the
 * kept bytes, no Node imports.
 */
import { fromBase64, toBase64 } from '../contract/base64.js';
import { toHex } from '../protocol.js';
import type { Replay } from '../types.js';

/** The request header a buyer sends its key in (the Payment scheme's and ours). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The header a replayed answer carries (`true`). */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** The most answer bytes the gateway keeps for a replay; a bigger answer replays as a 409 carrying its receipt. */
export const MAX_KEPT_RESPONSE_BYTES = 256 * 1024;

/** What the seller sends the gateway with authorize: the buyer's key and the request fingerprint. */
export interface IdempotentRequest {
  idempotencyKey: string;
  requestHash: string;
}

/** A key the gateway takes: 1 to 200 printable ASCII characters; anything else is ignored (the call is not idempotent). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  return typeof v === 'string' && /^[\x21-\x7e]{1,200}$/.test(v) ? v : undefined;
}

const utf8 = new TextEncoder();

/**
 * `sha256:` hex of the method, the path with its query and the body. `body`: the bytes as
 * received, or a parsed body (serialized as JSON, so the same bytes give the same hash);
 * absent when the adapter cannot read it before the handler (node: the fingerprint then
 * covers the method, path and query only).
 */
export async function requestFingerprint(method: string, pathAndQuery: string, body?: unknown): Promise<string> {
  const head = utf8.encode(`${method.toUpperCase()}\n${pathAndQuery}\n`);
  const tail = body instanceof Uint8Array ? body
    : typeof body === 'string' ? utf8.encode(body)
    : body !== undefined && body !== null ? utf8.encode(JSON.stringify(body))
    : new Uint8Array(0);
  const all = new Uint8Array(head.length + tail.length);
  all.set(head, 0);
  all.set(tail, head.length);
  const digest = await globalThis.crypto.subtle.digest('SHA-256', all);
  return `sha256:${toHex(new Uint8Array(digest))}`;
}

/** The answer to a replay (before the receipt and CORS headers): the first answer, or a 409 when it was not kept. */
export function replayAnswer(r: Replay): { status: number; headers: Record<string, string>; body: Uint8Array } {
  if (r.response) {
    return {
      status: r.response.status,
      headers: { ...(r.response.contentType ? { 'content-type': r.response.contentType } : {}), [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
      body: fromBase64(r.response.body),
    };
  }
  // the first answer was too big to keep: the buyer gets its receipt (in the body: the receipt
  // signs the first answer's bytes, not these), and was not charged again
  return {
    status: 409,
    headers: { 'content-type': 'application/json; charset=utf-8', [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
    body: utf8.encode(JSON.stringify({
      error: {
        code: 'IDEMPOTENT_REPLAY_WITHOUT_ANSWER',
        message: `this request already succeeded (transaction ${r.transactionId}) and was not charged again, but its answer was too big to keep; details.receipt is the first answer's receipt`,
        details: { transactionId: r.transactionId, receipt: r.receipt },
      },
    })),
  };
}

/** The answer to keep with complete, when it is small enough. */
export function keptResponse(status: number, contentType: string | undefined, body: Uint8Array): { status: number; contentType?: string; body: string } | undefined {
  if (body.length > MAX_KEPT_RESPONSE_BYTES) return undefined;
  return { status, ...(contentType ? { contentType } : {}), body: toBase64(body) };
}
