/**
 * CORS for paid routes: browsers must be allowed to send `x-payment` and to read
 * `x-payment` and `x-service-receipt`. Which origins may call is the seller's choice
 * (`cors.origin`); without it only the expose list is added.
 */
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../protocol.js';

export interface CorsOptions {
  /** Access-Control-Allow-Origin for paid routes and their preflights ('*' by default) */
  origin?: string;
  /** Access-Control-Max-Age of preflights, seconds (default 600) */
  maxAgeSeconds?: number;
}

/** `existing` plus `names`, without duplicates (header values are comma lists). */
export function mergeList(existing: unknown, names: readonly string[]): string {
  const have = String(existing ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) if (!have.some((h) => h.toLowerCase() === n)) have.push(n);
  return have.join(', ');
}

export function exposeHeaders(existing: unknown): string {
  return mergeList(existing, CORS_EXPOSE_HEADERS);
}

/** Headers of a preflight answer for a paid route. */
export function preflightHeaders(cors: CorsOptions, requestedMethod: string, requestedHeaders: string | undefined): Record<string, string> {
  return {
    'access-control-allow-origin': cors.origin ?? '*',
    'access-control-allow-methods': requestedMethod.toUpperCase(),
    'access-control-allow-headers': mergeList(requestedHeaders, CORS_ALLOW_HEADERS),
    'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', '),
    'access-control-max-age': String(cors.maxAgeSeconds ?? 600),
    vary: 'Origin, Access-Control-Request-Headers',
  };
}
