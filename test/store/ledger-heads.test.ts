/**
 * The PostgreSQL store's per-process ledger heads and wallet turns (src/store/pg/ledger-heads.ts), on
 * their own: who holds a wallet, what head is kept, and what a collision changes. The store contract
 * (store-contract.test.ts) covers them through a real PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { LedgerHeads, type HeldTurns } from '../../src/store/pg/ledger-heads.js';
import type { LedgerEntry } from '../../src/store/repos/wallets.js';

const entry = (walletId: string, seq: number) => ({ walletId, seq }) as unknown as LedgerEntry;
const tx = (): HeldTurns => ({ turns: [] });

describe('LedgerHeads', () => {
  it('gives a wallet to one transaction at a time, in the order they asked, and keeps the head each commit leaves', async () => {
    const heads = new LedgerHeads();
    const [a, b, c] = [tx(), tx(), tx()];
    expect(await heads.take(a, ['w1', 'w2'])).toEqual(['w1', 'w2']);
    const order: string[] = [];
    const bTook = heads.take(b, ['w1']).then((t) => order.push(`b:${t}`));
    const cTook = heads.take(c, ['w1']).then((t) => order.push(`c:${t}`));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    expect(heads.knows('w1')).toBe(false);
    heads.committed(a, new Map([['w1', entry('w1', 3)], ['w2', undefined]]));
    await bTook;
    expect(order).toEqual(['b:w1']);
    expect(heads.head('w1')).toMatchObject({ seq: 3 });
    expect(heads.knows('w2')).toBe(true); // known empty
    heads.abandoned(b, undefined);
    await cTook;
    expect(order).toEqual(['b:w1', 'c:w1']);
    expect(heads.knows('w1')).toBe(false); // forgotten with b's failure
    heads.committed(c, new Map());
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('leaves a wallet out when its turn does not come within the wait, so the caller locks it instead', async () => {
    const heads = new LedgerHeads({ waitMs: 30, sharedMs: 1_000, now: () => 0 });
    const a = tx();
    await heads.take(a, ['w1']);
    const b = tx();
    expect(await heads.take(b, ['w1', 'w2'])).toEqual(['w2']);
    expect(b.turns).toEqual(['w2']);
    heads.committed(a, new Map());
    // the timed-out waiter is not handed the turn later
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('treats a wallet a stale head collided on as shared for a while: its waiters and later transactions are left to lock it', async () => {
    let now = 0;
    const heads = new LedgerHeads({ waitMs: 1_000, sharedMs: 100, now: () => now });
    const a = tx();
    await heads.take(a, ['w1']);
    const waiting = heads.take(tx(), ['w1']);
    heads.abandoned(a, 'w1');
    expect(await waiting).toEqual([]);
    expect(await heads.take(tx(), ['w1'])).toEqual([]);
    now = 101;
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('reads the wallet of a unique violation of ledger_wallet_seq from PostgreSQL\'s detail, through causes', () => {
    const pgError = { code: '23505', constraint: 'ledger_wallet_seq', detail: 'Key (wallet_id, seq)=(wal_0abc, 12) already exists.' };
    expect(LedgerHeads.collision(pgError)).toBe('wal_0abc');
    expect(LedgerHeads.collision(new Error('wrapped', { cause: pgError }))).toBe('wal_0abc');
    expect(LedgerHeads.collision({ code: '23505', constraint: 'transactions_pkey', detail: 'Key (id)=(x) already exists.' })).toBeUndefined();
  });
});
