/**
 * ed25519 on Node's built-in crypto: the gateway's hot path. Verification is strict
 * (RFC 8032 §5.1.7 plus the usual hardening): S must be canonical (S < L), public keys
 * of small order or with a non-canonical y are refused when registered
 * (`assertStrongPublicKey`), and small-order A and R are refused again at verification.
 * The encoding checks are shared with the SDK (packages/sdk/src/contract/ed25519-strict.ts); the SDK's
 * packages/sdk/src/signing.ts runs outside Node (WebCrypto or @noble/ed25519), and noble
 * cross-checks this module in tests.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { signingPayload } from 'agentpay-sdk/contract';
import { isCanonicalPointEncoding, isCanonicalS, isSmallOrderEncoding } from 'agentpay-sdk/contract';

// the encoding checks live in a dependency-free module the SDK shares; callers keep importing them from here
export { isCanonicalPointEncoding, isCanonicalS, isSmallOrderEncoding, SMALL_ORDER_ENCODINGS } from 'agentpay-sdk/contract';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

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

const PEM_LABEL = /-----BEGIN ([A-Z0-9 ]+)-----/g;

/**
 * Parses an ed25519 SPKI PEM; throws InvalidPublicKeyError with a reason a person can act on.
 * Node derives a public key from a private one without a word, so a private key (or a file
 * holding both halves) is refused here by its PEM label: it must never be taken for a public key.
 */
export function parsePublicKeyPem(pem: string): KeyObject {
  const labels = [...pem.matchAll(PEM_LABEL)].map((m) => m[1]!);
  if (labels.some((l) => l.includes('PRIVATE KEY'))) {
    throw new InvalidPublicKeyError('is a private key: send only its public half ("-----BEGIN PUBLIC KEY-----", e.g. from `openssl pkey -in key.pem -pubout`)');
  }
  if (labels.length > 1) throw new InvalidPublicKeyError('holds more than one PEM block; send exactly one public key');
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
