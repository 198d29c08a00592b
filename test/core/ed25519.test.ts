import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify as nodeVerify } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import {
  assertStrongPublicKey,
  generateEd25519,
  InvalidPublicKeyError,
  isCanonicalPointEncoding,
  isCanonicalS,
  isSmallOrderEncoding,
  parsePublicKeyPem,
  privateKeyFromSeed,
  publicKeyFromRaw,
  rawPublicKey,
  signBytes,
  signObject,
  SMALL_ORDER_ENCODINGS,
  verifyBytes,
  verifyObject,
} from '../../src/core/ed25519.js';
import { hex, identityKeyForgery, identityRSignature, L, le32, smallOrderEncodingsFromNoble, toHex, torsionPoints, withBothSigns, withSPlusL } from './ed25519-attacks.js';
import { RFC8032_VECTORS } from './rfc8032-vectors.js';

const pemOf = (raw: Uint8Array) => publicKeyFromRaw(raw).export({ type: 'spki', format: 'pem' }).toString();

describe('RFC 8032 §7.1 test vectors', () => {
  it('has the vectors it claims: a 1023-byte TEST 1024 and SHA-512("abc") as the last message', () => {
    expect(hex(RFC8032_VECTORS.find((v) => v.name === 'TEST 1024')!.message)).toHaveLength(1023);
    expect(RFC8032_VECTORS.find((v) => v.name === 'TEST SHA(abc)')!.message).toBe(createHash('sha512').update('abc').digest('hex'));
  });

  describe.each(RFC8032_VECTORS)('$name', (v) => {
    it('derives the public key from the seed', () => {
      expect(toHex(rawPublicKey(createPublicKey(privateKeyFromSeed(hex(v.secretKey)))))).toBe(v.publicKey);
    });

    it('signs to exactly the published signature', () => {
      expect(toHex(signBytes(privateKeyFromSeed(hex(v.secretKey)), hex(v.message)))).toBe(v.signature);
    });

    it('verifies the published signature and refuses it for another message', () => {
      const key = publicKeyFromRaw(hex(v.publicKey));
      expect(verifyBytes(key, hex(v.message), hex(v.signature))).toBe(true);
      expect(verifyBytes(key, hex(v.message + '00'), hex(v.signature))).toBe(false);
    });

    it('agrees with @noble/ed25519', async () => {
      expect(toHex(await ed.signAsync(hex(v.message), hex(v.secretKey)))).toBe(v.signature);
      expect(await ed.verifyAsync(hex(v.signature), hex(v.message), hex(v.publicKey), { zip215: false })).toBe(true);
    });
  });
});

describe('verifyBytes is strict', () => {
  const seed = randomBytes(32);
  const priv = privateKeyFromSeed(seed);
  const pub = createPublicKey(priv);
  const message = new Uint8Array(Buffer.from('pay 100 minor units to prv_1'));
  const signature = signBytes(priv, message);

  it('accepts the honest signature (the baseline of every refusal below)', () => {
    expect(verifyBytes(pub, message, signature)).toBe(true);
    expect(verifyBytes(pub.export({ type: 'spki', format: 'pem' }).toString(), message, signature)).toBe(true);
  });

  it('refuses S + L (the same scalar mod L, non-canonical) and S = L', () => {
    const malleated = withSPlusL(signature);
    expect(isCanonicalS(signature)).toBe(true);
    expect(isCanonicalS(malleated)).toBe(false);
    expect(verifyBytes(pub, message, malleated)).toBe(false);
    const sEqualsL = Uint8Array.from(signature);
    sEqualsL.set(le32(L), 32);
    expect(isCanonicalS(sEqualsL)).toBe(false);
    expect(isCanonicalS(Uint8Array.from([...signature.subarray(0, 32), ...le32(L - 1n)]))).toBe(true);
    expect(verifyBytes(pub, message, sEqualsL)).toBe(false);
  });

  it('refuses a signature whose R is the identity, which OpenSSL alone accepts', async () => {
    const forged = await identityRSignature(new Uint8Array(seed), message);
    expect(toHex(forged.publicKey)).toBe(toHex(rawPublicKey(pub)));
    // the attack is real: plain node:crypto verification passes it
    expect(nodeVerify(null, message, pub, forged.signature)).toBe(true);
    expect(verifyBytes(pub, message, forged.signature)).toBe(false);
  });

  it('refuses R of any small order', () => {
    for (const enc of SMALL_ORDER_ENCODINGS.flatMap(withBothSigns)) {
      const sig = Uint8Array.from(signature);
      sig.set(enc, 0);
      expect(verifyBytes(pub, message, sig)).toBe(false);
    }
  });

  it('refuses the identity as public key, which "signs" every message under OpenSSL', () => {
    const { publicKey, signature: forged } = identityKeyForgery();
    const weak = publicKeyFromRaw(publicKey);
    expect(nodeVerify(null, Buffer.from('anything at all'), weak, forged)).toBe(true);
    expect(verifyBytes(weak, Buffer.from('anything at all'), forged)).toBe(false);
    expect(verifyBytes(pemOf(publicKey), Buffer.from('anything at all'), forged)).toBe(false);
  });

  it('fails when any single bit of the signature, the message or the public key flips', () => {
    const raw = rawPublicKey(pub);
    for (let bit = 0; bit < 64 * 8; bit++) {
      const s = Uint8Array.from(signature);
      s[bit >> 3]! ^= 1 << (bit & 7);
      expect(verifyBytes(pub, message, s), `signature bit ${bit}`).toBe(false);
    }
    for (let bit = 0; bit < message.length * 8; bit++) {
      const m = Uint8Array.from(message);
      m[bit >> 3]! ^= 1 << (bit & 7);
      expect(verifyBytes(pub, m, signature), `message bit ${bit}`).toBe(false);
    }
    for (let bit = 0; bit < 32 * 8; bit++) {
      const k = Uint8Array.from(raw);
      k[bit >> 3]! ^= 1 << (bit & 7);
      expect(verifyBytes(publicKeyFromRaw(k), message, signature), `public key bit ${bit}`).toBe(false);
    }
  });

  it('returns false, never throws, on malformed input', () => {
    expect(verifyBytes(pub, message, signature.subarray(0, 63))).toBe(false);
    expect(verifyBytes(pub, message, new Uint8Array(65))).toBe(false);
    expect(verifyBytes(pub, message, new Uint8Array(64))).toBe(false);
    expect(verifyBytes('not a pem', message, signature)).toBe(false);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(verifyBytes(rsa, message, signature)).toBe(false);
  });
});

describe('small-order encodings', () => {
  it('lists exactly the encodings of the eight small-order points and their non-canonical twins', () => {
    expect(torsionPoints().every((t) => t.isSmallOrder())).toBe(true);
    expect(SMALL_ORDER_ENCODINGS.map(toHex).sort()).toEqual(smallOrderEncodingsFromNoble());
    expect(SMALL_ORDER_ENCODINGS).toHaveLength(7);
  });

  it('are each of small order according to @noble/ed25519, whatever the sign bit', () => {
    for (const enc of SMALL_ORDER_ENCODINGS.flatMap(withBothSigns)) {
      let point;
      try {
        point = ed.Point.fromBytes(enc, true);
      } catch {
        continue; // x = 0 with the sign bit set does not decode at all
      }
      expect(point.isSmallOrder(), toHex(enc)).toBe(true);
      expect(isSmallOrderEncoding(enc)).toBe(true);
    }
  });

  it('does not flag honest keys', () => {
    for (let i = 0; i < 50; i++) expect(isSmallOrderEncoding(rawPublicKey(parsePublicKeyPem(generateEd25519().publicKeyPem)))).toBe(false);
  });
});

describe('assertStrongPublicKey', () => {
  it('accepts a generated key and returns it parsed', () => {
    const { publicKeyPem } = generateEd25519();
    expect(assertStrongPublicKey(publicKeyPem).asymmetricKeyType).toBe('ed25519');
  });

  it('refuses every small-order encoding, with either sign bit', () => {
    for (const enc of SMALL_ORDER_ENCODINGS.flatMap(withBothSigns)) {
      expect(() => assertStrongPublicKey(pemOf(enc)), toHex(enc)).toThrow(/small-order/);
    }
  });

  it('refuses a non-canonical encoding (y >= p) that is not of small order', () => {
    const enc = hex('f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'); // y = p + 3
    expect(ed.Point.fromBytes(enc, true).isSmallOrder()).toBe(false);
    expect(isCanonicalPointEncoding(enc)).toBe(false);
    expect(() => assertStrongPublicKey(pemOf(enc))).toThrow(/canonical/);
  });

  it('refuses what is not an ed25519 public key, saying why', () => {
    expect(() => assertStrongPublicKey('hello')).toThrow(InvalidPublicKeyError);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => assertStrongPublicKey(ec)).toThrow(/must be an ed25519 key, got ec/);
  });
});

describe('cross-check with @noble/ed25519', () => {
  it('200 random messages signed by node:crypto verify under noble, and the reverse', async () => {
    for (let i = 0; i < 200; i++) {
      const seed = randomBytes(32);
      const message = randomBytes(i % 7 === 0 ? 0 : 1 + (i * 37) % 300);
      const priv = privateKeyFromSeed(seed);
      const raw = rawPublicKey(createPublicKey(priv));
      expect(toHex(await ed.getPublicKeyAsync(seed))).toBe(toHex(raw));

      const byNode = signBytes(priv, message);
      expect(await ed.verifyAsync(byNode, message, raw, { zip215: false })).toBe(true);

      const byNoble = await ed.signAsync(message, seed);
      expect(verifyBytes(publicKeyFromRaw(raw), message, byNoble)).toBe(true);
      // ed25519 is deterministic: both produce the same bytes
      expect(toHex(byNoble)).toBe(toHex(byNode));
    }
  });
});

describe('signObject / verifyObject', () => {
  const pair = generateEd25519();
  const challenge = { capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n1', expiresAt: '2030-01-01T00:00:00.000Z', payTo: 'wal_1' };

  it('round-trips, whatever the key order of the object verified', () => {
    const signature = signObject(pair.privateKeyPem, challenge);
    expect(signature).toMatch(/^[A-Za-z0-9+/]{86}==$/);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, signature, signingKeyId: 'sk_1' })).toBe(true);
    const reordered = Object.fromEntries(Object.entries({ ...challenge, signature }).reverse());
    expect(verifyObject(parsePublicKeyPem(pair.publicKeyPem), reordered)).toBe(true);
  });

  it('signs the object without signature and signingKeyId', () => {
    const signature = signObject(pair.privateKeyPem, { ...challenge, signature: 'old', signingKeyId: 'sk_old' });
    expect(signature).toBe(signObject(pair.privateKeyPem, challenge));
  });

  it('rejects a tampered amount, an added field and another key', () => {
    const signature = signObject(pair.privateKeyPem, challenge);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, amountMinor: '1', signature })).toBe(false);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, extra: 'x', signature })).toBe(false);
    expect(verifyObject(generateEd25519().publicKeyPem, { ...challenge, signature })).toBe(false);
  });

  it('rejects a missing, malformed or non-canonical signature without throwing', () => {
    const signature = signObject(pair.privateKeyPem, challenge);
    expect(verifyObject(pair.publicKeyPem, challenge)).toBe(false);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, signature: signature.slice(0, -2) })).toBe(false);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, signature: 42 })).toBe(false);
    const malleated = Buffer.from(withSPlusL(new Uint8Array(Buffer.from(signature, 'base64')))).toString('base64');
    expect(verifyObject(pair.publicKeyPem, { ...challenge, signature: malleated })).toBe(false);
    expect(verifyObject(pair.publicKeyPem, { ...challenge, amountMinor: NaN, signature })).toBe(false);
  });

  it('refuses to sign what canonical JSON refuses', () => {
    expect(() => signObject(pair.privateKeyPem, { amountMinor: 100n })).toThrow(/cannot be signed/);
  });
});
