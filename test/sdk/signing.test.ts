import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createPublicKey, generateKeyPairSync, randomBytes, verify as nodeVerify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as core from '../../src/core/ed25519.js';
import * as sdk from '../../src/sdk/signing.js';
import { hex, identityKeyForgery, identityRSignature, toHex, withBothSigns, withSPlusL } from '../core/ed25519-attacks.js';
import { RFC8032_VECTORS } from '../core/rfc8032-vectors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const challenge = { capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n1', expiresAt: '2030-01-01T00:00:00.000Z', payTo: 'wal_1' };

describe('src/sdk/signing.ts', () => {
  it('imports nothing but @noble/ed25519 and the dependency-free canonical JSON', () => {
    const imports = (path: string) => [...readFileSync(new URL(path, import.meta.url), 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports('../../src/sdk/signing.ts')).toEqual(['@noble/ed25519', '../core/canonical-json.js']);
    expect(imports('../../src/core/canonical-json.ts')).toEqual([]);
  });

  it('runs without Buffer (as in a browser or an edge runtime): converts keys, signs and verifies', () => {
    // a separate process on the compiled module, because the test runner itself needs Buffer
    const pair = core.generateEd25519();
    const script = `
      delete globalThis.Buffer;
      const s = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/src/sdk/signing.js')).href)});
      const [publicKeyPem, privateKeyPem] = JSON.parse(process.argv[1]);
      const obj = { amountMinor: '100', nonce: 'n' };
      const fresh = await s.generateKeyPair();
      const out = {
        buffer: typeof Buffer,
        pemRoundTrip: s.rawToPublicKeyPem(s.publicKeyPemToRaw(publicKeyPem)) === publicKeyPem && s.seedToPrivateKeyPem(s.privateKeyPemToSeed(privateKeyPem)) === privateKeyPem,
        signature: await s.signObject(privateKeyPem, obj),
        fresh: await s.verifyObject(fresh.publicKeyPem, { ...obj, signature: await s.signObject(fresh.privateKeyPem, obj) }),
      };
      out.verifies = await s.verifyObject(publicKeyPem, { ...obj, signature: out.signature });
      out.tamperedVerifies = await s.verifyObject(publicKeyPem, { ...obj, amountMinor: '101', signature: out.signature });
      console.log(JSON.stringify(out));`;
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify([pair.publicKeyPem, pair.privateKeyPem])], { encoding: 'utf8' });
    expect(JSON.parse(stdout)).toEqual({
      buffer: 'undefined',
      pemRoundTrip: true,
      signature: core.signObject(pair.privateKeyPem, { amountMinor: '100', nonce: 'n' }),
      fresh: true,
      verifies: true,
      tamperedVerifies: false,
    });
  });
});

describe('PEM and raw keys', () => {
  it('writes the same PEM as node:crypto and reads node:crypto PEM back to the same bytes', () => {
    for (let i = 0; i < 20; i++) {
      const pair = core.generateEd25519();
      const raw = core.rawPublicKey(core.parsePublicKeyPem(pair.publicKeyPem));
      expect(toHex(sdk.publicKeyPemToRaw(pair.publicKeyPem))).toBe(toHex(raw));
      expect(sdk.rawToPublicKeyPem(raw)).toBe(pair.publicKeyPem);
      const seed = sdk.privateKeyPemToSeed(pair.privateKeyPem);
      expect(sdk.seedToPrivateKeyPem(seed)).toBe(pair.privateKeyPem);
      expect(toHex(core.rawPublicKey(createPublicKey(core.privateKeyFromSeed(seed))))).toBe(toHex(raw));
    }
  });

  it('derives the public key from a seed or a PEM', async () => {
    const v = RFC8032_VECTORS[0]!;
    expect(toHex(await sdk.publicKeyOf(hex(v.secretKey)))).toBe(v.publicKey);
    expect(toHex(await sdk.publicKeyOf(sdk.seedToPrivateKeyPem(hex(v.secretKey))))).toBe(v.publicKey);
  });

  it('accepts PEM with CRLF line ends and surrounding whitespace', () => {
    const pair = core.generateEd25519();
    const crlf = `\n  ${pair.publicKeyPem.replace(/\n/g, '\r\n')}  `;
    expect(sdk.publicKeyPemToRaw(crlf)).toEqual(sdk.publicKeyPemToRaw(pair.publicKeyPem));
  });

  it('refuses other key types and malformed PEM, saying what was expected', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => sdk.publicKeyPemToRaw(ec.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toThrow(/not an ed25519 SPKI public key/);
    expect(() => sdk.privateKeyPemToSeed(ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toThrow(/not an ed25519 PKCS#8/);
    const pair = core.generateEd25519();
    expect(() => sdk.publicKeyPemToRaw(pair.privateKeyPem)).toThrow(/BEGIN PUBLIC KEY/);
    expect(() => sdk.privateKeyPemToSeed(pair.publicKeyPem)).toThrow(/BEGIN PRIVATE KEY/);
    expect(() => sdk.publicKeyPemToRaw('-----BEGIN PUBLIC KEY-----\nnot*base64\n-----END PUBLIC KEY-----')).toThrow(sdk.SigningKeyError);
    expect(() => sdk.rawToPublicKeyPem(new Uint8Array(31))).toThrow(/32 bytes/);
  });

  it('encodes and decodes base64 exactly as Buffer does', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const b64 = Buffer.from(bytes).toString('base64');
      expect(sdk.base64Encode(bytes)).toBe(b64);
      expect(toHex(sdk.base64Decode(b64))).toBe(toHex(bytes));
    }
    expect(() => sdk.base64Decode('abc')).toThrow(/base64/);
    expect(() => sdk.base64Decode('ab-_')).toThrow(/base64/);
  });
});

describe('cross-check with src/core/ed25519.ts', () => {
  it.each(RFC8032_VECTORS)('reproduces RFC 8032 $name', async (v) => {
    expect(toHex(await sdk.signBytes(hex(v.secretKey), hex(v.message)))).toBe(v.signature);
    expect(await sdk.verifyBytes(hex(v.publicKey), hex(v.message), hex(v.signature))).toBe(true);
    expect(await sdk.verifyBytes(sdk.rawToPublicKeyPem(hex(v.publicKey)), hex(v.message), hex(v.signature))).toBe(true);
  });

  it('signs objects to the same signature as the gateway, and each verifies the other (200 objects)', async () => {
    for (let i = 0; i < 200; i++) {
      const pair = core.generateEd25519();
      const obj = { ...challenge, nonce: randomBytes(12).toString('base64url'), amountMinor: String(i * 97), memo: randomBytes(i % 40).toString('hex'), nested: { i, tags: ['é', '😀', String(i)] } };
      const bySdk = await sdk.signObject(pair.privateKeyPem, obj);
      const byCore = core.signObject(pair.privateKeyPem, obj);
      expect(bySdk).toBe(byCore);
      expect(core.verifyObject(pair.publicKeyPem, { ...obj, signature: bySdk, signingKeyId: 'sk_x' })).toBe(true);
      expect(await sdk.verifyObject(pair.publicKeyPem, { ...obj, signature: byCore, signingKeyId: 'sk_x' })).toBe(true);
      expect(await sdk.verifyObject(pair.publicKeyPem, { ...obj, amountMinor: String(i * 97 + 1), signature: byCore })).toBe(false);
    }
  });

  it('flags exactly the encodings the gateway flags as small order', () => {
    const candidates = [
      ...core.SMALL_ORDER_ENCODINGS.flatMap(withBothSigns),
      ...Array.from({ length: 100 }, () => new Uint8Array(randomBytes(32))),
      ...Array.from({ length: 20 }, () => core.rawPublicKey(core.parsePublicKeyPem(core.generateEd25519().publicKeyPem))),
      new Uint8Array(31),
    ];
    for (const c of candidates) expect(sdk.isSmallOrderEncoding(c), toHex(c)).toBe(core.isSmallOrderEncoding(c));
  });
});

describe('verifyBytes / verifyObject are strict', () => {
  const seed = new Uint8Array(randomBytes(32));
  const message = new TextEncoder().encode('pay 100 minor units to prv_1');

  it('refuses a non-canonical S (S + L)', async () => {
    const raw = await sdk.publicKeyOf(seed);
    const signature = await sdk.signBytes(seed, message);
    expect(await sdk.verifyBytes(raw, message, signature)).toBe(true);
    const malleated = withSPlusL(signature);
    expect(sdk.isCanonicalS(malleated)).toBe(false);
    expect(await sdk.verifyBytes(raw, message, malleated)).toBe(false);
  });

  it('refuses R = identity with S = k·a, which noble (RFC 8032 mode) and OpenSSL accept', async () => {
    const { publicKey, signature } = await identityRSignature(seed, message);
    expect(nodeVerify(null, message, core.publicKeyFromRaw(publicKey), signature)).toBe(true);
    expect(await sdk.verifyBytes(publicKey, message, signature)).toBe(false);
    expect(core.verifyBytes(core.publicKeyFromRaw(publicKey), message, signature)).toBe(false);
  });

  it('refuses the identity as public key, which "signs" every message under OpenSSL', async () => {
    const { publicKey, signature } = identityKeyForgery();
    expect(nodeVerify(null, message, core.publicKeyFromRaw(publicKey), signature)).toBe(true);
    expect(await sdk.verifyBytes(publicKey, message, signature)).toBe(false);
    for (const enc of core.SMALL_ORDER_ENCODINGS.flatMap(withBothSigns)) {
      expect(await sdk.verifyBytes(enc, message, signature), toHex(enc)).toBe(false);
    }
  });

  it('refuses R of any small order', async () => {
    const raw = await sdk.publicKeyOf(seed);
    const signature = await sdk.signBytes(seed, message);
    for (const enc of core.SMALL_ORDER_ENCODINGS.flatMap(withBothSigns)) {
      const sig = Uint8Array.from(signature);
      sig.set(enc, 0);
      expect(await sdk.verifyBytes(raw, message, sig)).toBe(false);
    }
  });

  it('fails when any bit of the signature flips', async () => {
    const raw = await sdk.publicKeyOf(seed);
    const signature = await sdk.signBytes(seed, message);
    for (let bit = 0; bit < 512; bit++) {
      const s = Uint8Array.from(signature);
      s[bit >> 3]! ^= 1 << (bit & 7);
      expect(await sdk.verifyBytes(raw, message, s), `bit ${bit}`).toBe(false);
    }
  });

  it('returns false, never throws, on malformed keys, signatures and objects', async () => {
    const signature = await sdk.signObject(seed, challenge);
    const pem = sdk.rawToPublicKeyPem(await sdk.publicKeyOf(seed));
    expect(await sdk.verifyObject(pem, { ...challenge, signature })).toBe(true);
    expect(await sdk.verifyObject('not a pem', { ...challenge, signature })).toBe(false);
    expect(await sdk.verifyObject(new Uint8Array(31), { ...challenge, signature })).toBe(false);
    expect(await sdk.verifyObject(pem, challenge)).toBe(false);
    expect(await sdk.verifyObject(pem, { ...challenge, signature: signature.replace(/==$/, '') })).toBe(false);
    expect(await sdk.verifyObject(pem, { ...challenge, when: new Date(0), signature })).toBe(false);
    expect(await sdk.verifyBytes(pem, message, new Uint8Array(63))).toBe(false);
  });

  it('refuses to sign with a key that is not a 32-byte seed or a PKCS#8 PEM', async () => {
    await expect(sdk.signObject(new Uint8Array(64), challenge)).rejects.toThrow(/32 bytes/);
    await expect(sdk.signObject(sdk.rawToPublicKeyPem(await sdk.publicKeyOf(seed)), challenge)).rejects.toThrow(/BEGIN PRIVATE KEY/);
  });
});
