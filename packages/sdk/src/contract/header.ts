/**
 * The header encoding of the payment protocol (docs/protocol.md), once: a JSON object as a
 * header value is base64url (no padding; padding tolerated on reading) of its UTF-8 JSON text.
 * The gateway reads x-payment with it, the SDK writes and reads every header with it, the CLI
 * reads a pasted x-service-receipt with it. Runs anywhere (no Buffer).
 */
import { fromBase64Url, toBase64Url } from './base64.js';

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Why a header value could not be read: each reader words its own refusal from this. */
export type HeaderProblem = 'too-long' | 'not-base64url' | 'not-json' | 'not-object';

export type HeaderReading = { ok: true; value: Record<string, unknown> } | { ok: false; problem: HeaderProblem };

/** A JSON object as a header value: base64url of its UTF-8 JSON text. */
export function encodeHeader(value: unknown): string {
  return toBase64Url(utf8.encode(JSON.stringify(value)));
}

/**
 * A header value read back: the JSON object it carries, or why not. `maxLength` bounds what a
 * hostile value may cost before it is decoded (surrounding white space is not counted).
 */
export function readHeader(value: string, opts: { maxLength?: number } = {}): HeaderReading {
  const text = value.trim();
  if (opts.maxLength !== undefined && text.length > opts.maxLength) return { ok: false, problem: 'too-long' };
  if (!BASE64URL.test(text)) return { ok: false, problem: 'not-base64url' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decoder.decode(fromBase64Url(text)));
  } catch {
    return { ok: false, problem: 'not-json' };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, problem: 'not-object' };
  return { ok: true, value: parsed as Record<string, unknown> };
}

/** The inverse of encodeHeader; throws if the value is not base64url JSON of an object. */
export function decodeHeader<T = Record<string, unknown>>(value: string): T {
  const r = readHeader(value);
  if (!r.ok) throw new Error(r.problem === 'not-object' ? 'header is not a JSON object' : 'header is not base64url of JSON');
  return r.value as T;
}
