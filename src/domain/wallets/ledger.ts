/**
 * Ledger movements. Every function here takes `Repos` from an open transaction:
 * a movement and everything that goes with it commit together or not at all.
 */
import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Repos } from '../../store/store.js';
import { MovementRefused } from '../../store/errors.js';
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
 * Asks the store to place movements, in the order given, each after its wallet's last entry
 * (`Ledger.place`): the store owns the ledger's rule (src/store/ledger-chain.ts) and refuses
 * a movement that would leave the balance, the held amount or the available amount negative with
 * `MovementRefused`, before anything is appended. Returns the entries appended.
 */
export function placeAll(r: Repos, deps: { clock: Clock; ids: IdGenerator }, ms: Movement[]): Promise<LedgerEntry[]> {
  return r.ledger.place(ms.map((m) => placement(deps, m)));
}

/** One movement placed, as `placeAll` places each. */
export async function place(r: Repos, deps: { clock: Clock; ids: IdGenerator }, m: Movement): Promise<LedgerEntry> {
  return (await r.ledger.place([placement(deps, m)]))[0]!;
}

/** One movement placed, a refusal answered as INSUFFICIENT_FUNDS (the wallet and what it has available). */
export async function post(r: Repos, deps: { clock: Clock; ids: IdGenerator }, m: Movement): Promise<LedgerEntry> {
  try {
    return await place(r, deps, m);
  } catch (e) {
    if (e instanceof MovementRefused) throw insufficientFunds(e);
    throw e;
  }
}

/** A refusal of the store's as the domain's error; `amountMinor`: what was asked for, when it says so. */
export function insufficientFunds(e: MovementRefused, amountMinor?: bigint): AppError {
  const { walletId, availableMinor } = e.wallet;
  const message = amountMinor === undefined
    ? `wallet ${walletId} has insufficient available balance`
    : `wallet ${walletId} has ${availableMinor} available and the call costs ${amountMinor}; fund the wallet`;
  return new AppError('INSUFFICIENT_FUNDS', message, {
    walletId, availableMinor: availableMinor.toString(), ...(amountMinor === undefined ? {} : { amountMinor: amountMinor.toString() }),
  });
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
