/**
 * Idempotent retries, the seller's part (docs/protocol.md § Idempotent retries). The buyer's
 * key (the `Idempotency-Key` header; the x402 payment-identifier id maps to the same) goes to
 * the gateway's authorize with the seller's fingerprint of the request. A retry of a call that
 * succeeded comes back as a `Replay`: the seller answers the first answer, kept by the gateway,
 * with the first receipt, and does not run its handler again (so the answer is the one the
 * receipt signs, and a handler with side effects runs once). Node only (node:crypto).
 */
import { createHash } from 'node:crypto';
import { encodeHeader, RECEIPT_HEADER } from '../protocol.js';
import type { Replay } from '../types.js';

/** The request header a buyer sends its key in (the Payment scheme's and ours). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The most answer bytes the gateway keeps for a replay; a bigger answer replays as a 409 carrying its receipt. */
export const MAX_KEPT_RESPONSE_BYTES = 256 * 1024;

/** What the adapter knows of the buyer's key: the key and the request fingerprint. */
export interface IdempotentRequest {
  idempotencyKey: string;
  requestHash: string;
}

/** A key the gateway takes: 1 to 200 printable ASCII characters; anything else is ignored (the call is not idempotent). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  return typeof v === 'string' && /^[\x21-\x7e]{1,200}$/.test(v) ? v : undefined;
}

/**
 * `sha256:` hex of the method, the path with its query and the body. `body`: the bytes as
 * received, or a parsed body (serialized as JSON, so the same bytes give the same hash);
 * absent when the adapter cannot read it before the handler (node: the fingerprint then
 * covers the method, path and query only).
 */
export function requestFingerprint(method: string, pathAndQuery: string, body?: unknown): string {
  const h = createHash('sha256').update(`${method.toUpperCase()}\n${pathAndQuery}\n`);
  if (body instanceof Uint8Array) h.update(body);
  else if (typeof body === 'string') h.update(body, 'utf8');
  else if (body !== undefined && body !== null) h.update(JSON.stringify(body), 'utf8');
  return `sha256:${h.digest('hex')}`;
}

/** The request's key and fingerprint, or undefined when the buyer sent no (usable) key. */
export function idempotentRequest(header: string | string[] | undefined, method: string, pathAndQuery: string, body?: unknown): IdempotentRequest | undefined {
  const idempotencyKey = idempotencyKeyOf(header);
  return idempotencyKey === undefined ? undefined : { idempotencyKey, requestHash: requestFingerprint(method, pathAndQuery, body) };
}

/** The answer to a replay: the first answer and its receipt (`idempotent-replayed: true`). */
export function replayAnswer(r: Replay): { status: number; headers: Record<string, string>; body: Buffer } {
  const receipt = { [RECEIPT_HEADER]: encodeHeader(r.receipt), 'idempotent-replayed': 'true' };
  if (r.response) {
    return {
      status: r.response.status,
      headers: { ...(r.response.contentType ? { 'content-type': r.response.contentType } : {}), ...receipt },
      body: Buffer.from(r.response.body, 'base64'),
    };
  }
  // the first answer was too big to keep: the buyer gets its receipt (in the body: the receipt
  // signs the first answer's bytes, not these), and was not charged again
  return {
    status: 409,
    headers: { 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' },
    body: Buffer.from(JSON.stringify({
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
  return { status, ...(contentType ? { contentType } : {}), body: Buffer.from(body).toString('base64') };
}
