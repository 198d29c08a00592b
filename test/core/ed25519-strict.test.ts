import { randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { isCanonicalPointEncoding, isCanonicalS, isSmallOrderEncoding, SMALL_ORDER_ENCODINGS } from '../../packages/sdk/src/contract/ed25519-strict.js';
import { L, le32, leToBig, P, toHex, withBothSigns } from './ed25519-attacks.js';

// the byte-wise checks against their arithmetic definitions, at and around every boundary
const random32 = () => Array.from({ length: 200 }, () => new Uint8Array(randomBytes(32)));
const near = (n: bigint) => Array.from({ length: 32 }, (_, i) => [n - (1n << BigInt(8 * i)), n + (1n << BigInt(8 * i))]).flat().concat([n - 1n, n, n + 1n]);

describe('isSmallOrderEncoding', () => {
  it('agrees with decoding the point in @noble/ed25519 (any y below 2^255, either sign) and checking its order', () => {
    const nobleSaysSmallOrder = (enc: Uint8Array) => {
      try {
        return ed.Point.fromBytes(enc, true).isSmallOrder();
      } catch {
        return false; // x = 0 with the sign bit set, or no point: not a point at all
      }
    };
    const candidates = [
      ...SMALL_ORDER_ENCODINGS.flatMap(withBothSigns),
      ...Array.from({ length: 19 }, (_, i) => le32(P + BigInt(i))).flatMap(withBothSigns), // every y >= p
      ...random32(),
    ];
    for (const c of candidates) {
      if (nobleSaysSmallOrder(c)) expect(isSmallOrderEncoding(c), toHex(c)).toBe(true);
      // the table also lists x = 0 with the sign bit set, which does not decode: refused either way
      else expect(isSmallOrderEncoding(c), toHex(c)).toBe(SMALL_ORDER_ENCODINGS.some((s) => toHex(s) === toHex(withBothSigns(c)[0]!)));
    }
  });

  it('flags anything that is not 32 bytes', () => {
    expect(isSmallOrderEncoding(new Uint8Array(31))).toBe(true);
    expect(isSmallOrderEncoding(new Uint8Array(33).fill(7))).toBe(true);
  });
});

describe('isCanonicalPointEncoding', () => {
  it('is y < p for y (sign bit cleared) around p, around 2^255 and at random', () => {
    const ys = [...near(P), 0n, 1n, 2n ** 255n - 1n].filter((y) => y >= 0n && y < 2n ** 255n);
    for (const enc of [...ys.map(le32), ...random32()].flatMap(withBothSigns)) {
      const y = leToBig(enc) & (2n ** 255n - 1n);
      expect(isCanonicalPointEncoding(enc), toHex(enc)).toBe(y < P);
    }
  });

  it('refuses anything that is not 32 bytes', () => {
    expect(isCanonicalPointEncoding(new Uint8Array(31))).toBe(false);
  });
});

describe('isCanonicalS', () => {
  it('is S < L for S around L, around 2^256 and at random', () => {
    const ss = [...near(L), 0n, 2n ** 253n, 2n ** 256n - 1n].filter((s) => s >= 0n && s < 2n ** 256n);
    const R = new Uint8Array(randomBytes(32));
    for (const S of [...ss.map(le32), ...random32()]) {
      const signature = Uint8Array.from([...R, ...S]);
      expect(isCanonicalS(signature), toHex(S)).toBe(leToBig(S) < L);
    }
  });

  it('refuses anything that is not 64 bytes', () => {
    expect(isCanonicalS(new Uint8Array(63))).toBe(false);
    expect(isCanonicalS(new Uint8Array(65))).toBe(false);
  });
});
