import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SequentialIds } from '../../src/core/ids.js';
import { post } from '../../src/domain/wallets/ledger.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { spendQuery, WALLET_IS, WORKSPACE_IS } from '../../src/store/sql/policies.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { storeBackends } from '../helpers/store-backends.js';

const DAY = 86_400_000;
let store: Store;
const clock = new ManualClock(10 * DAY);
const deps = { clock, ids: new SequentialIds() };

/** A workspace with one funded agent wallet. */
async function fundedWallet(): Promise<{ workspaceId: string; walletId: string }> {
  return store.tx(async (r) => {
    const t = await createTenant(r, deps, { kind: 'workspace', name: 'w' });
    const walletId = deps.ids.next('wallet');
    await r.wallets.insert({ id: walletId, tenantId: t.id, ownerType: 'agent', ownerId: 'agent-1', publicKeyPem: null, status: 'active', frozen: false, frozenBy: null, currency: 'USD', createdAt: clock.now(), updatedAt: clock.now() });
    await post(r, deps, { walletId, type: 'fund', amountMinor: 1_000_000n, currency: 'USD' });
    return { workspaceId: t.id, walletId };
  });
}

/** A purchase's hold, then its capture or its refund, as authorize / complete / fail write them. */
async function purchase(walletId: string, amount: bigint, outcome: 'capture' | 'refund'): Promise<void> {
  await store.tx(async (r) => {
    const transactionId = deps.ids.next('transaction');
    await post(r, deps, { walletId, type: 'hold', amountMinor: 0n, holdMinor: amount, currency: 'USD', transactionId });
    await post(r, deps, outcome === 'capture'
      ? { walletId, type: 'capture', amountMinor: -amount, holdMinor: -amount, currency: 'USD', transactionId }
      : { walletId, type: 'refund', amountMinor: 0n, holdMinor: -amount, currency: 'USD', transactionId });
  });
}

/** An authorized call, not completed: its transaction and its hold, as authorize writes them. */
async function openCall(walletId: string, workspaceId: string, amount: bigint, ttlMs: number): Promise<{ id: string; expiresAt: number }> {
  return store.tx(async (r) => {
    const id = deps.ids.next('transaction');
    const now = clock.now();
    await r.transactions.insert({
      id, nonce: `nonce-${id}`, capabilityId: 'cap_1', providerId: 'prv_1', walletId, workspaceId, amountMinor: amount, feeMinor: null,
      currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: now, expiresAt: now + ttlMs, resolvedAt: null,
    });
    await post(r, deps, { walletId, type: 'hold', amountMinor: 0n, holdMinor: amount, currency: 'USD', transactionId: id });
    return { id, expiresAt: now + ttlMs };
  });
}

// each test makes a workspace and wallet of its own: one database per backend serves them all
describe.each(storeBackends('spend'))('the spend of a budget day on $name', (b) => {
  beforeAll(async () => {
    await b.setup();
    store = await b.open();
  });
  afterAll(async () => {
    await store?.close();
    await b.teardown();
  });

  it('counts the holds placed in the window, less the ones refunded, by wallet and by workspace', async () => {
    const { workspaceId, walletId } = await fundedWallet();
    const dayStart = clock.now();
    clock.advance(-DAY);
    await purchase(walletId, 500n, 'capture'); // the day before: outside the window
    clock.set(dayStart + 1000);
    await purchase(walletId, 100n, 'capture');
    await purchase(walletId, 40n, 'refund'); // held and given back: not spent
    await purchase(walletId, 7n, 'capture');
    clock.set(dayStart + DAY);
    await purchase(walletId, 900n, 'capture'); // the next day: outside the window
    const window = [dayStart, dayStart + DAY, clock.now()] as const;
    expect(await store.read((r) => r.spend.byWallet(walletId, ...window))).toBe(107n);
    expect(await store.read((r) => r.spend.byWorkspace(workspaceId, ...window))).toBe(107n);
    expect(await store.read((r) => r.spend.byWallet(walletId, dayStart + DAY, dayStart + 2 * DAY, clock.now()))).toBe(900n);
  });

  it('does not count a call past its in-flight time that the sweeper has not refunded yet (a refund due)', async () => {
    const { workspaceId, walletId } = await fundedWallet();
    const dayStart = clock.now();
    clock.set(dayStart + 1000);
    await purchase(walletId, 100n, 'capture');
    const open = await openCall(walletId, workspaceId, 600n, 15 * 60_000);
    const spent = (now: number) => store.read(async (r) => [await r.spend.byWallet(walletId, dayStart, dayStart + DAY, now), await r.spend.byWorkspace(workspaceId, dayStart, dayStart + DAY, now)]);
    // open and within its in-flight time: counts, so parallel calls cannot overshoot
    expect(await spent(open.expiresAt - 1)).toEqual([700n, 700n]);
    // at its expiry it is a refund due, still `authorized` with its hold in place
    expect(await spent(open.expiresAt)).toEqual([100n, 100n]);
    expect(await store.read(async (r) => (await r.transactions.get(open.id))!.status)).toBe('authorized');
  });

});

describe('the spend query on SQLite (Spend)', () => {
  let dir: string;
  let sqlite: SqliteStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentpay-spend-'));
    sqlite = new SqliteStore({ path: join(dir, 'test.db') });
  });
  afterEach(async () => {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a wallet\'s holds of the day through the ledger_holds index, not the wallet\'s whole history', async () => {
    // a budget policy runs this inside every authorization's write transaction: a scan of the
    // wallet's ledger took 38 ms at 200,000 entries
    const plan = (filter: string) =>
      (sqlite.raw.prepare(`EXPLAIN QUERY PLAN ${spendQuery(filter)}`).all('wal_1', 0, DAY, DAY) as { detail: string }[]).map((row) => row.detail);
    for (const filter of [WALLET_IS, WORKSPACE_IS]) {
      const details = plan(filter);
      // without the index: 'SEARCH h USING INDEX ledger_wallet_seq (wallet_id=?)', every entry of the wallet
      const holds = details.find((d) => d.startsWith('SEARCH h '));
      expect(holds, details.join('\n')).toMatch(/USING (COVERING )?INDEX ledger_holds \(wallet_id=\? AND created_at>\? AND created_at<\?\)/);
      // the in-flight check looks each hold's transaction up by its key, not the open transactions
      expect(details.find((d) => d.startsWith('SEARCH t ')), details.join('\n')).toMatch(/USING (COVERING )?INDEX sqlite_autoindex_transactions_1 \(id=\?\)/);
    }
  });
});
