import { describe, expect, it } from 'vitest';
import type { Challenge } from '../../src/domain/payments/challenge.js';
import { IssuedChallenges } from '../../src/domain/payments/issued-challenges.js';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const challenge = (nonce: string, expiresAtMs = T0 + 300_000): Challenge => ({
  capabilityId: 'cap_a', providerId: 'prv_a', amountMinor: '100', currency: 'USD', nonce,
  expiresAt: new Date(expiresAtMs).toISOString(), payTo: 'wal_a', signature: `sig-${nonce}`, signingKeyId: 'key_a',
});

describe('IssuedChallenges', () => {
  it('knows a challenge it signed, as it was signed, also after a JSON round trip', () => {
    const issued = new IssuedChallenges();
    const c = challenge('n1');
    issued.remember(c, T0);
    expect(issued.signedHere(JSON.parse(JSON.stringify(c)))).toBe(true);
  });

  it('does not know a challenge with any field, the signature or the key id changed, or an extra field', () => {
    const issued = new IssuedChallenges();
    const c = challenge('n1');
    issued.remember(c, T0);
    expect(issued.signedHere({ ...c, amountMinor: '1' })).toBe(false);
    expect(issued.signedHere({ ...c, payTo: 'wal_thief' })).toBe(false);
    expect(issued.signedHere({ ...c, signature: 'other' })).toBe(false);
    expect(issued.signedHere({ ...c, signingKeyId: 'key_b' })).toBe(false);
    expect(issued.signedHere({ ...c, extra: true })).toBe(false);
    expect(issued.signedHere(challenge('n2'))).toBe(false);
    expect(issued.signedHere({ ...c, nonce: 42 })).toBe(false);
  });

  it('forgets expired challenges and, past its bound, the oldest', () => {
    const issued = new IssuedChallenges(2);
    issued.remember(challenge('old', T0 + 10), T0);
    issued.remember(challenge('a', T0 + 300_000), T0 + 20); // 'old' expired: pruned
    expect(issued.size).toBe(1);
    issued.remember(challenge('b', T0 + 300_001), T0 + 21);
    issued.remember(challenge('c', T0 + 300_002), T0 + 22); // bound 2: 'a' evicted
    expect(issued.signedHere(challenge('a', T0 + 300_000))).toBe(false);
    expect(issued.signedHere(challenge('b', T0 + 300_001))).toBe(true);
    expect(issued.signedHere(challenge('c', T0 + 300_002))).toBe(true);
  });
});
