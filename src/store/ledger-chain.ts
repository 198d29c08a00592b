/**
 * The ledger's rule, in one place: where a movement goes in its wallet's chain and whether it may.
 * Both stores' `Ledger.place` call `placeAfter` under the wallet's lock (SQLite: its one
 * writer; PostgreSQL: the wallet's row locked FOR NO KEY UPDATE until COMMIT) with the wallet's
 * head, and append what it returns; nothing else appends to the ledger (docs/architecture.md,
 * "Money").
 */
import { createHash } from 'node:crypto';
import { canonicalize } from 'agentpay-sdk/contract';
import { MovementRefused } from './errors.js';
import type { LedgerEntry, Placement } from './repos/wallets.js';

/** The version of the hashed encoding below; a new encoding gets a new number (docs/ledger.md). */
export const LEDGER_HASH_VERSION = 1;

/**
 * An entry's link in its wallet's chain, version 1: the lowercase hex SHA-256 of the UTF-8 bytes of
 * the canonical JSON (keys sorted, no whitespace: docs/protocol.md) of
 * `{v: 1, prev, id, walletId, seq, type, amountMinor, holdMinor, balanceAfter, heldAfter, currency,
 * transactionId, reference, memo, createdAt}`, amounts as decimal strings, `createdAt` in
 * milliseconds since 1970, absent values as null, `prev` the previous entry's hash (null for a
 * wallet's first entry). Every column of the entry but `hash` is covered.
 */
export function entryHash(e: Omit<LedgerEntry, 'hash'>, prev: string | null): string {
  return createHash('sha256').update(entryBody(e, prev), 'utf8').digest('hex');
}

/**
 * The canonical JSON that `entryHash` hashes, written in its keys' sorted order directly (on every
 * placement: `canonicalize`'s walk and sort cost several times the hash). The same bytes as
 * `canonicalize` of that object (test/store/ledger-chain.test.ts holds the two together), refusing
 * what it refuses: a string with a lone surrogate, a number that is not finite.
 */
export function entryBody(e: Omit<LedgerEntry, 'hash'>, prev: string | null): string {
  return `{"amountMinor":"${e.amountMinor}","balanceAfter":"${e.balanceAfter}","createdAt":${num(e.createdAt)},"currency":${str(e.currency)}`
    + `,"heldAfter":"${e.heldAfter}","holdMinor":"${e.holdMinor}","id":${str(e.id)},"memo":${str(e.memo ?? null)},"prev":${str(prev)}`
    + `,"reference":${str(e.reference ?? null)},"seq":${num(e.seq)},"transactionId":${str(e.transactionId ?? null)},"type":${str(e.type)}`
    + `,"v":${LEDGER_HASH_VERSION},"walletId":${str(e.walletId)}}`;
}

const str = (s: string | null): string => (s === null ? 'null' : (s as string & { isWellFormed(): boolean }).isWellFormed() ? JSON.stringify(s) : canonicalize(s));
const num = (n: number): string => (Number.isFinite(n) ? JSON.stringify(n) : canonicalize(n));

/**
 * The entries that `ps` become, in order, each after its wallet's head: `heads` answers a wallet's
 * last entry (undefined: none yet) and is told each new head (`set`). Each entry's `seq` is the
 * head's plus one, its running sums are the head's extended by the movement and its hash links it
 * to the head's (`entryHash`). Refused
 * (MovementRefused, nothing appended, `heads` unchanged) when a movement would leave the balance, the held amount or
 * the available amount negative.
 */
export function placeAfter(heads: Pick<Map<string, LedgerEntry | undefined>, 'get' | 'set'>, ps: readonly Placement[]): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  // the new heads, told to `heads` only once every movement is placed: a refusal leaves them as they were
  const moved = new Map<string, LedgerEntry>();
  for (const p of ps) {
    const head = moved.get(p.walletId) ?? heads.get(p.walletId);
    const balanceAfter = (head?.balanceAfter ?? 0n) + p.amountMinor;
    const heldAfter = (head?.heldAfter ?? 0n) + p.holdMinor;
    if (balanceAfter < 0n || heldAfter < 0n || balanceAfter - heldAfter < 0n) {
      const balance = head?.balanceAfter ?? 0n;
      const held = head?.heldAfter ?? 0n;
      throw new MovementRefused(`wallet ${p.walletId} would be left with balance ${balanceAfter} and held ${heldAfter}: refused`, {
        walletId: p.walletId, balanceMinor: balance, heldMinor: held, availableMinor: balance - held,
      });
    }
    const unhashed = { ...p, seq: (head?.seq ?? 0) + 1, balanceAfter, heldAfter };
    const entry: LedgerEntry = { ...unhashed, hash: entryHash(unhashed, head?.hash ?? null) };
    moved.set(p.walletId, entry);
    out.push(entry);
  }
  for (const [w, e] of moved) heads.set(w, e);
  return out;
}

/**
 * The hashes a wallet's entries (all of them, by seq) lack: each computed as `entryHash` links it to
 * the one before. For the entries written before the hash chain existed (the one update the
 * append-only triggers allow: drizzle/0019, drizzle-pg/0014).
 */
export function seals(entries: readonly LedgerEntry[]): { id: string; hash: string }[] {
  const out: { id: string; hash: string }[] = [];
  let prev: string | null = null;
  for (const e of entries) {
    if (e.hash === null) {
      const hash = entryHash(e, prev);
      out.push({ id: e.id, hash });
      prev = hash;
    } else prev = e.hash;
  }
  return out;
}
