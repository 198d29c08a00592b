import { describe, expect, it } from 'vitest';
import { ID_PREFIX, randomId } from '../../src/core/ids.js';

describe('randomId', () => {
  it('gives the kind\'s prefix and 16 base36 characters, all distinct across many pool refills', () => {
    // 4 KiB of random bytes serve 256 ids: 5,000 ids draw the pool about 20 times
    const ids = Array.from({ length: 5000 }, (_, i) => randomId(i % 2 ? 'transaction' : 'ledgerEntry'));
    for (const [i, id] of ids.entries()) expect(id).toMatch(new RegExp(`^${i % 2 ? ID_PREFIX.transaction : ID_PREFIX.ledgerEntry}_[0-9a-z]{16}$`));
    expect(new Set(ids.map((id) => id.slice(4))).size).toBe(5000);
    // every character of the alphabet turns up: the bytes are spread, not stuck
    expect(new Set(ids.map((id) => id.slice(4)).join('')).size).toBe(36);
  });
});
