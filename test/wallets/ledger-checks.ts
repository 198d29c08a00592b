/** Checks every wallet test makes of a ledger read through the API. */
import { expect } from 'vitest';
import type { AgentpayClient, LedgerEntry } from '../../packages/sdk/src/client/index.js';

/** seq is 1..n without gaps; each running sum is the previous one plus the entry. */
export function expectConsistent(entries: LedgerEntry[]): void {
  let balance = 0n;
  let held = 0n;
  entries.forEach((e, i) => {
    expect(e.seq, `entry ${e.id}`).toBe(i + 1);
    balance += BigInt(e.amountMinor);
    held += BigInt(e.holdMinor);
    expect(e.balanceAfterMinor, `running balance at seq ${e.seq}`).toBe(balance.toString());
    expect(e.heldAfterMinor, `running held amount at seq ${e.seq}`).toBe(held.toString());
  });
}

export const sumOf = (entries: LedgerEntry[]) => entries.reduce((s, e) => s + BigInt(e.amountMinor), 0n);

/**
 * The wallet's ledger is consistent, its amounts are exactly `amounts` (oldest first),
 * and the balance route agrees with the sum (no holds: available equals balance).
 */
export async function expectLedger(client: AgentpayClient, walletId: string, amounts: string[]): Promise<LedgerEntry[]> {
  const entries = await client.wallets.ledger(walletId);
  expect(entries.map((e) => e.amountMinor)).toEqual(amounts);
  expectConsistent(entries);
  const sum = sumOf(entries).toString();
  expect(await client.wallets.balance(walletId)).toEqual({ balanceMinor: sum, availableMinor: sum, currency: 'USD' });
  return entries;
}
