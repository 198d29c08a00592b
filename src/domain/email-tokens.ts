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

/** Compares a presented token with a stored hash in constant time. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
