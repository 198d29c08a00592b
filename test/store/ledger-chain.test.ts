/**
 * The hashed encoding of a ledger entry (src/store/ledger-chain.ts, docs/ledger.md): `entryBody`
 * writes the canonical JSON of the documented object directly; it must be byte for byte what
 * `canonicalize` makes of that object, for any entry, or every chain's hashes would change.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../packages/sdk/src/contract/canonical-json.js';
import { entryBody, entryHash, LEDGER_HASH_VERSION } from '../../src/store/ledger-chain.js';
import type { LedgerEntry } from '../../src/store/repos/wallets.js';

type Unhashed = Omit<LedgerEntry, 'hash'>;

/** The documented object, as canonicalize writes it (the encoding of version 1). */
const documented = (e: Unhashed, prev: string | null) => canonicalize({
  v: LEDGER_HASH_VERSION, prev, id: e.id, walletId: e.walletId, seq: e.seq, type: e.type,
  amountMinor: e.amountMinor.toString(), holdMinor: e.holdMinor.toString(), balanceAfter: e.balanceAfter.toString(), heldAfter: e.heldAfter.toString(),
  currency: e.currency, transactionId: e.transactionId ?? null, reference: e.reference ?? null, memo: e.memo ?? null, createdAt: e.createdAt,
});

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('it\'s "quoted"', 'back\\slash', 'line\nbreak', '\u2028', '😀', ''));
const entry: fc.Arbitrary<Unhashed> = fc.record({
  id: text, walletId: text, seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), type: text,
  amountMinor: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), holdMinor: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  balanceAfter: fc.bigInt({ min: 0n, max: 2n ** 70n }), heldAfter: fc.bigInt({ min: 0n, max: 2n ** 70n }),
  currency: text, transactionId: fc.option(text, { nil: null }), reference: fc.option(text, { nil: null }), memo: fc.option(text, { nil: null }),
  createdAt: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
}) as fc.Arbitrary<Unhashed>;

describe('the hashed encoding of a ledger entry', () => {
  it('is canonicalize\'s of the documented object, byte for byte, for any entry', () => {
    fc.assert(fc.property(entry, fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: null }), (e, prev) => {
      expect(entryBody(e, prev)).toBe(documented(e, prev));
      expect(entryHash(e, prev)).toBe(createHash('sha256').update(documented(e, prev), 'utf8').digest('hex'));
    }), { numRuns: 2_000, seed: 28 });
  });

  it('refuses what canonicalize refuses: a lone surrogate in a string', () => {
    const e = { id: 'led_1', walletId: 'wal_1', seq: 1, type: 'fund', amountMinor: 1n, holdMinor: 0n, balanceAfter: 1n, heldAfter: 0n, currency: 'USD', transactionId: null, reference: null, memo: 'a\uD800b', createdAt: 1 } as Unhashed;
    expect(() => entryBody(e, null)).toThrow(/lone surrogate/);
    expect(() => documented(e, null)).toThrow(/lone surrogate/);
  });
});
