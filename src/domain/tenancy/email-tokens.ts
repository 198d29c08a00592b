/**
 * The one-time tokens mailed for signup verification and password reset: 256 random
 * bits, stored only as a SHA-256 (the same fast hash as API keys, which is right for
 * secrets of this entropy), valid until an expiry and for one use.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashKey } from './api-keys.js';

export interface EmailToken {
  token: string;
  tokenHash: string;
}

export function newEmailToken(): EmailToken {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashKey(token) };
}

export const hashEmailToken = hashKey;

/**
 * Stored in place of a token hash where no token was ever sent (a signup for an address
 * that already has an account). It is not a SHA-256, so no token matches it.
 */
export const NO_TOKEN = 'none';

/** Compares a presented token with a stored hash in constant time; nothing matches NO_TOKEN. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return storedHash !== NO_TOKEN && a.length === b.length && timingSafeEqual(a, b);
}
