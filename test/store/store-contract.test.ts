/**
 * One contract for every Store backend: SQLite always, PostgreSQL too when
 * AGENTPAY_TEST_DATABASE_URL is set (a fresh database per backend run, dropped afterwards).
 * What the domain relies on: exact bigint money, the append-only gap-free ledger enforced by the
 * database, typed unique violations, all-or-nothing transactions, list orders, search, spend
 * and totals, and (PostgreSQL) fleet duties held by one store at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { randomIds } from '../../src/core/ids.js';
import { balanceOf, place, placeAll, post } from '../../src/domain/wallets/ledger.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { issueKey, type Principal } from '../../src/domain/tenancy/api-keys.js';
import { AuthThrottles, DEFAULT_ACCOUNT_LIMITS, throttleKey } from '../../src/domain/tenancy/auth-throttles.js';
import { KeyService } from '../../src/domain/tenancy/key-service.js';
import { AccountService } from '../../src/domain/tenancy/accounts.js';
import { hashPassword } from '../../src/domain/tenancy/passwords.js';
import { MemoryMailer } from '../../src/domain/platform/mailer.js';
import { newWalletRow } from '../../src/domain/wallets/wallets.js';
import type { Store } from '../../src/store/store.js';
import { AlreadyResolved, MovementRefused, UniqueViolation } from '../../src/store/errors.js';
import type { Transaction } from '../../src/store/repos/payments.js';
import { CHAIN_HEADS, headsByIndex } from '../../src/store/sql/wallets.js';
import type { PgStore } from '../../src/store/pg/pg-store.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { onAdmin } from '../helpers/pg-admin.js';
import { storeBackends } from '../helpers/store-backends.js';
import { until } from '../helpers/wait.js';

const backends = storeBackends('contract');

const clock = new ManualClock(Date.UTC(2026, 0, 1));
const ctx = { clock, ids: randomIds };
const BIG = 9_007_199_254_740_993n; // 2^53 + 1: not a double

describe.each(backends)('Store contract on $name', (b) => {
  let store: Store;
  beforeAll(async () => {
    await b.setup();
    store = await b.open();
  });
  afterAll(async () => {
    await store.close();
    await b.teardown();
  });

  const newWallet = () => store.tx(async (r) => (await createTenant(r, ctx, { kind: 'provider', name: 'p' })).settlementWalletId!);
  const fund = (w: string, amountMinor: bigint) => store.tx((r) => post(r, ctx, { walletId: w, type: 'fund', amountMinor, currency: 'USD' }));

  it('keeps money exact beyond 2^53 and running sums per entry', async () => {
    const w = await newWallet();
    await fund(w, BIG);
    await fund(w, 2n);
    const entries = await store.read((r) => r.ledger.list(w));
    expect(entries.map((e) => [e.seq, e.amountMinor, e.balanceAfter])).toEqual([[1, BIG, BIG], [2, 2n, BIG + 2n]]);
    expect(typeof entries[0]!.createdAt).toBe('number');
    expect((await store.read((r) => balanceOf(r, w))).balanceMinor).toBe(BIG + 2n);
    const totals = await store.read((r) => r.reconciliations.ledgerTotals());
    expect(totals.byType.fund).toBeGreaterThanOrEqual(BIG + 2n);
  });

  it("reads a wallet's head and the chains' heads by the (wallet_id, seq) index: one entry a wallet, however long its ledger", async () => {
    const long = await newWallet();
    await store.tx(async (r) => {
      for (let i = 0; i < 300; i++) await post(r, ctx, { walletId: long, type: 'fund', amountMinor: 1n, currency: 'USD' });
    });
    if (b.name === 'postgres') {
      const pool = (store as PgStore).pool;
      await pool.query('ANALYZE ledger_entries');
      /** rows PostgreSQL read from ledger_entries running `text` (EXPLAIN ANALYZE: every node on the table, rows times loops) */
      const rowsRead = async (text: string, values: unknown[]) => {
        let n = 0;
        type Node = { 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: Node[] };
        const walk = (p: Node): void => {
          if (p['Relation Name'] === 'ledger_entries') n += p['Actual Rows'] * p['Actual Loops'];
          for (const c of p.Plans ?? []) walk(c);
        };
        let k = 0;
        const res = await pool.query<{ 'QUERY PLAN': { Plan: Node }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text.replace(/\?/g, () => `$${++k}`)}`, values);
        walk(res.rows[0]!['QUERY PLAN'][0]!.Plan);
        return n;
      };
      expect(await rowsRead(headsByIndex('e.*'), [[long]])).toBe(1);
      const { rows: [counts] } = await pool.query<{ wallets: string; entries: string }>('SELECT (SELECT count(*) FROM wallets) AS wallets, (SELECT count(*) FROM ledger_entries) AS entries');
      // a few index lookups a wallet (PostgreSQL may look the seq up twice), fewer than the ledger's entries
      expect(Number(counts!.entries)).toBeGreaterThan(3 * Number(counts!.wallets));
      expect(await rowsRead(CHAIN_HEADS, [])).toBeLessThanOrEqual(3 * Number(counts!.wallets));
    } else {
      // SQLite reads a head with ORDER BY seq DESC LIMIT 1 (Ledger.last); the chains' heads search the index per wallet, never scan the ledger
      const plan = ((store as SqliteStore).raw.prepare(`EXPLAIN QUERY PLAN ${CHAIN_HEADS}`).all() as { detail: string }[]).map((r) => r.detail);
      expect(plan.some((d) => /^SEARCH l USING (COVERING )?INDEX ledger_wallet_seq/.test(d)), plan.join('\n')).toBe(true);
      expect(plan.filter((d) => /^SCAN l\b/.test(d))).toEqual([]);
    }
    const heads = await store.read((r) => r.ledger.heads());
    expect(heads.find((h) => h.walletId === long)).toMatchObject({ seq: 300 });
    expect((await store.read((r) => r.ledger.list(long))).at(-1)).toMatchObject({ seq: 300, balanceAfter: 300n });
  });

  it('refuses to change or delete a ledger entry, in the database itself', async () => {
    const w = await newWallet();
    await fund(w, 5n);
    await expect(b.exec(store, `UPDATE ledger_entries SET amount_minor = 9 WHERE wallet_id = '${w}'`)).rejects.toThrow(/append-only/);
    await expect(b.exec(store, `DELETE FROM ledger_entries WHERE wallet_id = '${w}'`)).rejects.toThrow(/append-only/);
    expect((await store.read((r) => r.ledger.list(w))).map((e) => e.amountMinor)).toEqual([5n]);
  });

  it('refuses a second entry with a wallet seq already taken, even one written behind the store', async () => {
    const w = await newWallet();
    const first = await fund(w, 7n);
    // the store never writes one (Ledger.place places after the locked head); the database refuses it anyway
    await expect(b.exec(store, `INSERT INTO ledger_entries (id, wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after, currency, created_at)
      VALUES ('${first.id}_dup', '${w}', 1, 'fund', 1, 0, 8, 0, 'USD', 1)`)).rejects.toThrow(/unique|exists/i);
    expect((await store.read((r) => r.ledger.list(w))).map((e) => e.seq)).toEqual([1]);
  });

  it('raises a reused nonce as UniqueViolation inside the transaction (the domain answers REPLAY_DETECTED)', async () => {
    const txn: Transaction = {
      id: 'txn_a', nonce: `n_${b.name}`, capabilityId: 'cap', providerId: 'prv', walletId: 'w', workspaceId: 'ws', amountMinor: 3n, feeMinor: null,
      currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: 1, expiresAt: 2, resolvedAt: null,
    };
    await store.tx((r) => r.transactions.insert(txn));
    const seen = await store.tx(async (r) => {
      try {
        await r.transactions.insert({ ...txn, id: 'txn_b' });
        return 'inserted';
      } catch (e) {
        return e instanceof UniqueViolation ? 'unique' : String(e);
      }
    }).catch((e: unknown) => (e instanceof UniqueViolation ? 'unique' : String(e)));
    expect(seen).toBe('unique');
    expect((await store.read((r) => r.transactions.byNonce(txn.nonce)))?.id).toBe('txn_a');
    expect((await store.read((r) => r.transactions.listExpired(5, 10))).map((t) => t.id)).toEqual(['txn_a']);
  });

  it('sends writes whose result nobody reads without waiting (PostgreSQL): later reads see them, and a refused one fails the transaction even when what followed it was swallowed', async () => {
    if (b.name === 'sqlite') return; // SQLite writes at the call
    const { PgStore } = await import('../../src/store/pg/pg-store.js');
    const once = await PgStore.open({ url: (store as unknown as { url: string }).url, maxAttempts: 1 });
    const txn: Transaction = {
      id: 'txn_w1', nonce: 'n_writebehind', capabilityId: 'cap', providerId: 'prv', walletId: 'w', workspaceId: 'ws', amountMinor: 3n, feeMinor: null,
      currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: 1, expiresAt: 2, resolvedAt: null,
    };
    try {
      // the insert and the update are not waited for; the read after them sees both
      const seen = await once.tx(async (r) => {
        await r.transactions.insert(txn);
        await r.transactions.update(txn.id, { status: 'succeeded', feeMinor: 1n, resolvedAt: 3 });
        return r.transactions.byNonce(txn.nonce);
      });
      expect([seen?.id, seen?.status, seen?.feeMinor]).toEqual(['txn_w1', 'succeeded', 1n]);
      // the reused nonce is refused after the call returned; the tenant written before it, and
      // the read that failed after it (swallowed here), go with it
      const tenantId = 't_writebehind';
      const attempt = once.tx(async (r) => {
        await r.tenants.insert({ id: tenantId, kind: 'workspace', name: 'x', email: null, website: null, status: 'active', verified: false, settlementWalletId: null, createdAt: 1, updatedAt: 1 });
        await r.transactions.insert({ ...txn, id: 'txn_w2' });
        await r.tenants.get(tenantId).catch(() => undefined);
        return 'returned normally';
      });
      await expect(attempt).rejects.toBeInstanceOf(UniqueViolation);
      expect(await once.read((r) => r.tenants.get(tenantId))).toBeUndefined();
      expect((await once.read((r) => r.transactions.byNonce(txn.nonce)))?.id).toBe('txn_w1');
      // the connection is clean for the next transaction
      expect(await once.tx(async (r) => (await r.transactions.get(txn.id))?.status)).toBe('succeeded');
    } finally {
      await once.close();
    }
  });

  it('keeps idempotency keys of paid calls: one row per (wallet, capability, key), completed with its answer, freed, forgotten when expired', async () => {
    const row = {
      walletId: 'w_idem', capabilityId: 'cap_idem', key: 'k1', requestHash: 'sha256:aa', transactionId: 'txn_idem1', state: 'in_progress' as const,
      responseStatus: null, responseContentType: null, responseBody: null, createdAt: 10, expiresAt: 100,
    };
    await store.tx((r) => r.paymentIdempotency.insert(row));
    // the same (wallet, capability, key) again: a typed UniqueViolation (concurrent first uses charge once)
    const seen = await store.tx(async (r) => {
      await r.paymentIdempotency.insert({ ...row, transactionId: 'txn_idem2', requestHash: 'sha256:bb' });
      return 'inserted';
    }).catch((e: unknown) => (e instanceof UniqueViolation ? 'unique' : String(e)));
    expect(seen).toBe('unique');
    // another key, wallet or capability is its own row
    await store.tx(async (r) => {
      await r.paymentIdempotency.insert({ ...row, key: 'k2', transactionId: 'txn_idem3', expiresAt: 50 });
      await r.paymentIdempotency.insert({ ...row, walletId: 'w_other', transactionId: 'txn_idem4', expiresAt: 200 });
    });
    await store.tx((r) => r.paymentIdempotency.complete('txn_idem1', { status: 201, contentType: 'application/json', body: 'e30=' }));
    expect(await store.read((r) => r.paymentIdempotency.get('w_idem', 'cap_idem', 'k1'))).toEqual({
      ...row, state: 'completed', responseStatus: 201, responseContentType: 'application/json', responseBody: 'e30=',
    });
    expect((await store.read((r) => r.paymentIdempotency.byTransaction('txn_idem3')))?.key).toBe('k2');
    // expired by 100: k1 (100) and k2 (50), not w_other's (200)
    expect(await store.tx((r) => r.paymentIdempotency.removeExpired(100, 10))).toBe(2);
    expect(await store.read((r) => r.paymentIdempotency.get('w_idem', 'cap_idem', 'k1'))).toBeUndefined();
    await store.tx((r) => r.paymentIdempotency.removeByTransaction('txn_idem4'));
    expect(await store.read((r) => r.paymentIdempotency.get('w_other', 'cap_idem', 'k1'))).toBeUndefined();
    await store.tx((r) => r.paymentIdempotency.insert({ ...row, transactionId: 'txn_idem5' }));
    await store.tx((r) => r.paymentIdempotency.remove('w_idem', 'cap_idem', 'k1'));
    expect(await store.read((r) => r.paymentIdempotency.byTransaction('txn_idem5'))).toBeUndefined();
  });

  it('appends concurrent movements of one wallet gap-free, none lost (a store of its own per worker on PostgreSQL)', async () => {
    const w = await newWallet();
    const other = await b.open();
    try {
      await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? other : store).tx((r) => post(r, ctx, { walletId: w, type: 'fund', amountMinor: 1n, currency: 'USD' }))));
      const entries = await store.read((r) => r.ledger.list(w));
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(entries.at(-1)!.balanceAfter).toBe(60n);
    } finally {
      await other.close();
    }
  });

  it('places movements after the wallet\'s last entry with its running sums extended, refuses one that would leave a sum negative, and keeps every one of concurrent placements from two stores, gap-free', async () => {
    const w = await newWallet();
    await store.tx(async (r) => {
      await post(r, ctx, { walletId: w, type: 'fund', amountMinor: 10n, currency: 'USD' });
      await post(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 4n, currency: 'USD' });
      // in the same transaction as the entries before it: placed after them
      await place(r, ctx, { walletId: w, type: 'capture', amountMinor: -4n, holdMinor: -4n, currency: 'USD', transactionId: 'txn_c', reference: 'cap', memo: 'm' });
      await place(r, ctx, { walletId: w, type: 'sale', amountMinor: 5n, currency: 'USD' });
    });
    // a capture of more than is held: refused, and nothing of its transaction is kept
    const tenantId = `t_place_${w}`;
    await expect(store.tx(async (r) => {
      await r.tenants.insert({ id: tenantId, kind: 'workspace', name: 'x', email: null, website: null, status: 'active', verified: false, settlementWalletId: null, createdAt: 1, updatedAt: 1 });
      await place(r, ctx, { walletId: w, type: 'capture', amountMinor: -1n, holdMinor: -1n, currency: 'USD' });
    })).rejects.toThrow(/would be left with balance 10 and held -1/);
    expect(await store.read((r) => r.tenants.get(tenantId))).toBeUndefined();
    // typed, whichever backend refused it: the domain tells a short wallet apart by the class
    await expect(store.tx((r) => place(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 12n, currency: 'USD' }))).rejects.toBeInstanceOf(MovementRefused);
    const other = await b.open();
    try {
      await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).tx((r) => place(r, ctx, { walletId: w, type: 'fee', amountMinor: 1n, currency: 'USD' }))));
    } finally {
      await other.close();
    }
    const entries = await store.read((r) => r.ledger.list(w));
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 44 }, (_, i) => i + 1));
    expect(entries.slice(0, 4).map((e) => [e.type, e.amountMinor, e.holdMinor, e.balanceAfter, e.heldAfter])).toEqual([
      ['fund', 10n, 0n, 10n, 0n], ['hold', 0n, 4n, 10n, 4n], ['capture', -4n, -4n, 6n, 0n], ['sale', 5n, 0n, 11n, 0n],
    ]);
    expect(entries[2]).toMatchObject({ transactionId: 'txn_c', reference: 'cap', memo: 'm', currency: 'USD' });
    expect(typeof entries[2]!.createdAt).toBe('number');
    expect(await store.read((r) => balanceOf(r, w))).toEqual({ balanceMinor: 51n, heldMinor: 0n, availableMinor: 51n });
  });

  it('queues concurrent movements of one wallet in its process, and on its row lock once two instances write it, instead of rolling them back (PostgreSQL)', async () => {
    if (b.name === 'sqlite') return; // one writer at a time: nothing to collide
    const w = await newWallet();
    await fund(w, 1_600n);
    const other = await b.open();
    const pg = (await import('pg')).default;
    const original = pg.Client.prototype.query;
    let rollbacks = 0;
    pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
      if (args[0] === 'ROLLBACK') rollbacks++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    // a hold and its capture per purchase, placed together (a transaction that appended to a wallet
    // passes its turn on: one that appends to it again makes those built on its first append run
    // again, src/store/pg/ledger-heads.ts), 40 at once
    const purchases = (stores: Store[]) => Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % stores.length]!.tx(async (r) => {
      await placeAll(r, ctx, [
        { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 10n, currency: 'USD' },
        { walletId: w, type: 'capture', amountMinor: -10n, holdMinor: -10n, currency: 'USD' },
      ]);
    })));
    try {
      // one instance: its transactions take the wallet's turn one after another, none collides
      await purchases([store]);
      expect(rollbacks).toBe(0);
      // two instances: each collides once on a head the other made, with the heads it had in flight
      // (at most one transaction per connection of its pool, 10), then holds the wallet by its row
      // lock; the second instance may collide only in the second round, once the first one holds
      // the row and appends between its chained transactions
      await purchases([store, other]);
      await purchases([store, other]);
      expect(rollbacks).toBeLessThanOrEqual(20);
      rollbacks = 0;
      await purchases([store, other]);
      expect(rollbacks).toBe(0);
      expect(await store.read((r) => balanceOf(r, w))).toEqual({ balanceMinor: 0n, heldMinor: 0n, availableMinor: 0n });
    } finally {
      pg.Client.prototype.query = original;
      await other.close();
    }
  });

  it('passes a wallet on to the next transaction of its process once the entries are computed, and runs that one again when the one it built on rolls back (PostgreSQL)', async () => {
    if (b.name === 'sqlite') return; // one writer at a time
    const w = await newWallet();
    await fund(w, 100n);
    const credit = (r: Parameters<Parameters<Store['tx']>[0]>[0], amount: bigint) => placeAll(r, ctx, [{ walletId: w, type: 'fund', amountMinor: amount, currency: 'USD' }]);
    // a appends and stays open; b appends to the same wallet and reaches its end before a commits
    let finishA!: (fail: boolean) => void;
    const aMayEnd = new Promise<boolean>((r) => { finishA = r; });
    let aPlaced!: () => void;
    const aHasPlaced = new Promise<void>((r) => { aPlaced = r; });
    const a = store.tx(async (r) => {
      await credit(r, 1n);
      aPlaced();
      if (await aMayEnd) throw new Error('a fails after its entries');
    });
    await aHasPlaced;
    let bRuns = 0;
    let bReachedItsEnd!: () => void;
    const bAtEnd = new Promise<void>((r) => { bReachedItsEnd = r; });
    const bDone = store.tx(async (r) => {
      bRuns++;
      const [e] = await credit(r, 10n);
      bReachedItsEnd();
      return e!.seq;
    });
    await bAtEnd; // b built on a's head while a is still open
    expect(bRuns).toBe(1);
    finishA(true);
    await expect(a).rejects.toThrow('a fails after its entries');
    // b's expectation (a's entry) fails in the database: b runs again, on the head read afresh
    expect(await bDone).toBe(2);
    expect(bRuns).toBe(2);
    expect((await store.read((r) => r.ledger.list(w))).map((e) => [e.seq, e.amountMinor, e.balanceAfter])).toEqual([[1, 100n, 100n], [2, 10n, 110n]]);
    // and when the one built on commits, the next commits on it without running again
    let finishC!: () => void;
    const cMayEnd = new Promise<void>((r) => { finishC = r; });
    let cPlaced!: () => void;
    const cHasPlaced = new Promise<void>((r) => { cPlaced = r; });
    const c = store.tx(async (r) => {
      await credit(r, 1n);
      cPlaced();
      await cMayEnd;
    });
    await cHasPlaced;
    let dRuns = 0;
    const d = store.tx(async (r) => {
      dRuns++;
      await credit(r, 2n);
    });
    await new Promise((r) => setTimeout(r, 50));
    finishC();
    await Promise.all([c, d]);
    expect(dRuns).toBe(1);
    expect((await store.read((r) => r.ledger.list(w))).map((e) => [e.seq, e.amountMinor, e.balanceAfter])).toEqual([[1, 100n, 100n], [2, 10n, 110n], [3, 1n, 111n], [4, 2n, 113n]]);
  });

  it('places several movements at once in the order given, and refuses all of them with their transaction when one would leave a sum negative', async () => {
    const [a, c] = [await newWallet(), await newWallet()];
    await fund(a, 10n);
    await store.tx((r) => placeAll(r, ctx, [
      { walletId: a, type: 'capture', amountMinor: -4n, currency: 'USD', transactionId: 'txn_all', reference: 'cap', memo: 'it\'s "quoted", {braced}, back\\slash' },
      { walletId: c, type: 'sale', amountMinor: 3n, currency: 'USD', transactionId: 'txn_all' },
      { walletId: c, type: 'fee', amountMinor: 1n, currency: 'USD', transactionId: 'txn_all' },
    ]));
    expect((await store.read((r) => r.ledger.list(a))).map((e) => [e.seq, e.type, e.amountMinor, e.balanceAfter, e.memo])).toEqual([
      [1, 'fund', 10n, 10n, null], [2, 'capture', -4n, 6n, 'it\'s "quoted", {braced}, back\\slash'],
    ]);
    expect((await store.read((r) => r.ledger.list(c))).map((e) => [e.seq, e.type, e.amountMinor, e.balanceAfter, e.transactionId])).toEqual([[1, 'sale', 3n, 3n, 'txn_all'], [2, 'fee', 1n, 4n, 'txn_all']]);
    // the second would overdraw c: nothing of the three is kept
    await expect(store.tx((r) => placeAll(r, ctx, [
      { walletId: a, type: 'fee', amountMinor: 1n, currency: 'USD' },
      { walletId: c, type: 'capture', amountMinor: -5n, currency: 'USD' },
      { walletId: a, type: 'fee', amountMinor: 1n, currency: 'USD' },
    ]))).rejects.toBeInstanceOf(MovementRefused);
    expect(await store.read((r) => Promise.all([balanceOf(r, a), balanceOf(r, c)]))).toEqual([
      { balanceMinor: 6n, heldMinor: 0n, availableMinor: 6n }, { balanceMinor: 4n, heldMinor: 0n, availableMinor: 4n },
    ]);
  });

  it('resolves an authorized transaction once: a second resolution is refused as AlreadyResolved, with everything else of its transaction', async () => {
    const w = await newWallet();
    const txn: Transaction = {
      id: `txn_resolve_${b.name}`, nonce: `n_resolve_${b.name}`, capabilityId: 'cap', providerId: 'prv', walletId: w, workspaceId: 'ws', amountMinor: 5n, feeMinor: null,
      currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: 1, expiresAt: 2, resolvedAt: null,
    };
    await store.tx((r) => r.transactions.insert(txn));
    await store.tx((r) => r.transactions.resolve(txn.id, { status: 'succeeded', feeMinor: 1n, resolvedAt: 3 }));
    expect(await store.read((r) => r.transactions.get(txn.id))).toMatchObject({ status: 'succeeded', feeMinor: 1n, resolvedAt: 3, failureReason: null });
    // resolved already: refused, and the movement sent before it in the same transaction is not kept
    await fund(w, 9n);
    const again = store.tx(async (r) => {
      await place(r, ctx, { walletId: w, type: 'fee', amountMinor: 1n, currency: 'USD' });
      await r.transactions.resolve(txn.id, { status: 'failed', failureReason: 'late', resolvedAt: 4 });
    });
    await expect(again).rejects.toBeInstanceOf(AlreadyResolved);
    expect(await store.read((r) => r.transactions.get(txn.id))).toMatchObject({ status: 'succeeded', resolvedAt: 3 });
    expect((await store.read((r) => r.ledger.list(w))).map((e) => e.amountMinor)).toEqual([9n]);
    // two stores (two instances) resolving one transaction at once: exactly one wins
    const other = await b.open();
    try {
      await store.tx((r) => r.transactions.insert({ ...txn, id: `${txn.id}_2`, nonce: `${txn.nonce}_2` }));
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store).tx((r) => r.transactions.resolve(`${txn.id}_2`, { status: 'succeeded', resolvedAt: 10 + i }))));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(AlreadyResolved);
    } finally {
      await other.close();
    }
  });

  it('reads an authorization\'s checks at once, as the repositories read them one by one', async () => {
    const provider = await store.tx((r) => createTenant(r, ctx, { kind: 'provider', name: 'facts seller' }));
    const w = await newWallet();
    const capabilityId = `cap_facts_${b.name}`;
    await store.tx((r) => r.capabilities.insert({
      id: capabilityId, providerId: provider.id, name: 'Facts', description: 'd', protocol: 'rest', priceMinor: BIG, currency: 'USD', category: 'data',
      tags: ['t'], schema: null, latencyP50Ms: 7.5, toolName: null, metering: null, status: 'active', currentVersionId: `${capabilityId}_v1`, createdAt: 1, updatedAt: 1, deprecatedAt: null,
    }));
    const facts = (nonce: string, walletId: string, capId: string, providerId: string) =>
      store.read((r) => r.purchaseFacts.read({ nonce, walletId, capabilityId: capId, providerId }), { snapshot: false });
    const oneByOne = (nonce: string, walletId: string, capId: string, providerId: string) => store.read(async (r) => ({
      nonceUsed: (await r.transactions.byNonce(nonce)) !== undefined,
      wallet: await r.wallets.get(walletId),
      paused: (await r.breakers.get(walletId, providerId))?.paused ?? false,
      capability: await r.capabilities.get(capId),
      seller: await r.tenants.get(providerId),
    }));
    // nothing there: no wallet, capability, seller; no breaker, nonce unused
    expect(await facts('n_none', 'wal_none', 'cap_none', 'prv_none')).toEqual({ nonceUsed: false, wallet: undefined, paused: false, capability: undefined, seller: undefined });
    // all there, the breaker paused and the nonce used
    await store.tx(async (r) => {
      await r.breakers.put({ walletId: w, providerId: provider.id, consecutiveFailures: 3, paused: true, updatedAt: 5 });
      await r.transactions.insert({
        id: `txn_facts_${b.name}`, nonce: `n_facts_${b.name}`, capabilityId, providerId: provider.id, walletId: w, workspaceId: 'ws', amountMinor: 1n, feeMinor: null,
        currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: 1, expiresAt: 2, resolvedAt: null,
      });
    });
    const got = await facts(`n_facts_${b.name}`, w, capabilityId, provider.id);
    expect(got).toEqual(await oneByOne(`n_facts_${b.name}`, w, capabilityId, provider.id));
    expect([got.nonceUsed, got.paused, got.wallet?.id, got.seller?.id, got.capability?.priceMinor, got.capability?.tags]).toEqual([true, true, w, provider.id, BIG, ['t']]);
    expect(typeof got.wallet?.createdAt).toBe('number');
  });

  it('hands a busy pool\'s connection on once COMMIT is sent (PostgreSQL): the next transaction leaves in the same socket write, and both commit', async () => {
    const [w1, w2] = [await newWallet(), await newWallet()];
    await fund(w1, 8n);
    await fund(w2, 8n);
    if (b.name !== 'postgres') return;
    const one = await b.open({ poolSize: 1 });
    const net = await import('node:net');
    const proto = net.Socket.prototype as unknown as { _writev: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown };
    const original = { writev: proto._writev, write: proto._write };
    let writes = 0;
    const hold = (w: string) => one.tx((r) => place(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD' }));
    try {
      // the pool's one connection open, and both wallets' heads known to this process (each transaction then one write)
      await one.tx(async (r) => { await r.ledger.last(w1); await r.ledger.last(w2); });
      await hold(w1);
      await hold(w2);
      proto._writev = function (this: unknown, ...a: unknown[]) { writes++; return original.writev.apply(this, a); };
      proto._write = function (this: unknown, ...a: unknown[]) { writes++; return original.write.apply(this, a); };
      // the second waits for the connection: it gets it as the first's COMMIT is sent, and its
      // BEGIN, entries and COMMIT leave with that COMMIT
      await Promise.all([hold(w1), hold(w2)]);
      expect(writes).toBe(1);
      // a lone transaction keeps its connection until the answer: nothing waits
      writes = 0;
      await hold(w1);
      expect(writes).toBe(1);
      // a transaction that fails behind one handed on: the first commits, the failure rolls back only its own
      writes = 0;
      const results = await Promise.allSettled([hold(w1), one.tx(async (r) => {
        await place(r, ctx, { walletId: w2, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD' });
        throw new Error('the caller gives up');
      })]);
      expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected']);
    } finally {
      proto._writev = original.writev;
      proto._write = original.write;
      await one.close();
    }
    const held = await store.read(async (r) => [(await r.ledger.last(w1))!.heldAfter, (await r.ledger.last(w2))!.heldAfter]);
    expect(held).toEqual([4n, 2n]);
    // the connection still serves after all this
    await store.read((r) => r.ledger.list(w1));
  });

  it('places movements on PostgreSQL in one socket write once the process knows the wallet\'s head: BEGIN, the entries and COMMIT', async () => {
    const w = await newWallet();
    await fund(w, 8n);
    if (b.name !== 'postgres') return;
    const net = await import('node:net');
    const proto = net.Socket.prototype as unknown as { _writev: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown };
    const original = { writev: proto._writev, write: proto._write };
    let writes = 0;
    proto._writev = function (this: unknown, ...a: unknown[]) { writes++; return original.writev.apply(this, a); };
    proto._write = function (this: unknown, ...a: unknown[]) { writes++; return original.write.apply(this, a); };
    const twoHolds = () => store.tx(async (r) => {
      await place(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD' });
      // the wallet's head is kept by the transaction: not read again
      await place(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 1n, currency: 'USD' });
    });
    try {
      // a connection of the pool, ready (the first transaction may open one); the head this process committed last is known
      await store.tx((r) => r.ledger.last(w));
      writes = 0;
      await twoHolds();
      expect(writes).toBe(1);
      // another instance appends: the kept head is stale, the unique index refuses the next transaction's
      // entries, it is run again on the head read afresh, and the wallet is then held by its row lock
      // (two writes: BEGIN with the lock and the head, then the entries and COMMIT)
      const other = await b.open();
      try {
        await other.tx((r) => place(r, ctx, { walletId: w, type: 'release', amountMinor: 0n, holdMinor: -1n, currency: 'USD' }));
      } finally {
        await other.close();
      }
      await twoHolds();
      writes = 0;
      await twoHolds();
      expect(writes).toBe(2);
    } finally {
      proto._writev = original.writev;
      proto._write = original.write;
    }
    expect(await store.read((r) => balanceOf(r, w))).toEqual({ balanceMinor: 8n, heldMinor: 5n, availableMinor: 3n });
    expect((await store.read((r) => r.ledger.list(w))).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('decides a refusal on the wallet\'s head read afresh, not on the one its process kept (PostgreSQL: another instance moved the wallet)', async () => {
    const w = await newWallet();
    await fund(w, 10n);
    if (b.name !== 'postgres') return;
    await store.tx((r) => r.ledger.last(w)); // this process keeps the wallet's head: balance 10, nothing held
    const other = await b.open();
    try {
      await other.tx((r) => place(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 6n, currency: 'USD' }));
    } finally {
      await other.close();
    }
    // on the kept head this capture would leave held -6: it is placed on the head the other instance made
    await store.tx((r) => place(r, ctx, { walletId: w, type: 'capture', amountMinor: -6n, holdMinor: -6n, currency: 'USD' }));
    expect(await store.read((r) => balanceOf(r, w))).toEqual({ balanceMinor: 4n, heldMinor: 0n, availableMinor: 4n });
    // and what the domain reads in a transaction is read, not kept: the balance it decides on is the database's
    const again = await b.open();
    try {
      await again.tx((r) => place(r, ctx, { walletId: w, type: 'fund', amountMinor: 5n, currency: 'USD' }));
    } finally {
      await again.close();
    }
    expect(await store.tx((r) => balanceOf(r, w))).toEqual({ balanceMinor: 9n, heldMinor: 0n, availableMinor: 9n });
  });

  it('shares one connection among autocommit reads on PostgreSQL, and replaces it when the server ended it', async () => {
    const w = await newWallet();
    await fund(w, 6n);
    const reads = () => Promise.all(Array.from({ length: 8 }, () => store.read((r) => Promise.all([r.wallets.get(w), r.ledger.last(w)]), { snapshot: false })));
    for (const [wallet, head] of await reads()) expect([wallet?.id, head?.balanceAfter]).toEqual([w, 6n]);
    if (b.name !== 'postgres') return;
    // every connection of this database ended by the server (an administrator, a restart), the shared one included
    const pool = (store as unknown as { pool: { query(sql: string): Promise<{ rows: unknown[] }> } }).pool;
    const ended = await pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    expect(ended.rows.length).toBeGreaterThan(0);
    // the reads right after may fail with their connection; then the next ones open another
    await until(async () => {
      try {
        const again = await reads();
        return again.every(([wallet, head]) => wallet?.id === w && head?.balanceAfter === 6n);
      } catch {
        return false;
      }
    }, 'autocommit reads on a new connection after the server ended the old one');
  });

  it('answers a ping while the database answers (the readiness check); on PostgreSQL fails while the database refuses connections, and answers again after', async () => {
    await store.ping();
    if (b.name !== 'postgres') return;
    const pool = (store as unknown as { pool: { query(sql: string): Promise<{ rows: { db: string }[] }> } }).pool;
    const name = (await pool.query('SELECT current_database() AS db')).rows[0]!.db;
    await onAdmin(async (c) => {
      await c.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    });
    try {
      await until(async () => store.ping().then(() => false, () => true), 'a ping to fail while the database refuses connections');
      await expect(store.ping()).rejects.toThrow();
    } finally {
      await onAdmin((c) => c.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`));
    }
    await until(async () => store.ping().then(() => true, () => false), 'a ping to answer once the database takes connections again');
  });

  it('reads without a common snapshot when asked (snapshot: false): the same answers, and on PostgreSQL no BEGIN or COMMIT', async () => {
    const w = await newWallet();
    await fund(w, 3n);
    const pg = (await import('pg')).default;
    const original = pg.Client.prototype.query;
    const sent: string[] = [];
    pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      sent.push(typeof q === 'string' ? q : q.text ?? '');
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    let got: unknown;
    try {
      got = await store.read((r) => Promise.all([r.wallets.get(w), r.ledger.last(w), r.wallets.get('wal_none')]), { snapshot: false });
    } finally {
      pg.Client.prototype.query = original;
    }
    const [wallet, head, none] = got as [{ id: string } | undefined, { balanceAfter: bigint } | undefined, unknown];
    expect([wallet?.id, head?.balanceAfter, none]).toEqual([w, 3n, undefined]);
    if (b.name === 'postgres') {
      expect(sent).toHaveLength(3);
      expect(sent.filter((t) => /^(BEGIN|COMMIT)/.test(t))).toEqual([]);
    }
  });

  it('lists rail events newest first and pages by id', async () => {
    const tenantId = `ten_${b.name}`;
    await store.tx(async (r) => {
      for (let i = 0; i < 5; i++) await r.railEvents.insert({ id: `ev_${i}`, tenantId, type: i % 2 ? 'odd' : 'even', data: { i }, createdAt: 100 });
    });
    const all = await store.read((r) => r.railEvents.list(tenantId, { limit: 10 }));
    expect(all.map((e) => e.id)).toEqual(['ev_4', 'ev_3', 'ev_2', 'ev_1', 'ev_0']);
    expect(all[0]!.data).toEqual({ i: 4 });
    const page = await store.read((r) => r.railEvents.list(tenantId, { limit: 2, before: 'ev_3', type: 'even' }));
    expect(page.map((e) => e.id)).toEqual(['ev_2', 'ev_0']);
  });

  it('applies policies in apply order: time, then insertion order within one time', async () => {
    const workspaceId = `ws_${b.name}`;
    await store.tx(async (r) => {
      for (const [id, createdAt] of [['pol_z', 10], ['pol_a', 10], ['pol_m', 5]] as const) {
        await r.policies.insert({ id, workspaceId, policyType: 'deny', name: null, enabled: true, source: 's', rules: ['r'], ordinal: 0, createdAt, updatedAt: createdAt });
      }
    });
    await store.tx((r) => r.policies.update('pol_a', { enabled: false, updatedAt: 11 }));
    expect((await store.read((r) => r.policies.listByWorkspace(workspaceId))).map((p) => p.id)).toEqual(['pol_m', 'pol_z', 'pol_a']);
    expect((await store.read((r) => r.policies.listEnabled(workspaceId))).map((p) => [p.id, p.enabled])).toEqual([['pol_m', true], ['pol_z', true]]);
    // the same through a wallet of the workspace; none for a wallet that does not exist
    const walletId = `wal_pol_${b.name}`;
    await store.tx(async (r) => {
      await r.tenants.insert({ id: workspaceId, kind: 'workspace', name: 'w', email: null, website: null, status: 'active', verified: false, settlementWalletId: null, createdAt: 1, updatedAt: 1 });
      await r.wallets.insert(newWalletRow({ id: walletId, tenantId: workspaceId, ownerType: 'agent', ownerId: 'agent_1', publicKeyPem: null }, 1));
    });
    expect((await store.read((r) => r.policies.listEnabledOfWallet(walletId))).map((p) => p.id)).toEqual(['pol_m', 'pol_z']);
    expect(await store.read((r) => r.policies.listEnabledOfWallet('wal_none'))).toEqual([]);
  });

  it('finds listings by words of their name, description and tags, best first', async () => {
    await store.tx(async (r) => {
      const seller = await createTenant(r, ctx, { kind: 'provider', name: 'search seller' });
      await r.tenants.update(seller.id, { status: 'active', verified: true, updatedAt: 1 });
      const docs = [
        { id: 'cap_weather', name: 'Weather forecast', description: 'hourly forecasts for a city', tags: ['weather'], category: 'data' },
        { id: 'cap_translate', name: 'Translate', description: 'translates text; mentions weather once', tags: ['language'], category: 'text' },
      ];
      for (const d of docs) {
        await r.capabilities.insert({
          id: d.id, providerId: seller.id, name: d.name, description: d.description, protocol: 'rest', priceMinor: 5n, currency: 'USD', category: d.category,
          tags: d.tags, schema: null, latencyP50Ms: 12.5, toolName: null, metering: null, status: 'active', currentVersionId: `${d.id}_v1`, createdAt: 1, updatedAt: 1, deprecatedAt: null,
        });
        await r.capabilitySearch.upsert({ capabilityId: d.id, name: d.name, description: d.description, tags: d.tags, category: d.category });
      }
    });
    const hits = await store.read((r) => r.capabilitySearch.match('weather forecasts', 10));
    expect(hits.map((h) => h.capabilityId)).toEqual(['cap_weather', 'cap_translate']);
    expect(hits[0]!.rank).toBeLessThan(hits[1]!.rank);
    expect(await store.read((r) => r.capabilitySearch.match('forec', 10))).toHaveLength(1);
    const stats = await store.read((r) => r.discovery.stats({ maxLatencyMs: 20 }));
    expect(stats).toMatchObject({ count: 2, cheapestMinor: 5n, fastestMs: 12.5 });
    await store.tx((r) => r.capabilitySearch.remove('cap_translate'));
    expect((await store.read((r) => r.capabilitySearch.match('weather', 10))).map((h) => h.capabilityId)).toEqual(['cap_weather']);
  });

  it('sums a day of holds as spend, less what was given back', async () => {
    const w = await newWallet();
    await fund(w, 100n);
    await store.tx(async (r) => {
      await post(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 30n, currency: 'USD', transactionId: 'txn_s1' });
      await post(r, ctx, { walletId: w, type: 'hold', amountMinor: 0n, holdMinor: 20n, currency: 'USD', transactionId: 'txn_s2' });
      await post(r, ctx, { walletId: w, type: 'release', amountMinor: 0n, holdMinor: -20n, currency: 'USD', transactionId: 'txn_s2' });
    });
    const now = clock.now();
    expect(await store.read((r) => r.spend.byWallet(w, now - 1000, now + 1000, now))).toBe(30n);
    expect(await store.read((r) => r.spend.byWallet(w, now + 1, now + 1000, now))).toBe(0n);
  });

  it('numbers sandbox objects per kind and replaces in place', async () => {
    const a = await store.tx((r) => r.sandboxObjects.put('k', 'a', { v: 1 }, 1));
    const b2 = await store.tx((r) => r.sandboxObjects.put('k', 'b', { v: 2 }, 2));
    await store.tx((r) => r.sandboxObjects.put('k', 'a', { v: 3 }, 3));
    expect([a.seq, b2.seq]).toEqual([1, 2]);
    expect((await store.read((r) => r.sandboxObjects.list('k'))).map((o) => [o.id, o.seq, o.data])).toEqual([['a', 1, { v: 3 }], ['b', 2, { v: 2 }]]);
  });

  it('loses no read-modify-write of a sandbox object when two stores (two instances) update it at once', async () => {
    await store.tx((r) => r.sandboxObjects.put('counter', 'c', { n: 0 }, 1));
    const other = await b.open();
    try {
      // the USDC sender keeps its lease and next nonce this way: a lost update would reuse a nonce
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? other : store).tx(async (r) => {
        const n = ((await r.sandboxObjects.get('counter', 'c'))!.data as { n: number }).n;
        await r.sandboxObjects.put('counter', 'c', { n: n + 1 }, 2);
      })));
      expect((await store.read((r) => r.sandboxObjects.get('counter', 'c')))!.data).toEqual({ n: 30 });
    } finally {
      await other.close();
    }
  });

  it('records a payout\'s rail reference once: a second submission racing on another store changes nothing', async () => {
    const w = await newWallet();
    const tenantId = (await store.read((r) => r.wallets.get(w)))!.ownerId;
    const id = randomIds.next('payout');
    await store.tx((r) => r.railTransactions.insert({
      id, kind: 'payout', tenantId, walletId: w, treasuryProviderId: 'sandbox-bank', rail: 'ach', state: 'submitted', railAmountMinor: 100n, railCurrency: 'USD',
      usdAmountMinor: 100n, externalRef: null, counterparty: 'acct', priceMicros: null, reason: null, idempotencyKey: null, requestHash: null,
      hostedUrl: null, expectedBy: null, resubmittedAt: null, createdAt: 1, updatedAt: 1, settledAt: null,
    }));
    const other = await b.open();
    try {
      const applied = await Promise.all([1, 2].map((n) => (n === 1 ? store : other).tx((r) => r.railTransactions.recordReference(id, { externalRef: 'ref_1', expectedBy: 10, updatedAt: 100 + n }))));
      expect(applied.filter(Boolean)).toHaveLength(1);
      const row = (await store.read((r) => r.railTransactions.get(id)))!;
      expect(row.externalRef).toBe('ref_1');
      expect(row.updatedAt).toBe(100 + applied.indexOf(true) + 1);
      // a failed payout never gets one
      await store.tx((r) => r.railTransactions.update(id, { state: 'failed', externalRef: null }));
      expect(await store.tx((r) => r.railTransactions.recordReference(id, { externalRef: 'ref_2', updatedAt: 200 }))).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('uses a password reset token once when two stores (two instances) use it at once', async () => {
    const tenant = await store.tx((r) => createTenant(r, ctx, { kind: 'workspace', name: 'w' }));
    const accountId = randomIds.next('account');
    const tokenHash = `h_${accountId}`;
    await store.tx(async (r) => {
      await r.accounts.insert({ id: accountId, tenantId: tenant.id, email: `${accountId}@example.com`, passwordHash: 'x', createdAt: 1, updatedAt: 1 });
      await r.passwordResets.insert({ id: `pr_${accountId}`, accountId, tokenHash, expiresAt: Date.UTC(2030, 0, 1), usedAt: null, createdAt: 1 });
    });
    const other = await b.open();
    try {
      // what resetPassword does inside its transaction: read the token, refuse a used one, mark it used
      const use = (s: Store) => s.tx(async (r) => {
        const reset = await r.passwordResets.byTokenHash(tokenHash);
        if (!reset || reset.usedAt !== null) return false;
        await r.passwordResets.markUsed(reset.id, 2);
        return true;
      });
      const used = await Promise.all(Array.from({ length: 6 }, (_, i) => use(i % 2 ? other : store)));
      expect(used.filter(Boolean)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('counts every login attempt of an address when two stores (two instances) count it at once', async () => {
    const throttles = new AuthThrottles({ ...DEFAULT_ACCOUNT_LIMITS, loginFailuresBeforeBackoff: 1000 });
    const email = `${randomIds.next('account')}@example.com`;
    const other = await b.open();
    try {
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? other : store).tx((r) => throttles.beginLogin(r, email, clock.now()))));
      const key = throttleKey('login', email);
      const row = await store.tx((r) => r.authThrottles.take(key, { key, count: 0, windowStartedAt: 0, lastAt: 0, blockedUntil: null, expiresAt: 0 }));
      expect(row.count).toBe(30);
    } finally {
      await other.close();
    }
  });

  it('leaves no key below a revoked one active while another store (instance) mints keys from it', async () => {
    const other = await b.open();
    try {
      const tenant = await store.tx((r) => createTenant(r, ctx, { kind: 'workspace', name: 'w' }));
      const principal = (k: { id: string; scopes: string[] }): Principal => ({ keyId: k.id, tenantId: tenant.id, tenantKind: 'workspace', scopes: new Set(k.scopes) });
      const here = new KeyService({ store, ...ctx });
      const there = new KeyService({ store: other, ...ctx });
      for (let round = 0; round < 5; round++) {
        const root = (await store.tx((r) => issueKey(r, ctx, tenant, { name: 'root' }))).record;
        const child = await here.create(principal(root), { name: 'child' });
        const minted = await Promise.all([
          here.revoke(principal(root), root.id).then(() => undefined),
          ...Array.from({ length: 6 }, () => there.create(principal(child), { name: 'racer' }).then((k) => k.id, (e: { code?: string }) => {
            expect(e.code).toBe('UNAUTHORIZED'); // refused: its parent was revoked first
            return undefined;
          })),
        ]);
        const keys = await store.read((r) => r.apiKeys.listByTenant(tenant.id));
        const below = new Set([root.id]);
        for (let grew = true; grew; ) {
          grew = false;
          for (const k of keys) if (k.parentKeyId && below.has(k.parentKeyId) && !below.has(k.id)) (below.add(k.id), (grew = true));
        }
        expect(minted.filter(Boolean).every((id) => below.has(id!))).toBe(true);
        expect(keys.filter((k) => below.has(k.id) && k.revokedAt === null).map((k) => k.id)).toEqual([]);
      }
    } finally {
      await other.close();
    }
  });

  it('keeps a tenant at its cap of active keys when two stores (two instances) make keys at once', async () => {
    const other = await b.open();
    try {
      const tenant = await store.tx((r) => createTenant(r, ctx, { kind: 'workspace', name: 'w' }));
      const root = (await store.tx((r) => issueKey(r, ctx, tenant, { name: 'root' }))).record;
      const p: Principal = { keyId: root.id, tenantId: tenant.id, tenantKind: 'workspace', scopes: new Set(root.scopes) };
      const services = [new KeyService({ store, ...ctx }, { keysPerTenant: 4 }), new KeyService({ store: other, ...ctx }, { keysPerTenant: 4 })];
      const made = await Promise.all(Array.from({ length: 10 }, (_, i) => services[i % 2]!.create(p, {}).then(() => 'made', (e: { code?: string }) => e.code)));
      expect(made.filter((m) => m === 'made')).toHaveLength(3);
      expect(made.filter((m) => m === 'CONFLICT')).toHaveLength(7);
      expect(await store.read((r) => r.apiKeys.countActive(tenant.id, clock.now()))).toBe(4);
    } finally {
      await other.close();
    }
  });

  it('leaves no login key of an account active after a password reset, while another store (instance) logs it in', async () => {
    const other = await b.open();
    try {
      const opts = { tokenTtlMs: 3_600_000, devEchoTokens: true };
      const here = new AccountService({ store, ...ctx }, new MemoryMailer(), opts);
      const there = new AccountService({ store: other, ...ctx }, new MemoryMailer(), opts);
      const tenant = await store.tx((r) => createTenant(r, ctx, { kind: 'workspace', name: 'w' }));
      const accountId = randomIds.next('account');
      const email = `${accountId}@example.com`;
      const passwordHash = await hashPassword('the old password');
      await store.tx((r) => r.accounts.insert({ id: accountId, tenantId: tenant.id, email, passwordHash, createdAt: 1, updatedAt: 1 }));
      const { token } = await here.forgotPassword({ email });
      const logins = await Promise.all([
        here.resetPassword({ token: token!, password: 'the new password' }).then(() => undefined),
        ...Array.from({ length: 4 }, () => there.login({ email, password: 'the old password' }).then((l) => l.apiKey.id, () => undefined)),
      ]);
      const keys = await store.read((r) => r.apiKeys.listByTenant(tenant.id));
      expect(keys.filter((k) => k.loginAccountId === accountId).map((k) => k.id).sort()).toEqual(logins.filter(Boolean).sort());
      expect(keys.filter((k) => k.revokedAt === null)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('gives each fleet duty to one store at a time, and to another when the holder closes', async () => {
    const second = await b.open();
    try {
      const first = await store.claimDuty('contract-duty');
      const other = await second.claimDuty('contract-duty');
      if (b.name === 'sqlite') {
        expect([first, other]).toEqual([true, true]); // one process per file: every duty is its own
        return;
      }
      expect([first, other]).toEqual([true, false]);
      expect(await store.claimDuty('contract-duty')).toBe(true); // still held: no flapping
      expect(await second.claimDuty('another-duty')).toBe(true); // duties are independent
      const third = await b.open();
      expect(await third.claimDuty('contract-duty')).toBe(false);
      await third.close();
    } finally {
      await second.close();
    }
  });

  it('claims duties that tick together one query at a time on the duty connection', async () => {
    if (b.name === 'sqlite') return;
    // node-postgres runs one query at a time per connection; a second one sent before the first
    // answered is deprecated (an error in pg 9): count the queries each connection has in flight.
    // Opened first: what the store does at open (a read that pipelines its BEGIN) is not the duties'
    const fleet = await b.open();
    const pg = (await import('pg')).default;
    const original = pg.Client.prototype.query;
    const inFlight = new WeakMap<object, number>();
    let overlapped = 0;
    pg.Client.prototype.query = function (this: object, ...args: unknown[]) {
      const n = inFlight.get(this) ?? 0;
      if (n > 0) overlapped++;
      inFlight.set(this, n + 1);
      const done = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
      const out = (original as (...a: unknown[]) => unknown).apply(this, args);
      if (out instanceof Promise) out.then(done, done);
      else done();
      return out;
    } as typeof original;
    try {
      const names = ['tick-a', 'tick-b', 'tick-c', 'tick-d'];
      expect(await Promise.all(names.map((n) => fleet.claimDuty(n)))).toEqual([true, true, true, true]);
      expect(await Promise.all(names.map((n) => fleet.claimDuty(n)))).toEqual([true, true, true, true]);
      expect(overlapped).toBe(0);
    } finally {
      pg.Client.prototype.query = original;
      await fleet.close();
    }
  });
});
