/**
 * The protocol helpers the seller middleware and the buyer share, checked against
 * Node's own implementations, and the seller's route-to-capability choice.
 */
import { describe, expect, it } from 'vitest';
import { createSellerPayments } from '../../packages/sdk/src/seller/core.js';
import { responseHashSync } from '../../packages/sdk/src/seller/sync-hash.js';
import { base64UrlDecode, decodeHeader, encodeHeader, paymentRequiredBody, responseHash } from '../../packages/sdk/src/protocol.js';
import { sha256 } from './helpers.js';

describe('header encoding', () => {
  it('is base64url without padding of the UTF-8 JSON, as Buffer encodes it, and decodes back', () => {
    const value = { walletId: 'wal_1', note: 'héllo 🌍', n: [1, 2, 3], deep: { a: '>>>???' } };
    const encoded = encodeHeader(value);
    expect(encoded).toBe(Buffer.from(JSON.stringify(value), 'utf8').toString('base64url'));
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeHeader(encoded)).toEqual(value);
  });

  it('refuses what is not base64url JSON of an object', () => {
    expect(() => decodeHeader('not base64!')).toThrow();
    expect(() => decodeHeader(Buffer.from('[1,2]').toString('base64url'))).toThrow(/object/);
    expect(() => decodeHeader(Buffer.from('{"a":').toString('base64url'))).toThrow();
    expect(() => base64UrlDecode('a')).toThrow();
  });
});

describe('responseHash', () => {
  it('is sha256:<lowercase hex> of the exact bytes, the same through WebCrypto and node:crypto', async () => {
    for (const body of ['', '{"ok":true}', 'héllo wörld', Buffer.from([0, 255, 10, 13])]) {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      expect(await responseHash(bytes)).toBe(sha256(bytes));
      expect(responseHashSync(bytes)).toBe(sha256(bytes));
    }
    expect(await responseHash('{"ok":true}')).toBe(sha256('{"ok":true}'));
  });
});

describe('the 402 body', () => {
  it('is the error envelope with PAYMENT_REQUIRED and the challenge', () => {
    const challenge = { capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n', expiresAt: '2026-11-21T10:05:00.000Z', payTo: 'wal_1', signature: 's', signingKeyId: 'sk_1' };
    const body = paymentRequiredBody(challenge);
    expect(body.error.code).toBe('PAYMENT_REQUIRED');
    expect(body.error.message).toContain('x-payment');
    expect(body.challenge).toBe(challenge);
  });
});

describe('createSellerPayments().capabilityFor', () => {
  const seller = createSellerPayments({
    gatewayUrl: 'https://127.0.0.1:1',
    apiKey: 'unused',
    capabilityId: 'cap_default',
    routes: { 'POST /summarize': 'cap_post', '/forecast/:city': 'cap_forecast' },
  });

  it('takes "METHOD path" first, then the path for any method, then the default', () => {
    expect(seller.capabilityFor('post', '/summarize')).toBe('cap_post');
    expect(seller.capabilityFor('GET', '/summarize')).toBe('cap_default');
    expect(seller.capabilityFor('GET', '/forecast/:city')).toBe('cap_forecast');
    expect(seller.capabilityFor('DELETE', '/other')).toBe('cap_default');
  });

  it('leaves a route free when nothing names it and there is no default', () => {
    const only = createSellerPayments({ gatewayUrl: 'https://127.0.0.1:1', apiKey: 'unused', routes: { '/paid': 'cap_1' } });
    expect(only.capabilityFor('GET', '/paid')).toBe('cap_1');
    expect(only.capabilityFor('GET', '/free')).toBeUndefined();
  });
});
