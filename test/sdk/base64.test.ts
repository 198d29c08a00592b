import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromBase64, fromBase64Url, toBase64, toBase64Url } from '../../packages/sdk/src/contract/base64.js';
import { base64UrlDecode, decodeHeader, encodeHeader } from '../../packages/sdk/src/protocol.js';
import { base64Decode } from '../../packages/sdk/src/signing.js';

describe('sdk base64 (no Buffer, checked against Node\'s Buffer)', () => {
  it('encodes and decodes every length from 0 to 300 bytes exactly as Buffer does', () => {
    for (let n = 0; n <= 300; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const buf = Buffer.from(bytes);
      expect(toBase64(bytes)).toBe(buf.toString('base64'));
      expect(toBase64Url(bytes)).toBe(buf.toString('base64url'));
      expect(Buffer.from(fromBase64(buf.toString('base64')))).toEqual(buf);
      expect(Buffer.from(fromBase64Url(buf.toString('base64url')))).toEqual(buf);
    }
  });

  it('covers every byte value and both alphabets', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(toBase64Url(all)).toBe(Buffer.from(all).toString('base64url'));
    expect(toBase64(all)).toContain('+');
    expect(toBase64Url(all)).not.toMatch(/[+/=]/);
  });

  it('refuses characters outside the alphabet and impossible lengths', () => {
    expect(() => fromBase64Url('ab+c')).toThrow();
    expect(() => fromBase64Url('ab/c')).toThrow();
    expect(() => fromBase64Url('abcde')).toThrow(); // 4n+1 characters
    expect(() => fromBase64Url('ab c')).toThrow();
    expect(() => fromBase64Url('abé')).toThrow();
    expect(() => fromBase64('ab-c')).toThrow();
    expect(Array.from(fromBase64Url('AQI='))).toEqual([1, 2]); // padding tolerated
  });

  it('keeps the header encoding and the strict signature decoding as they were', () => {
    const value = { text: 'häßlich 🙂', amountMinor: '100', nested: { a: [1, 2] } };
    const header = encodeHeader(value);
    expect(header).toBe(Buffer.from(JSON.stringify(value)).toString('base64url'));
    expect(decodeHeader(header)).toEqual(value);
    expect(() => base64UrlDecode('not base64!')).toThrow();
    expect(() => base64Decode('AQI')).toThrow(); // signing.ts wants the padding
    expect(Array.from(base64Decode('AQI='))).toEqual([1, 2]);
  });
});
