import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SequentialIds } from '../../src/core/ids.js';
import { balanceOf, post } from '../../src/domain/wallets/ledger.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

let dir: string;
let path: string;
let store: SqliteStore;
const clock = new ManualClock();
const ids = new SequentialIds();

async function newWallet(): Promise<string> {
  return store.tx(async (r) => {
    const t = await createTenant(r, { clock, ids }, { kind: 'provider', name: 'p' });
    return t.settlementWalletId!;
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentpay-store-'));
  path = join(dir, 'test.db');
  store = new SqliteStore({ path });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SqliteStore.tx (group commit)', () => {
  it('rolls back only the transaction that threw when several share one commit', async () => {
    const w = await newWallet();
    const results = await Promise.allSettled([
      store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 10n, currency: 'USD' })),
      store.tx(async (r) => {
        await post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 1000n, currency: 'USD' });
        throw new Error('changed my mind');
      }),
      store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 5n, currency: 'USD' })),
    ]);
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const entries = await store.read((r) => r.ledger.list(w));
    expect(entries.map((e) => e.amountMinor)).toEqual([10n, 5n]);
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.read((r) => balanceOf(r, w))).balanceMinor).toBe(15n);
  });

  it('keeps every acknowledged transaction after the database is reopened', async () => {
    const w = await newWallet();
    await Promise.all(Array.from({ length: 300 }, () => store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 1n, currency: 'USD' }))));
    await store.close();
    store = new SqliteStore({ path });
    const entries = await store.read((r) => r.ledger.list(w));
    expect(entries).toHaveLength(300);
    expect(entries.at(-1)!.balanceAfter).toBe(300n);
  });

  it('never overdraws under concurrent debits: exactly the funded number succeed', async () => {
    const w = await newWallet();
    await store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 150n, currency: 'USD' }));
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, () => store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD' }))),
    );
    expect(results.filter((x) => x.status === 'fulfilled')).toHaveLength(150);
    const b = await store.read((r) => balanceOf(r, w));
    expect(b).toEqual({ balanceMinor: 150n, heldMinor: 150n, availableMinor: 0n });
  });

  it('refuses UPDATE and DELETE on the ledger at the database', async () => {
    const w = await newWallet();
    await store.tx((r) => post(r, { clock, ids }, { walletId: w, type: 'fund', amountMinor: 7n, currency: 'USD' }));
    expect(() => store.raw.prepare('UPDATE ledger_entries SET amount_minor = 9').run()).toThrow(/append-only/);
    expect(() => store.raw.prepare('DELETE FROM ledger_entries').run()).toThrow(/append-only/);
  });
});
