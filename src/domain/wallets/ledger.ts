/**
 * Ledger movements. Every function here takes `Repos` from an open transaction:
 * a movement and everything that goes with it commit together or not at all.
 */
import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Repos } from '../../store/store.js';
import type { LedgerEntry, Placement } from '../../store/repos/wallets.js';

export type EntryType =
  | 'fund' // sandbox credit
  | 'topup' // processor-confirmed top-up
  | 'deposit' // USDC deposit
  | 'hold' // purchase authorized: available goes down
  | 'release' // hold given back without a refund (e.g. an approval-free cancel)
  | 'refund' // hold given back because the paid call failed or expired
  | 'capture' // held money leaves the buyer
  | 'sale' // seller's share of a sale
  | 'fee' // platform's share of a sale
  | 'payout' // money leaves for a bank or chain
  | 'payout_return' // a returned payout comes back
  | 'correction';

export interface Balance {
  balanceMinor: bigint;
  heldMinor: bigint;
  availableMinor: bigint;
}

export interface Movement {
  walletId: string;
  type: EntryType;
  /** change to the balance */
  amountMinor: bigint;
  /** change to the held amount */
  holdMinor?: bigint;
  currency: string;
  transactionId?: string | null;
  reference?: string | null;
  memo?: string | null;
}

export async function balanceOf(r: Repos, walletId: string): Promise<Balance> {
  return balanceFrom(await r.ledger.last(walletId));
}

/** The balance a wallet's last entry (`r.ledger.last`) leaves; none: an empty wallet. */
export function balanceFrom(last: LedgerEntry | undefined): Balance {
  const balanceMinor = last?.balanceAfter ?? 0n;
  const heldMinor = last?.heldAfter ?? 0n;
  return { balanceMinor, heldMinor, availableMinor: balanceMinor - heldMinor };
}

/**
 * Appends one entry and extends the wallet's running sums. Refuses any entry that
 * would leave the balance, the held amount or the available amount negative, so a
 * caller's bug cannot overdraw a wallet either. `known.last`: the wallet's last entry, when the
 * caller has just read it in the same transaction (saves reading it again).
 */
export async function post(r: Repos, deps: { clock: Clock; ids: IdGenerator }, m: Movement, known?: { last: LedgerEntry | undefined }): Promise<LedgerEntry> {
  const last = known ? known.last : await r.ledger.last(m.walletId);
  const hold = m.holdMinor ?? 0n;
  const balanceAfter = (last?.balanceAfter ?? 0n) + m.amountMinor;
  const heldAfter = (last?.heldAfter ?? 0n) + hold;
  if (balanceAfter < 0n || heldAfter < 0n || balanceAfter - heldAfter < 0n) {
    throw new AppError('INSUFFICIENT_FUNDS', `wallet ${m.walletId} has insufficient available balance`, {
      walletId: m.walletId,
      availableMinor: String((last?.balanceAfter ?? 0n) - (last?.heldAfter ?? 0n)),
    });
  }
  const entry: LedgerEntry = {
    id: deps.ids.next('ledgerEntry'),
    walletId: m.walletId,
    seq: (last?.seq ?? 0) + 1,
    type: m.type,
    amountMinor: m.amountMinor,
    holdMinor: hold,
    balanceAfter,
    heldAfter,
    currency: m.currency,
    transactionId: m.transactionId ?? null,
    reference: m.reference ?? null,
    memo: m.memo ?? null,
    createdAt: deps.clock.now(),
  };
  await r.ledger.append(entry);
  return entry;
}

/**
 * A movement the caller need not check first (a seller's sale, the platform's fee, the capture of
 * a hold): the store places it after the wallet's last entry itself (`ledger.place`) instead of
 * this process reading the head first, and refuses it, failing the transaction, if it would leave
 * a sum negative (a caller's bug). A wallet that every sale moves is then held for that one step,
 * not for a round trip between the read and the write (PostgreSQL).
 */
export async function place(r: Repos, deps: { clock: Clock; ids: IdGenerator }, m: Movement): Promise<void> {
  await r.ledger.place(placement(deps, m));
}

/** Movements placed by the store in the order given, as `place` places each (one statement on PostgreSQL). */
export async function placeAll(r: Repos, deps: { clock: Clock; ids: IdGenerator }, ms: Movement[]): Promise<void> {
  await r.ledger.placeAll(ms.map((m) => placement(deps, m)));
}

function placement(deps: { clock: Clock; ids: IdGenerator }, m: Movement): Placement {
  return {
    id: deps.ids.next('ledgerEntry'),
    walletId: m.walletId,
    type: m.type,
    amountMinor: m.amountMinor,
    holdMinor: m.holdMinor ?? 0n,
    currency: m.currency,
    transactionId: m.transactionId ?? null,
    reference: m.reference ?? null,
    memo: m.memo ?? null,
    createdAt: deps.clock.now(),
  };
}

/** The wire form of a ledger entry. */
export function entryView(e: LedgerEntry) {
  return {
    id: e.id,
    walletId: e.walletId,
    seq: e.seq,
    type: e.type,
    amountMinor: e.amountMinor.toString(),
    holdMinor: e.holdMinor.toString(),
    balanceAfterMinor: e.balanceAfter.toString(),
    heldAfterMinor: e.heldAfter.toString(),
    currency: e.currency,
    transactionId: e.transactionId,
    reference: e.reference,
    memo: e.memo,
    createdAt: new Date(e.createdAt).toISOString(),
  };
}
