/**
 * Micro-benchmark of the SDK's header encoding (src/sdk/base64.ts) against the btoa version
 * it replaced and Node's Buffer, on a header the size of a payment proof.
 * Usage: npx tsx bench/base64.ts [--runs 200000]
 */
import { fromBase64Url, toBase64Url } from '../packages/sdk/src/contract/base64.js';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 200_000;
const header = {
  challenge: { capabilityId: 'cap_0123456789abcdefghij', providerId: 'prv_0123456789abcdefghij', amountMinor: '100', currency: 'USD', nonce: 'n'.repeat(26), expiresAt: new Date().toISOString(), payTo: 'wal_0123456789abcdefghij', signingKeyId: 'sk_0123456789abcdefgh', signature: 'A'.repeat(86) + '==' },
  walletId: 'wal_0123456789abcdefghij', signature: 'B'.repeat(86) + '==',
};
const bytes = new TextEncoder().encode(JSON.stringify(header));

/** the version before: btoa over a char-code string, then the URL-safe replacements */
function btoaEncode(b: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < b.length; i += 0x8000) binary += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
function atobDecode(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const encoded = toBase64Url(bytes);
const cases: [string, () => unknown][] = [
  ['encode: sdk (table)', () => toBase64Url(bytes)],
  ['encode: btoa (before)', () => btoaEncode(bytes)],
  ['encode: Buffer', () => Buffer.from(bytes).toString('base64url')],
  ['decode: sdk (atob)', () => fromBase64Url(encoded)],
  ['decode: atob (before)', () => atobDecode(encoded)],
  ['decode: Buffer', () => Buffer.from(encoded, 'base64url')],
];
console.log(`${bytes.length}-byte header, ${runs} runs each, second of two rounds`);
for (let round = 0; round < 2; round++) {
  for (const [name, fn] of cases) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) fn();
    const us = Number(process.hrtime.bigint() - start) / runs / 1000;
    if (round === 1) console.log(`${name.padEnd(24)} ${us.toFixed(2)} µs`);
  }
}
