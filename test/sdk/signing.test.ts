import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify as nodeVerify } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as core from '../../src/core/ed25519.js';
import * as sdk from '../../packages/sdk/src/signing.js';
import { hex, identityKeyForgery, identityRSignature, L, le32, leToBig, toHex, torsionPoints, withBothSigns, withSPlusL } from '../core/ed25519-attacks.js';
import { RFC8032_VECTORS } from '../core/rfc8032-vectors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const signingModule = pathToFileURL(join(root, 'packages/sdk/dist/signing.js')).href;
const BACKENDS = ['noble', 'webcrypto'] as const;
const challenge = { capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n1', expiresAt: '2030-01-01T00:00:00.000Z', payTo: 'wal_1' };

describe('packages/sdk/src/signing.ts', () => {
  it('imports nothing but @noble/ed25519, three dependency-free modules of the contract (canonical JSON, strict ed25519, base64)', () => {
    const source = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    // static imports and re-exports (`export … from`), one or several lines each
    const imports = (path: string) => [...source(path).matchAll(/^(?:import\b[^'";]*?|export\b[^'";]*?\bfrom\s*)['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports('../../packages/sdk/src/signing.ts')).toEqual(['@noble/ed25519', './contract/canonical-json.js', './contract/ed25519-strict.js', './contract/base64.js']);
    expect(imports('../../packages/sdk/src/contract/base64.ts')).toEqual([]);
    expect(imports('../../packages/sdk/src/contract/canonical-json.ts')).toEqual([]);
    expect(imports('../../packages/sdk/src/contract/ed25519-strict.ts')).toEqual([]);
    for (const path of ['../../packages/sdk/src/signing.ts', '../../packages/sdk/src/contract/base64.ts', '../../packages/sdk/src/contract/canonical-json.ts', '../../packages/sdk/src/contract/ed25519-strict.ts']) {
      expect(source(path), `${path} loads nothing at run time`).not.toMatch(/\bimport\(|\brequire\(/);
    }
  });

  it('runs the same encoding checks as the gateway (one shared module)', () => {
    expect(sdk.isCanonicalS).toBe(core.isCanonicalS);
    expect(sdk.isCanonicalPointEncoding).toBe(core.isCanonicalPointEncoding);
    expect(sdk.isSmallOrderEncoding).toBe(core.isSmallOrderEncoding);
  });

  it('runs without Buffer (as in a browser or an edge runtime): converts keys, signs and verifies', () => {
    // a separate process on the compiled module, because the test runner itself needs Buffer
    const pair = core.generateEd25519();
    const script = `
      delete globalThis.Buffer;
      const s = await import(${JSON.stringify(signingModule)});
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

  it('chooses WebCrypto on Node 20, and imports each key once (the 256 most recently used are kept)', async () => {
    sdk.__setBackendForTests('auto');
    expect(await sdk.signingBackend()).toBe('webcrypto');
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    try {
      const message = new TextEncoder().encode('m');
      const seeds = Array.from({ length: 257 }, () => new Uint8Array(randomBytes(32)));
      const first = await sdk.signBytes(seeds[0]!, message);
      expect(await sdk.signBytes(sdk.seedToPrivateKeyPem(seeds[0]!), message)).toEqual(first); // seed and PEM: one key
      expect(importKey).toHaveBeenCalledTimes(1);
      for (const seed of seeds.slice(1)) await sdk.signBytes(seed, message);
      expect(importKey).toHaveBeenCalledTimes(257);
      await sdk.signBytes(seeds[256]!, message); // still kept
      expect(importKey).toHaveBeenCalledTimes(257);
      await sdk.signBytes(seeds[0]!, message); // dropped for 256 newer keys: imported again
      expect(importKey).toHaveBeenCalledTimes(258);

      const pair = core.generateEd25519();
      const signed = { ...challenge, signature: core.signObject(pair.privateKeyPem, challenge) };
      expect(await sdk.verifyObject(pair.publicKeyPem, signed)).toBe(true);
      expect(await sdk.verifyObject(sdk.publicKeyPemToRaw(pair.publicKeyPem), signed)).toBe(true);
      expect(importKey).toHaveBeenCalledTimes(259);
    } finally {
      importKey.mockRestore();
    }
  });

  it('falls back to noble where WebCrypto lacks Ed25519 or signs differently, with the same signatures', () => {
    // a child process on the compiled module, where WebCrypto can be broken on purpose; each
    // scenario imports a fresh instance of the module (a new URL), so detection runs again
    const pair = core.generateEd25519();
    const script = `
      const subtle = globalThis.crypto.subtle;
      const isEd25519 = (alg) => String(alg?.name ?? alg).toLowerCase() === 'ed25519';
      const realImportKey = subtle.importKey.bind(subtle);
      const realSign = subtle.sign.bind(subtle);
      const [publicKeyPem, privateKeyPem] = JSON.parse(process.argv[1]);
      const obj = { amountMinor: '100', nonce: 'n' };
      const run = async (scenario) => {
        const s = await import(${JSON.stringify(signingModule)} + '?' + scenario);
        const signature = await s.signObject(privateKeyPem, obj);
        return {
          backend: await s.signingBackend(),
          signature,
          verifies: await s.verifyObject(publicKeyPem, { ...obj, signature }),
          tamperedVerifies: await s.verifyObject(publicKeyPem, { ...obj, amountMinor: '101', signature }),
        };
      };
      const out = { intact: await run('intact') };
      // an older browser: WebCrypto refuses the algorithm
      subtle.importKey = (format, data, alg, ...rest) =>
        isEd25519(alg) ? Promise.reject(new DOMException('Unrecognized algorithm name', 'NotSupportedError')) : realImportKey(format, data, alg, ...rest);
      out.missing = await run('missing');
      subtle.importKey = realImportKey;
      // a runtime whose Ed25519 signatures verify but are not RFC 8032's deterministic bytes
      subtle.sign = async (alg, key, data) => {
        const sig = new Uint8Array(await realSign(alg, key, data));
        if (isEd25519(alg)) sig[0] ^= 1;
        return sig.buffer;
      };
      out.different = await run('different');
      console.log(JSON.stringify(out));`;
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify([pair.publicKeyPem, pair.privateKeyPem])], { encoding: 'utf8' });
    const same = { signature: core.signObject(pair.privateKeyPem, { amountMinor: '100', nonce: 'n' }), verifies: true, tamperedVerifies: false };
    expect(JSON.parse(stdout)).toEqual({
      intact: { backend: 'webcrypto', ...same },
      missing: { backend: 'noble', ...same },
      different: { backend: 'noble', ...same },
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

/** Runs the enclosing describe block on one backend of packages/sdk/src/signing.ts. */
function onBackend(backend: (typeof BACKENDS)[number]): void {
  beforeAll(() => sdk.__setBackendForTests(backend));
  afterAll(() => sdk.__setBackendForTests('auto'));
}

describe.each(BACKENDS)('cross-check with src/core/ed25519.ts, on %s', (backend) => {
  onBackend(backend);

  it('signs and verifies through that backend', async () => {
    const sign = vi.spyOn(globalThis.crypto.subtle, 'sign');
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify');
    try {
      expect(await sdk.signingBackend()).toBe(backend);
      const v = RFC8032_VECTORS[1]!;
      expect(toHex(await sdk.signBytes(hex(v.secretKey), hex(v.message)))).toBe(v.signature);
      expect(await sdk.verifyBytes(hex(v.publicKey), hex(v.message), hex(v.signature))).toBe(true);
      const calls = backend === 'webcrypto' ? 1 : 0;
      expect(sign).toHaveBeenCalledTimes(calls);
      expect(verify).toHaveBeenCalledTimes(calls);
    } finally {
      sign.mockRestore();
      verify.mockRestore();
    }
  });

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
});

describe.each(BACKENDS)('verifyBytes / verifyObject are strict, on %s', (backend) => {
  onBackend(backend);
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

  it('refuses R with a small-order component added, which noble\'s own (cofactored) verify accepts', async () => {
    const { publicKey, signature } = await withTorsion(seed, message, 'R');
    expect(await ed.verifyAsync(signature, message, publicKey, { zip215: false })).toBe(true);
    expect(nodeVerify(null, message, core.publicKeyFromRaw(publicKey), signature)).toBe(false);
    expect(core.verifyBytes(core.publicKeyFromRaw(publicKey), message, signature)).toBe(false);
    expect(await sdk.verifyBytes(publicKey, message, signature)).toBe(false);
  });

  it('agrees with OpenSSL on a key with a small-order component: valid only when [k]T is the identity', async () => {
    // noble's cofactored equation accepts all of these; OpenSSL (the gateway) only those with 8 | k
    const fixedSeed = hex(RFC8032_VECTORS[0]!.secretKey);
    const seen = new Set<boolean>();
    for (let i = 0; seen.size < 2 && i < 200; i++) {
      const m = new TextEncoder().encode(`message ${i}`);
      const { publicKey, signature, k } = await withTorsion(fixedSeed, m, 'A');
      const byOpenSsl = nodeVerify(null, m, core.publicKeyFromRaw(publicKey), signature);
      expect(byOpenSsl, `k = ${k}`).toBe(k % 8n === 0n);
      expect(await ed.verifyAsync(signature, m, publicKey, { zip215: false })).toBe(true);
      expect(await sdk.verifyBytes(publicKey, m, signature), `k = ${k}`).toBe(byOpenSsl);
      seen.add(byOpenSsl);
    }
    expect([...seen].sort()).toEqual([false, true]);
  });

  it('refuses y >= p in A or R before any curve arithmetic', async () => {
    const nonCanonical = hex('f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'); // y = p + 3: a point, not of small order
    expect(sdk.isSmallOrderEncoding(nonCanonical)).toBe(false);
    const raw = await sdk.publicKeyOf(seed);
    const signature = await sdk.signBytes(seed, message);
    const withR = Uint8Array.from(signature);
    withR.set(nonCanonical, 0);
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify');
    try {
      expect(await sdk.verifyBytes(raw, message, withR)).toBe(false);
      expect(await sdk.verifyBytes(nonCanonical, message, signature)).toBe(false);
      expect(importKey).not.toHaveBeenCalled();
      expect(verify).not.toHaveBeenCalled();
    } finally {
      importKey.mockRestore();
      verify.mockRestore();
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

/**
 * A signature by the holder of `seed` whose R, or public key A, carries T, a point of order 8:
 * R = [r]B (+ T), A = [a]B (+ T), S = r + k·a with k = H(R || A || M). The cofactored
 * equation holds for all of them; the cofactorless one [S]B = R + [k]A only when [k]T = 0,
 * so never for R + T, and for A + T when 8 divides k.
 */
async function withTorsion(seed: Uint8Array, message: Uint8Array, where: 'R' | 'A'): Promise<{ publicKey: Uint8Array; signature: Uint8Array; k: bigint }> {
  const T = torsionPoints()[1]!;
  const { scalar: a, point } = await ed.utils.getExtendedPublicKeyAsync(seed);
  const r = 0x5eed5eed5eed5eedn;
  const R = (where === 'R' ? ed.Point.BASE.multiply(r).add(T) : ed.Point.BASE.multiply(r)).toBytes();
  const publicKey = (where === 'A' ? point.add(T) : point).toBytes();
  const k = leToBig(new Uint8Array(createHash('sha512').update(R).update(publicKey).update(message).digest())) % L;
  const signature = new Uint8Array(64);
  signature.set(R, 0);
  signature.set(le32((r + k * a) % L), 32);
  return { publicKey, signature, k };
}
