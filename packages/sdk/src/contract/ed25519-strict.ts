/**
 * The encoding checks of strict ed25519 verification (RFC 8032 §5.1.7 plus the usual
 * hardening), on plain Uint8Arrays and with no imports, so that the gateway
 * (src/core/ed25519.ts, node:crypto) and the SDK (src/sdk/signing.ts, any runtime) run
 * the same checks. They go before the library's verify because OpenSSL (behind node:crypto
 * and Node's WebCrypto) accepts what they refuse. Byte comparisons, no point decoding and
 * no BigInt: they run on every verification.
 */

function fromHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
}

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
].map(fromHex);

/** L, the order of the base point, as 32 little-endian bytes. */
const L_BYTES = fromHex('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010');

function equalIgnoringSignBit(point: Uint8Array, encoding: Uint8Array): boolean {
  for (let i = 0; i < 31; i++) if (point[i] !== encoding[i]) return false;
  return (point[31]! & 0x7f) === encoding[31];
}

/**
 * True for a 32-byte string that encodes a point of small order, in any encoding
 * (non-canonical y and a set sign bit included), and for anything that is not 32 bytes.
 */
export function isSmallOrderEncoding(point: Uint8Array): boolean {
  if (point.length !== 32) return true;
  return SMALL_ORDER_ENCODINGS.some((s) => equalIgnoringSignBit(point, s));
}

/**
 * RFC 8032 §5.1.3: the y coordinate (sign bit cleared) must be below p = 2^255 - 19, whose
 * little-endian bytes are ed ff … ff 7f. OpenSSL does not check.
 */
export function isCanonicalPointEncoding(point: Uint8Array): boolean {
  if (point.length !== 32) return false;
  if ((point[31]! & 0x7f) !== 0x7f) return true;
  for (let i = 30; i > 0; i--) if (point[i] !== 0xff) return true;
  return point[0]! < 0xed;
}

/** A 64-byte signature whose S (the second half, little-endian) is below L. */
export function isCanonicalS(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  for (let i = 31; i >= 0; i--) {
    const s = signature[32 + i]!;
    if (s !== L_BYTES[i]) return s < L_BYTES[i]!;
  }
  return false; // S = L
}
