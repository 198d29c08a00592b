/**
 * ed25519 signatures for the SDK, in any JavaScript runtime (browsers, edge workers,
 * Deno, Node), with no Node imports. Two backends behind one API, chosen once, on first use:
 *
 * - WebCrypto Ed25519 (`globalThis.crypto.subtle`) where the runtime has it: Node >= 18.4,
 *   Deno, Chrome 137+, Firefox 129+, Safari 17+. Native code: on Node 20 a sign costs
 *   ~0.1 ms and a verify ~0.25 ms, against ~0.8 ms and ~2.3 ms in JS. It is used only if it
 *   reproduces RFC 8032 TEST 1 exactly (deterministic signatures, as the gateway's).
 *   Imported CryptoKeys are cached per key (importKey costs about as much as a sign).
 * - @noble/ed25519 (pure JS, SHA-512 from WebCrypto) everywhere else, e.g. older browsers.
 *
 * Both give the same bytes and the same verdicts as the gateway (src/core/ed25519.ts).
 * Verification is strict: the encoding checks of contract/ed25519-strict.ts go first
 * (canonical S < L, canonical point encodings, neither the public key A nor R of small
 * order), because OpenSSL (Node's WebCrypto) accepts all of these; then the cofactorless
 * equation [S]B = R + [k]A, which OpenSSL checks and which the noble path computes itself
 * (noble's own verify is cofactored and would accept more). Keys are 32-byte raw values or
 * PEM (SPKI public, PKCS#8 private), converted with fixed DER prefixes and a table-driven base64 (base64.ts).
 */
import * as ed from '@noble/ed25519';
import { signingPayload } from './contract/canonical-json.js';
import { isCanonicalPointEncoding, isCanonicalS, isSmallOrderEncoding } from './contract/ed25519-strict.js';
import { fromBase64, toBase64 } from './contract/base64.js';

export { isCanonicalPointEncoding, isCanonicalS, isSmallOrderEncoding };

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

// DER of SubjectPublicKeyInfo / PKCS#8 v1 for id-Ed25519 (RFC 8410), up to the 32 key bytes
const SPKI_PREFIX = Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00);
const PKCS8_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);

// ---- base64 and PEM, without Buffer ----

export function base64Encode(bytes: Uint8Array): string {
  return toBase64(bytes);
}

/** Strict: standard alphabet with padding; anything else throws. */
export function base64Decode(text: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) {
    throw new SigningKeyError('is not base64');
  }
  return fromBase64(text);
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

// ---- backend: WebCrypto where the runtime has Ed25519, else noble ----

export type SigningBackend = 'webcrypto' | 'noble';

const ED25519 = { name: 'Ed25519' } as const;
// RFC 8032 §7.1 TEST 1 (empty message): the runtime's Ed25519 must reproduce it byte for byte
const PROBE = {
  seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
};

let detected: Promise<SigningBackend> | undefined;
let forced: SigningBackend | undefined;

/** The backend in use: 'webcrypto' where the runtime has a conforming Ed25519, else 'noble'. Decided once. */
export function signingBackend(): Promise<SigningBackend> {
  if (forced) return Promise.resolve(forced);
  return (detected ??= detectWebCrypto().then((ok) => (ok ? 'webcrypto' : 'noble')));
}

/**
 * Tests only: send every call through one backend ('auto' goes back to detection), so that
 * the same suite runs on both. Forcing 'webcrypto' where the runtime lacks it makes calls fail.
 */
export function __setBackendForTests(backend: SigningBackend | 'auto'): void {
  forced = backend === 'auto' ? undefined : backend;
}

async function detectWebCrypto(): Promise<boolean> {
  try {
    const [priv, pub] = await Promise.all([importPrivateKey(ed.etc.hexToBytes(PROBE.seed)), importPublicKey(ed.etc.hexToBytes(PROBE.publicKey))]);
    const message = new Uint8Array(0);
    const signature = new Uint8Array(await subtle().sign(ED25519, priv, message));
    return ed.etc.bytesToHex(signature) === PROBE.signature && (await subtle().verify(ED25519, pub, signature, message));
  } catch {
    return false; // no crypto.subtle, no Ed25519 in it, or one that signs differently
  }
}

function subtle(): SubtleCrypto {
  return globalThis.crypto.subtle;
}

// WebCrypto's BufferSource wants an ArrayBuffer-backed view; our inputs are plain Uint8Arrays
const buf = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>;

function importPrivateKey(seed: Uint8Array): Promise<CryptoKey> {
  return subtle().importKey('pkcs8', buf(join(PKCS8_PREFIX, seed)), ED25519, false, ['sign']);
}

function importPublicKey(raw: Uint8Array): Promise<CryptoKey> {
  return subtle().importKey('raw', buf(raw), ED25519, false, ['verify']);
}

/** Imported keys by the hex of their 32 bytes, the most recently used last. */
const KEY_CACHE_SIZE = 256;
const privateKeys = new Map<string, Promise<CryptoKey>>();
const publicKeys = new Map<string, Promise<CryptoKey>>();

function cachedKey(cache: Map<string, Promise<CryptoKey>>, bytes: Uint8Array, load: (bytes: Uint8Array) => Promise<CryptoKey>): Promise<CryptoKey> {
  const id = ed.etc.bytesToHex(bytes);
  let key = cache.get(id);
  if (key) {
    cache.delete(id); // set again below, as the most recent
  } else {
    const loading = load(bytes);
    loading.catch(() => cache.get(id) === loading && cache.delete(id)); // failures are not kept
    key = loading;
  }
  cache.set(id, key);
  if (cache.size > KEY_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return key;
}

// ---- sign and verify ----

export async function signBytes(privateKey: PrivateKeyInput, message: Uint8Array): Promise<Uint8Array> {
  const seed = Uint8Array.from(seedOf(privateKey));
  message = Uint8Array.from(message); // signed as it was at the call, whatever the caller does meanwhile
  if ((await signingBackend()) === 'noble') return ed.signAsync(message, seed);
  const key = await cachedKey(privateKeys, seed, importPrivateKey);
  return new Uint8Array(await subtle().sign(ED25519, key, buf(message)));
}

/**
 * The encoding checks of strict verification (contract/ed25519-strict.ts): canonical S,
 * R and A canonically encoded and not of small order.
 */
function strictlyEncoded(raw: Uint8Array, signature: Uint8Array): boolean {
  const r = signature.subarray(0, 32);
  return (
    raw.length === 32 &&
    isCanonicalS(signature) &&
    isCanonicalPointEncoding(r) &&
    isCanonicalPointEncoding(raw) &&
    !isSmallOrderEncoding(r) &&
    !isSmallOrderEncoding(raw)
  );
}

function littleEndian(bytes: Uint8Array): bigint {
  return BigInt(`0x${ed.etc.bytesToHex(Uint8Array.from(bytes).reverse())}`);
}

/**
 * RFC 8032 §5.1.7 with noble's point arithmetic and the cofactorless equation
 * [S]B = R + [k]A, the one OpenSSL checks: noble's verify checks [8][S]B = [8]R + [8][k]A,
 * which also accepts an R or A with a small-order component added. Inputs passed
 * strictlyEncoded().
 */
async function nobleVerify(raw: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const r = signature.subarray(0, 32);
  const A = ed.Point.fromBytes(raw); // RFC 8032 decoding: throws if y >= p or no point has this y
  const R = ed.Point.fromBytes(r);
  const k = ed.etc.mod(littleEndian(await ed.hashes.sha512Async(ed.etc.concatBytes(r, raw, message))), ed.Point.CURVE().n);
  return ed.Point.BASE.multiply(littleEndian(signature.subarray(32)), false).equals(R.add(A.multiply(k, false)));
}

/** Strict verify; never throws (malformed keys and signatures are simply not valid). */
export async function verifyBytes(publicKey: PublicKeyInput, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  try {
    // copies: checked and verified as they were at the call
    const raw = Uint8Array.from(rawOf(publicKey));
    const sig = Uint8Array.from(signature);
    const msg = Uint8Array.from(message);
    if (!strictlyEncoded(raw, sig)) return false;
    if ((await signingBackend()) === 'noble') return await nobleVerify(raw, msg, sig);
    const key = await cachedKey(publicKeys, raw, importPublicKey);
    return await subtle().verify(ED25519, key, buf(sig), buf(msg));
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
