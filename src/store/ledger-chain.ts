/**
 * The ledger's rule, in one place: where a movement goes in its wallet's chain and whether it may.
 * Both stores' `LedgerRepo.place` call `placeAfter` under the wallet's lock (SQLite: its one
 * writer; PostgreSQL: the wallet's row locked FOR NO KEY UPDATE until COMMIT) with the wallet's
 * head, and append what it returns; nothing else appends to the ledger (docs/architecture.md,
 * "Money").
 */
import { MovementRefused } from './errors.js';
import type { LedgerEntry, Placement } from './repos/wallets.js';

/**
 * The entries that `ps` become, in order, each after its wallet's head: `heads` answers a wallet's
 * last entry (undefined: none yet) and is told each new head (`set`). Each entry's `seq` is the
 * head's plus one and its running sums are the head's extended by the movement. Refused
 * (MovementRefused, nothing appended) when a movement would leave the balance, the held amount or
 * the available amount negative.
 */
export function placeAfter(heads: Pick<Map<string, LedgerEntry | undefined>, 'get' | 'set'>, ps: readonly Placement[]): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (const p of ps) {
    const head = heads.get(p.walletId);
    const balanceAfter = (head?.balanceAfter ?? 0n) + p.amountMinor;
    const heldAfter = (head?.heldAfter ?? 0n) + p.holdMinor;
    if (balanceAfter < 0n || heldAfter < 0n || balanceAfter - heldAfter < 0n) {
      const balance = head?.balanceAfter ?? 0n;
      const held = head?.heldAfter ?? 0n;
      throw new MovementRefused(`wallet ${p.walletId} would be left with balance ${balanceAfter} and held ${heldAfter}: refused`, {
        walletId: p.walletId, balanceMinor: balance, heldMinor: held, availableMinor: balance - held,
      });
    }
    const entry: LedgerEntry = { ...p, seq: (head?.seq ?? 0) + 1, balanceAfter, heldAfter };
    heads.set(p.walletId, entry);
    out.push(entry);
  }
  return out;
}
