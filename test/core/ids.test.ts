import { describe, expect, it } from 'vitest';
import { challengeNonce, ID_PREFIX, randomId } from '../../src/core/ids.js';

describe('randomId', () => {
  it('gives the kind\'s prefix and 20 base36 characters, all distinct across many pool refills', () => {
    // 4 KiB of random bytes serve 372 ids: 5,000 ids draw the pool over a dozen times
    const ids = Array.from({ length: 5000 }, (_, i) => randomId(i % 2 ? 'transaction' : 'ledgerEntry'));
    for (const [i, id] of ids.entries()) expect(id).toMatch(new RegExp(`^${i % 2 ? ID_PREFIX.transaction : ID_PREFIX.ledgerEntry}_[0-9a-z]{20}$`));
    expect(new Set(ids.map((id) => id.slice(4))).size).toBe(5000);
    // every character of the alphabet turns up in the random part: the bytes are spread, not stuck
    expect(new Set(ids.map((id) => id.slice(4 + 9)).join('')).size).toBe(36);
  });

  it('sorts ids made later after ids made earlier (the time leads), so indexes grow at their right edge', async () => {
    const before = Date.now();
    const first = randomId('receipt');
    await new Promise((r) => setTimeout(r, 5));
    const second = randomId('receipt');
    expect(second > first).toBe(true);
    expect(parseInt(first.slice(4, 13), 36)).toBeGreaterThanOrEqual(before);
    expect(parseInt(first.slice(4, 13), 36)).toBeLessThanOrEqual(Date.now());
  });
});

describe('challengeNonce', () => {
  it('is the time, then 24 random bytes in base64url: distinct, and later ones sort later', async () => {
    const nonces = Array.from({ length: 2000 }, () => challengeNonce());
    for (const n of nonces) expect(n).toMatch(/^[0-9a-z]{9}[A-Za-z0-9_-]{32}$/);
    expect(new Set(nonces).size).toBe(2000);
    const early = challengeNonce();
    await new Promise((r) => setTimeout(r, 5));
    expect(challengeNonce().slice(0, 9) > early.slice(0, 9)).toBe(true);
  });
});
