/**
 * ed25519 on Node's built-in crypto: the gateway's hot path. Verification is strict
 * (RFC 8032 §5.1.7 plus the usual hardening): S must be canonical (S < L), public keys
 * of small order or with a non-canonical y are refused when registered
 * (`assertStrongPublicKey`), and small-order A and R are refused again at verification.
 * @noble/ed25519 serves where code must run outside Node (src/sdk/signing.ts) and
 * cross-checks this module in tests.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { signingPayload } from './canonical-json.js';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Encodings of the eight points of small order (and their non-canonical twins y = p and
 * y = p + 1), sign bit cleared: libsodium's blocklist, checked against @noble/ed25519 in tests.
 */
export const SMALL_ORDER_ENCODINGS: readonly Uint8Array[] = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map((h) => Buffer.from(h, 'hex'));

export function isSmallOrderEncoding(point: Uint8Array): boolean {
  if (point.length !== 32) return true;
  const p = Buffer.from(point);
  p[31] = p[31]! & 0x7f;
  return SMALL_ORDER_ENCODINGS.some((s) => p.equals(s));
}

function leToBigInt(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

export function isCanonicalS(signature: Uint8Array): boolean {
  return signature.length === 64 && leToBigInt(signature.subarray(32)) < L;
}

export interface Ed25519KeyPair {
  publicKeyPem: string;
  privateKeyPem: string;
}

export function generateEd25519(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

export class InvalidPublicKeyError extends Error {}

/** Parses an ed25519 SPKI PEM; throws InvalidPublicKeyError with a reason a person can act on. */
export function parsePublicKeyPem(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new InvalidPublicKeyError('is not a PEM public key (expected "-----BEGIN PUBLIC KEY-----")');
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new InvalidPublicKeyError(`must be an ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  return key;
}

export function rawPublicKey(key: KeyObject): Uint8Array {
  const der = key.export({ type: 'spki', format: 'der' });
  return new Uint8Array(der.subarray(der.length - 32));
}

const P = 2n ** 255n - 19n;

/** RFC 8032 §5.1.3: the y coordinate (sign bit cleared) must be below p; OpenSSL does not check. */
export function isCanonicalPointEncoding(point: Uint8Array): boolean {
  if (point.length !== 32) return false;
  const y = Uint8Array.from(point);
  y[31] = y[31]! & 0x7f;
  return leToBigInt(y) < P;
}

/** For registration: a well-formed ed25519 key, canonically encoded, not of small order. */
export function assertStrongPublicKey(pem: string): KeyObject {
  const key = parsePublicKeyPem(pem);
  const raw = rawPublicKey(key);
  if (isSmallOrderEncoding(raw)) {
    throw new InvalidPublicKeyError('is a small-order ed25519 point and cannot be used');
  }
  if (!isCanonicalPointEncoding(raw)) {
    throw new InvalidPublicKeyError('is not a canonical ed25519 point encoding (y >= p)');
  }
  return key;
}

export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(raw)]), format: 'der', type: 'spki' });
}

export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, Buffer.from(seed)]), format: 'der', type: 'pkcs8' });
}

export function signBytes(privateKey: KeyObject | string, message: Uint8Array): Uint8Array {
  return new Uint8Array(nodeSign(null, message, privateKey));
}

/**
 * Strict verify: canonical S, neither R nor A of small order, then Node's ed25519.
 * OpenSSL alone accepts R = identity (S = k·a) and, for A = identity, R = rB with S = r
 * on any message; A is checked here too because keys also arrive from outside
 * registration (platform keys fetched by id). Never throws.
 */
export function verifyBytes(publicKey: KeyObject | string, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64 || !isCanonicalS(signature)) return false;
  if (isSmallOrderEncoding(signature.subarray(0, 32))) return false;
  try {
    const key = typeof publicKey === 'string' ? parsePublicKeyPem(publicKey) : publicKey;
    if (isSmallOrderKey(key)) return false;
    return nodeVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Whether a key's point is of small order; remembered per KeyObject (exporting it costs more than the verify). */
const smallOrder = new WeakMap<KeyObject, boolean>();
function isSmallOrderKey(key: KeyObject): boolean {
  let known = smallOrder.get(key);
  if (known === undefined) {
    known = isSmallOrderEncoding(rawPublicKey(key.type === 'private' ? createPublicKey(key) : key));
    smallOrder.set(key, known);
  }
  return known;
}

/** Signs an object's canonical form (without `signature`/`signingKeyId`); returns base64. */
export function signObject(privateKey: KeyObject | string, obj: Record<string, unknown>): string {
  return Buffer.from(signBytes(privateKey, Buffer.from(signingPayload(obj), 'utf8'))).toString('base64');
}

export function verifyObject(publicKey: KeyObject | string, obj: Record<string, unknown>): boolean {
  const sig = obj.signature;
  if (typeof sig !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(sig)) return false;
  let payload: string;
  try {
    payload = signingPayload(obj);
  } catch {
    return false;
  }
  return verifyBytes(publicKey, Buffer.from(payload, 'utf8'), Buffer.from(sig, 'base64'));
}
