/**
 * Webhook signatures (docs/api/webhooks.md): the header `agentpay-signature: t=<unix seconds>,v1=<hex>`
 * where v1 is HMAC-SHA256, keyed with the endpoint's secret (the whole `whsec_…` string as UTF-8),
 * over `${t}.${rawBody}`. Several v1 entries may appear (one per secret while a secret is being
 * replaced); one match is enough.
 *
 * WebCrypto only (`globalThis.crypto.subtle`): runs in Node 20, Deno, Bun, browsers and edge runtimes.
 */

export const SIGNATURE_HEADER = 'agentpay-signature';
/** How old a signature's timestamp may be (either way) by default, in seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

export type WebhookVerifyFailure = 'malformed_header' | 'no_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch';

/** Thrown by verifyWebhookSignature; `reason` says which check failed. */
export class WebhookSignatureError extends Error {
  constructor(readonly reason: WebhookVerifyFailure, message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

export interface VerifyOptions {
  /** seconds a timestamp may be away from `now` (default 300); 0 or less turns the check off */
  toleranceSec?: number;
  /** the time now, epoch milliseconds (default Date.now()) */
  now?: number;
}

const encoder = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('webhook signatures need WebCrypto (globalThis.crypto.subtle); this runtime has none');
  return s;
}

const toHex = (b: ArrayBuffer) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toHex(await subtle().sign('HMAC', key, encoder.encode(message)));
}

/** Compares without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const bodyText = (rawBody: string | Uint8Array | ArrayBuffer) =>
  typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: false }).decode(rawBody);

/**
 * The header value for a body: `t=<timestamp>,v1=<signature>` with one v1 per secret (during a
 * rotation, the new secret first). `timestamp` is unix seconds.
 */
export async function signWebhookPayload(rawBody: string | Uint8Array, secrets: string | readonly string[], timestamp: number): Promise<string> {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new TypeError('timestamp must be whole unix seconds');
  const body = bodyText(rawBody);
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  const sigs = await Promise.all(list.map((s) => hmacHex(s, `${timestamp}.${body}`)));
  return [`t=${timestamp}`, ...sigs.map((s) => `v1=${s}`)].join(',');
}

/** The parts of a signature header; undefined when it has no usable `t`. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,15}$/.test(v)) timestamp = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v)) signatures.push(v.toLowerCase());
  }
  return timestamp === undefined ? undefined : { timestamp, signatures };
}

/**
 * Checks a delivery: the exact raw body as received (not re-serialized JSON), the
 * `agentpay-signature` header, and the endpoint's secret (or several, while replacing it).
 * Resolves to the parsed event when a v1 signature matches and the timestamp is within
 * `toleranceSec` of `now`; otherwise throws WebhookSignatureError.
 */
export async function verifyWebhookSignature<T = WebhookEvent>(
  rawBody: string | Uint8Array | ArrayBuffer,
  header: string | null | undefined,
  secret: string | readonly string[],
  opts: VerifyOptions = {},
): Promise<T> {
  if (!header) throw new WebhookSignatureError('malformed_header', `no ${SIGNATURE_HEADER} header`);
  const parsed = parseSignatureHeader(header);
  if (!parsed) throw new WebhookSignatureError('malformed_header', `${SIGNATURE_HEADER} has no t=<unix seconds>`);
  if (parsed.signatures.length === 0) throw new WebhookSignatureError('no_signature', `${SIGNATURE_HEADER} has no v1 signature`);
  const tolerance = opts.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const nowSec = Math.floor((opts.now ?? Date.now()) / 1000);
  if (tolerance > 0 && Math.abs(nowSec - parsed.timestamp) > tolerance) {
    throw new WebhookSignatureError('timestamp_out_of_tolerance', `the signature's timestamp is ${nowSec - parsed.timestamp} s away from now (tolerance ${tolerance} s)`);
  }
  const body = bodyText(rawBody);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  for (const s of secrets) {
    const expected = await hmacHex(s, `${parsed.timestamp}.${body}`);
    if (parsed.signatures.some((sig) => sameText(sig, expected))) return JSON.parse(body) as T;
  }
  throw new WebhookSignatureError('signature_mismatch', 'no v1 signature matches this body and secret');
}

/** What a delivery's body holds: one event, as GET /v1/events shows it. */
export interface WebhookEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}
