/**
 * Account passwords. scrypt (a slow, memory-hard KDF) with a random salt per hash;
 * the parameters travel inside the hash string, PHC style:
 *
 *   $scrypt$ln=15,r=8,p=1$<salt base64>$<hash base64>
 *
 * so they can be raised later without breaking stored hashes. Hashing takes tens of
 * milliseconds on purpose: call these functions outside `store.tx`/`store.read`.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { validationError } from '../../core/errors.js';
import { MAX_PASSWORD_LENGTH } from 'agentpay-sdk/contract';

export const MIN_PASSWORD_LENGTH = 10;
/** Bounds the work a request can ask of the KDF; the wire's limit (agentpay-sdk/contract). */
export { MAX_PASSWORD_LENGTH };

const DEFAULT = { ln: 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** 128 * N * r bytes, with headroom; Node's default ceiling (32 MiB) is exactly N=2^15, r=8. */
const maxmem = (ln: number, r: number) => 256 * 2 ** ln * r;

/** 400 VALIDATION_FAILED naming `password` unless it is acceptable for a new password. */
export function assertAcceptablePassword(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) throw validationError(field, `must be at least ${MIN_PASSWORD_LENGTH} characters long`, { minLength: MIN_PASSWORD_LENGTH });
  if (length > MAX_PASSWORD_LENGTH) throw validationError(field, `must be at most ${MAX_PASSWORD_LENGTH} characters long`, { maxLength: MAX_PASSWORD_LENGTH });
}

export async function hashPassword(password: string): Promise<string> {
  const { ln, r, p } = DEFAULT;
  const salt = randomBytes(SALT_LENGTH);
  const hash = await scrypt(password, salt, KEY_LENGTH, { N: 2 ** ln, r, p, maxmem: maxmem(ln, r) });
  return `$scrypt$ln=${ln},r=${r},p=${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

const HASH_FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** True when `password` matches `stored`; a malformed or out-of-bounds hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = HASH_FORMAT.exec(stored);
  if (!m) return false;
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // a tampered row must not make the gateway allocate gigabytes
  if (ln < 10 || ln > 20 || r < 1 || r > 16 || p < 1 || p > 4) return false;
  const salt = Buffer.from(m[4]!, 'base64');
  const expected = Buffer.from(m[5]!, 'base64');
  if (expected.length < 16) return false;
  const actual = await scrypt(password, salt, expected.length, { N: 2 ** ln, r, p, maxmem: maxmem(ln, r) });
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
const dummyHash = () => (dummy ??= hashPassword(randomBytes(16).toString('hex')));

/**
 * Verifies against a throwaway hash (made with the same parameters as every new one),
 * so that "no such account" costs as long as "wrong password" and response times do
 * not disclose which emails have accounts.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  await verifyPassword(password, await dummyHash());
  return false;
}

/** Makes the throwaway hash ahead of the first burnPasswordCheck, which would else cost a hash more. */
export function prepareBurnPasswordCheck(): void {
  dummyHash().catch(() => {
    dummy = undefined; // the next check tries again
  });
}
