/**
 * ed25519 signatures for the SDK, in any JavaScript runtime (browsers, edge workers,
 * Deno, Node): @noble/ed25519's async API (SHA-512 from WebCrypto) and the canonical
 * JSON of src/core, no Node imports. Verification is as strict as the gateway's
 * (src/core/ed25519.ts): canonical S (S < L), canonical point encodings, and neither the
 * public key A nor R of small order. Keys are 32-byte raw values or PEM (SPKI public,
 * PKCS#8 private), converted with fixed DER prefixes and atob/btoa.
 */
import * as ed from '@noble/ed25519';
import { signingPayload } from '../core/canonical-json.js';

/** A private key: the 32-byte seed, or its PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"). */
export type PrivateKeyInput = Uint8Array | string;
/** A public key: the 32 raw bytes, or its SPKI PEM ("-----BEGIN PUBLIC KEY-----"). */
export type PublicKeyInput = Uint8Array | string;

export class SigningKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningKeyError';
  }
}

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
// DER of SubjectPublicKeyInfo / PKCS#8 v1 for id-Ed25519 (RFC 8410), up to the 32 key bytes
const SPKI_PREFIX = Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00);
const PKCS8_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);

// ---- base64 and PEM, without Buffer ----

export function base64Encode(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Strict: standard alphabet with padding; anything else throws. */
export function base64Decode(text: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) {
    throw new SigningKeyError('is not base64');
  }
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function pemBody(pem: string, label: string): Uint8Array {
  const m = new RegExp(`^\\s*-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----\\s*$`).exec(pem);
  if (!m) throw new SigningKeyError(`is not a PEM ${label.toLowerCase()} (expected "-----BEGIN ${label}-----")`);
  return base64Decode(m[1]!.replace(/\s+/g, ''));
}

function toPem(der: Uint8Array, label: string): string {
  const lines = base64Encode(der).match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN ${label}-----\n${lines}\n-----END ${label}-----\n`;
}

function strip(der: Uint8Array, prefix: Uint8Array, what: string): Uint8Array {
  if (der.length !== prefix.length + 32 || !prefix.every((b, i) => der[i] === b)) {
    throw new SigningKeyError(`is not an ed25519 ${what} (expected the ${prefix.length + 32}-byte RFC 8410 encoding)`);
  }
  return der.slice(prefix.length);
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export function publicKeyPemToRaw(pem: string): Uint8Array {
  return strip(pemBody(pem, 'PUBLIC KEY'), SPKI_PREFIX, 'SPKI public key');
}

export function rawToPublicKeyPem(raw: Uint8Array): string {
  if (raw.length !== 32) throw new SigningKeyError('an ed25519 public key is 32 bytes');
  return toPem(join(SPKI_PREFIX, raw), 'PUBLIC KEY');
}

/** The 32-byte seed inside a PKCS#8 PEM (the form node:crypto and OpenSSL write). */
export function privateKeyPemToSeed(pem: string): Uint8Array {
  return strip(pemBody(pem, 'PRIVATE KEY'), PKCS8_PREFIX, 'PKCS#8 private key');
}

export function seedToPrivateKeyPem(seed: Uint8Array): string {
  if (seed.length !== 32) throw new SigningKeyError('an ed25519 private key seed is 32 bytes');
  return toPem(join(PKCS8_PREFIX, seed), 'PRIVATE KEY');
}

function seedOf(key: PrivateKeyInput): Uint8Array {
  if (typeof key === 'string') return privateKeyPemToSeed(key);
  if (key.length !== 32) throw new SigningKeyError('an ed25519 private key seed is 32 bytes');
  return key;
}

function rawOf(key: PublicKeyInput): Uint8Array {
  return typeof key === 'string' ? publicKeyPemToRaw(key) : key;
}

/** A fresh key pair as PEM, the form wallets register (`publicKeyPem`). */
export async function generateKeyPair(): Promise<{ publicKeyPem: string; privateKeyPem: string }> {
  const { secretKey, publicKey } = await ed.keygenAsync();
  return { publicKeyPem: rawToPublicKeyPem(publicKey), privateKeyPem: seedToPrivateKeyPem(secretKey) };
}

export async function publicKeyOf(privateKey: PrivateKeyInput): Promise<Uint8Array> {
  return ed.getPublicKeyAsync(seedOf(privateKey));
}

// ---- strictness ----

export function isCanonicalS(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
  return s < L;
}

/**
 * True for a 32-byte string that decodes to a point of small order, in any encoding
 * (non-canonical y and a set sign bit included), and for anything that is not 32 bytes.
 */
export function isSmallOrderEncoding(point: Uint8Array): boolean {
  if (point.length !== 32) return true;
  try {
    return ed.Point.fromBytes(point, true).isSmallOrder();
  } catch {
    return false; // not a point at all: refused by decoding, not by this check
  }
}

// ---- sign and verify ----

export async function signBytes(privateKey: PrivateKeyInput, message: Uint8Array): Promise<Uint8Array> {
  return ed.signAsync(message, seedOf(privateKey));
}

/** Strict verify; never throws (malformed keys and signatures are simply not valid). */
export async function verifyBytes(publicKey: PublicKeyInput, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  try {
    const raw = rawOf(publicKey);
    if (raw.length !== 32 || signature.length !== 64 || !isCanonicalS(signature)) return false;
    // noble's RFC 8032 mode refuses a small-order A and non-canonical encodings, but accepts
    // R = identity with S = k·a: refuse small-order R (and A, to say it here too) first.
    if (isSmallOrderEncoding(signature.subarray(0, 32)) || isSmallOrderEncoding(raw)) return false;
    return await ed.verifyAsync(signature, message, raw, { zip215: false });
  } catch {
    return false;
  }
}

/** Signs an object's canonical JSON (without `signature`/`signingKeyId`); returns base64. */
export async function signObject(privateKey: PrivateKeyInput, obj: Record<string, unknown>): Promise<string> {
  const payload = new TextEncoder().encode(signingPayload(obj));
  return base64Encode(await signBytes(privateKey, payload));
}

/** Checks `obj.signature` (base64 ed25519) over the object's canonical JSON; never throws. */
export async function verifyObject(publicKey: PublicKeyInput, obj: Record<string, unknown>): Promise<boolean> {
  const sig = obj?.signature;
  if (typeof sig !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(sig)) return false;
  let payload: Uint8Array;
  try {
    payload = new TextEncoder().encode(signingPayload(obj));
  } catch {
    return false;
  }
  return verifyBytes(publicKey, payload, base64Decode(sig));
}
