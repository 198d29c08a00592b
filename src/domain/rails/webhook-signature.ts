/**
 * Signed webhooks, the way card processors sign them: the header carries a timestamp
 * and an HMAC-SHA256 over `<timestamp>.<raw body>`, so neither the body nor the time
 * can be changed, and a delivery captured once cannot be replayed after the tolerance.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from '../../core/errors.js';

/** `t=<unix seconds>,v1=<hex hmac>` */
export function signWebhook(secret: string, rawBody: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${hmac(secret, t, rawBody)}`;
}

const hmac = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');

/**
 * Throws VALIDATION_FAILED naming the header unless it signs exactly these bytes with the
 * secret, at a time within `toleranceMs` of `nowMs` (either side: a clock ahead is as
 * suspect as one behind).
 */
export function verifyWebhook(secret: string, rawBody: string, header: string | undefined, nowMs: number, toleranceMs: number, headerName: string): void {
  if (!header) throw validationError(headerName, 'is required: webhooks are accepted only when signed by the processor');
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  const given = parts.v1;
  if (!Number.isSafeInteger(t) || typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) {
    throw validationError(headerName, 'is malformed: expected t=<unix seconds>,v1=<hex HMAC-SHA256>');
  }
  if (Math.abs(nowMs - t * 1000) > toleranceMs) {
    throw validationError(headerName, `is stale: signed at ${new Date(t * 1000).toISOString()}, more than ${Math.round(toleranceMs / 1000)} s from the gateway's clock`, { signedAt: t });
  }
  const expected = Buffer.from(hmac(secret, t, rawBody), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) throw validationError(headerName, 'does not match the body: the webhook was not signed by the processor or was changed');
}
