/**
 * Hostile ed25519 inputs for the strict-verification tests of src/core/ed25519.ts and
 * src/sdk/signing.ts, built with @noble/ed25519's point arithmetic so they do not
 * depend on the code under test.
 */
import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';

export const L = 2n ** 252n + 27742317777372353535851937790883648493n;
export const P = 2n ** 255n - 19n;
export const IDENTITY = hex('0100000000000000000000000000000000000000000000000000000000000000');

export function hex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h, 'hex'));
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

export function le32(n: bigint): Uint8Array {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) b[i] = Number(n & 0xffn);
  return b;
}

export function leToBig(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

function sha512ModL(...parts: Uint8Array[]): bigint {
  const h = createHash('sha512');
  for (const p of parts) h.update(p);
  return leToBig(new Uint8Array(h.digest())) % L;
}

/** The eight points of small order: multiples of [L]Q for a point Q with an order-8 component. */
export function torsionPoints(): InstanceType<typeof ed.Point>[] {
  for (let i = 2; i < 256; i++) {
    const y = new Uint8Array(32);
    y[0] = i;
    let q: InstanceType<typeof ed.Point>;
    try {
      q = ed.Point.fromBytes(y, true);
    } catch {
      continue; // not a point
    }
    const t = q.multiply(L - 1n, false).add(q); // [L]Q: the prime-order part cancels
    if (t.double().double().is0()) continue; // order below 8
    const pts = [ed.Point.ZERO];
    for (let k = 1; k < 8; k++) pts.push(pts[k - 1]!.add(t));
    return pts;
  }
  throw new Error('no point with an order-8 component found');
}

/**
 * Every 32-byte encoding (sign bit cleared) of a small-order point: the canonical y of
 * each torsion point, and y + p wherever that still fits below 2^255.
 */
export function smallOrderEncodingsFromNoble(): string[] {
  const out = new Set<string>();
  for (const t of torsionPoints()) {
    for (let y = t.toAffine().y; y < 2n ** 255n; y += P) out.add(toHex(le32(y)));
  }
  return [...out].sort();
}

/** Both sign-bit variants of an encoding. */
export function withBothSigns(enc: Uint8Array): Uint8Array[] {
  const neg = Uint8Array.from(enc);
  neg[31] = neg[31]! | 0x80;
  return [Uint8Array.from(enc), neg];
}

/**
 * A signature with R = identity that plain cofactorless verification accepts: the key
 * holder picks S = k·a where k = H(R || A || M). Strict verifiers refuse R of small order.
 */
export async function identityRSignature(seed: Uint8Array, message: Uint8Array): Promise<{ publicKey: Uint8Array; signature: Uint8Array }> {
  const { scalar, pointBytes } = await ed.utils.getExtendedPublicKeyAsync(seed);
  const k = sha512ModL(IDENTITY, pointBytes, message);
  const signature = new Uint8Array(64);
  signature.set(IDENTITY, 0);
  signature.set(le32((k * scalar) % L), 32);
  return { publicKey: pointBytes, signature };
}

/**
 * The identity as public key "signs" every message: R = rB, S = r satisfies
 * SB = R + k·A for any k. Strict verifiers refuse A of small order.
 */
export function identityKeyForgery(): { publicKey: Uint8Array; signature: Uint8Array } {
  const r = 0x1234567890abcdefn;
  const signature = new Uint8Array(64);
  signature.set(ed.Point.BASE.multiply(r).toBytes(), 0);
  signature.set(le32(r), 32);
  return { publicKey: IDENTITY, signature };
}

/** The same signature with S replaced by S + L: equal modulo L, but not canonical. */
export function withSPlusL(signature: Uint8Array): Uint8Array {
  const out = Uint8Array.from(signature);
  out.set(le32(leToBig(signature.subarray(32)) + L), 32);
  return out;
}
