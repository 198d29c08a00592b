/**
 * The PostgreSQL store's per-process ledger heads and wallet turns (src/store/pg/ledger-heads.ts), on
 * their own: who holds a wallet, what head is kept, and what a collision changes. The store contract
 * (store-contract.test.ts) covers them through a real PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { LedgerHeads, type HeldTurns } from '../../src/store/pg/ledger-heads.js';
import type { LedgerEntry } from '../../src/store/repos/wallets.js';

const entry = (walletId: string, seq: number) => ({ walletId, seq }) as unknown as LedgerEntry;
const tx = (): HeldTurns => ({ turns: [], published: [] });

describe('LedgerHeads', () => {
  it('gives a wallet to one transaction at a time, in the order they asked, passing it on as each appends (the next builds on the head in flight) or sends its COMMIT', async () => {
    const heads = new LedgerHeads();
    const [a, b, c] = [tx(), tx(), tx()];
    expect(await heads.take(a, ['w1', 'w2'])).toEqual(['w1', 'w2']);
    const order: string[] = [];
    const bTook = heads.take(b, ['w1']).then((t) => order.push(`b:${t}`));
    const cTook = heads.take(c, ['w1']).then((t) => order.push(`c:${t}`));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    expect(heads.knows('w1')).toBe(false);
    heads.publish(a, 'w1', entry('w1', 3));
    await bTook;
    expect(a.turns).toEqual(['w2']);
    heads.sent(a, new Map([['w2', undefined]]));
    expect(order).toEqual(['b:w1']);
    // b builds on the head a has in flight
    expect(heads.head('w1')).toMatchObject({ seq: 3 });
    expect(heads.inFlight('w1')).toBe(true);
    expect(heads.knows('w2')).toBe(true); // known empty, not in flight (a appended nothing to it)
    expect(heads.inFlight('w2')).toBe(false);
    heads.committed(a);
    expect(heads.inFlight('w1')).toBe(false);
    heads.abandoned(b, undefined);
    await cTook;
    expect(order).toEqual(['b:w1', 'c:w1']);
    expect(heads.knows('w1')).toBe(false); // forgotten with b's failure
    heads.sent(c, new Map());
    heads.committed(c);
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('gives a wallet to a transaction that decides on its head (strict) only once nothing of this process is in flight on it, keeping the order', async () => {
    const heads = new LedgerHeads();
    const [a, b, c] = [tx(), tx(), tx()];
    await heads.take(a, ['w1']);
    heads.publish(a, 'w1', entry('w1', 1));
    heads.sent(a, new Map());
    const order: string[] = [];
    const bTook = heads.take(b, ['w1'], true).then(() => order.push('b'));
    const cTook = heads.take(c, ['w1']).then(() => order.push('c'));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]); // b waits for a's COMMIT to be answered, and c behind b
    heads.committed(a);
    await bTook;
    expect(order).toEqual(['b']);
    heads.publish(b, 'w1', entry('w1', 2));
    await cTook;
    expect(order).toEqual(['b', 'c']);
    heads.committed(b);
    heads.abandoned(c, undefined);
    expect(heads.inFlight('w1')).toBe(false);
  });

  it('leaves a wallet out when its turn does not come within the wait, so the caller locks it instead', async () => {
    const heads = new LedgerHeads({ waitMs: 30, sharedMs: 1_000, now: () => 0 });
    const a = tx();
    await heads.take(a, ['w1']);
    const b = tx();
    expect(await heads.take(b, ['w1', 'w2'])).toEqual(['w2']);
    expect(b.turns).toEqual(['w2']);
    heads.sent(a, new Map());
    heads.committed(a);
    // the timed-out waiter is not handed the turn later
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('treats a wallet a stale head collided on as shared for a while: its waiters and later transactions are left to lock it', async () => {
    let now = 0;
    const heads = new LedgerHeads({ waitMs: 1_000, sharedMs: 100, now: () => now });
    const a = tx();
    await heads.take(a, ['w1']);
    const waiting = heads.take(tx(), ['w1']);
    heads.abandoned(a, { walletId: 'w1' });
    expect(await waiting).toEqual([]);
    expect(await heads.take(tx(), ['w1'])).toEqual([]);
    now = 101;
    expect(await heads.take(tx(), ['w1'])).toEqual(['w1']);
  });

  it('does not treat a wallet as shared when the head the database found instead is one this process made (the one built on failed)', async () => {
    const heads = new LedgerHeads({ waitMs: 1_000, sharedMs: 100, now: () => 0 });
    const a = tx();
    await heads.take(a, ['w1']);
    heads.publish(a, 'w1', { ...entry('w1', 1), id: 'led_a' } as LedgerEntry);
    const b = tx();
    await heads.take(b, ['w1']);
    heads.publish(b, 'w1', { ...entry('w1', 2), id: 'led_b' } as LedgerEntry);
    heads.abandoned(a, undefined);
    heads.abandoned(b, { walletId: 'w1', found: 'led_a' });
    const c = tx();
    expect(await heads.take(c, ['w1'])).toEqual(['w1']);
    // found a head nobody here made: another instance appended
    heads.abandoned(c, { walletId: 'w1', found: 'led_other' });
    expect(await heads.take(tx(), ['w1'])).toEqual([]);
  });

  it('reads the wallet of a unique violation of ledger_wallet_seq, or of a refused expectation, from PostgreSQL\'s detail, through causes', () => {
    const pgError = { code: '23505', constraint: 'ledger_wallet_seq', detail: 'Key (wallet_id, seq)=(wal_0abc, 12) already exists.' };
    expect(LedgerHeads.collision(pgError)).toEqual({ walletId: 'wal_0abc' });
    expect(LedgerHeads.collision(new Error('wrapped', { cause: pgError }))).toEqual({ walletId: 'wal_0abc' });
    expect(LedgerHeads.collision({ code: '23505', constraint: 'transactions_pkey', detail: 'Key (id)=(x) already exists.' })).toBeUndefined();
    // a refused expectation of ledger_heads_expect (drizzle-pg/0016)
    expect(LedgerHeads.collision({ code: '40001', detail: 'ledger head (wallet_id)=(wal_0def) found (led_1)' })).toEqual({ walletId: 'wal_0def', found: 'led_1' });
    expect(LedgerHeads.collision({ code: '40001', detail: 'ledger head (wallet_id)=(wal_0def) found ()' })).toEqual({ walletId: 'wal_0def', found: undefined });
    expect(LedgerHeads.collision({ code: '40001', detail: 'something else' })).toBeUndefined();
  });
});
