/**
 * The ledger table itself: the database refuses to edit or remove an entry, and a
 * balance read is one indexed lookup of the wallet's newest entry however long the
 * ledger grows.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/store/sql/wallets.js';
import { SqliteSql } from '../../src/store/sql/sql.js';
import { startTestGateway, sqliteOf, testBackend } from '../helpers/gateway.js';
import { expectLedger } from './ledger-checks.js';

const t = await startTestGateway();
afterAll(() => t.close());

const dbPath = join(t.dataDir, 'agentpay.db');

// these read the SQLite file and its query plans; on PostgreSQL, test/store/store-contract.test.ts covers the same rules
describe.skipIf(testBackend() === 'postgres')('ledger_entries', () => {
  it('refuses UPDATE and DELETE in the database itself, whoever connects', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace);
    await t.workspace.wallets.fund(walletId, '100');
    const db = new Database(dbPath);
    try {
      db.pragma('busy_timeout = 5000');
      expect(() => db.prepare('UPDATE ledger_entries SET amount_minor = 1000000 WHERE wallet_id = ?').run(walletId)).toThrow(/append-only: UPDATE refused/);
      expect(() => db.prepare('UPDATE ledger_entries SET memo = NULL').run()).toThrow(/append-only: UPDATE refused/);
      expect(() => db.prepare('DELETE FROM ledger_entries WHERE wallet_id = ?').run(walletId)).toThrow(/append-only: DELETE refused/);
      expect(() => db.prepare('DELETE FROM ledger_entries').run()).toThrow(/append-only: DELETE refused/);
      // REPLACE deletes the old row without firing DELETE triggers; it is refused all the same
      const rewrite = (conflict: string) =>
        db.prepare(`INSERT ${conflict} INTO ledger_entries (id, wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after, currency, created_at)
                    SELECT id, wallet_id, seq, type, 1000000, hold_minor, 1000000, held_after, currency, created_at FROM ledger_entries WHERE wallet_id = ?`).run(walletId);
      expect(() => rewrite('OR REPLACE')).toThrow(/append-only/);
      expect(() => rewrite('OR IGNORE')).toThrow(/append-only/);
      expect(() => db.prepare(`REPLACE INTO ledger_entries SELECT * FROM ledger_entries WHERE wallet_id = ?`).run(walletId)).toThrow(/append-only/);
    } finally {
      db.close();
    }
    await expectLedger(t.workspace, walletId, ['100']);
  });
});

describe.skipIf(testBackend() === 'postgres')('a balance read (Ledger.last on SQLite)', () => {
  it('is one search of the index ledger_wallet_seq: no scan, no sort', async () => {
    // run the repository's own query and catch its SQL on the way to the database
    const ro = new Database(dbPath, { readonly: true });
    try {
      ro.defaultSafeIntegers(true);
      const queries: string[] = [];
      const prepare = ro.prepare.bind(ro);
      (ro as unknown as { prepare: (sql: string) => unknown }).prepare = (sql: string) => (queries.push(sql), prepare(sql));
      await new Ledger(new SqliteSql(ro)).last('wal_any');
      expect(queries).toHaveLength(1);
      const plan = (prepare(`EXPLAIN QUERY PLAN ${queries[0]!}`).all('wal_any') as { detail: string }[]).map((p) => p.detail);
      expect(plan.join('\n')).toMatch(/^SEARCH ledger_entries USING INDEX ledger_wallet_seq \(wallet_id=\?\)$/m);
      expect(plan.filter((d) => /\bSCAN\b|TEMP B-TREE/.test(d)), plan.join('\n')).toEqual([]);
    } finally {
      ro.close();
    }
  });

  it('returns the exact sum after 100,000 entries, and the next posting extends it', async () => {
    const { walletId } = await t.newAgentWallet(t.workspace, 'long-ledger');
    const N = 100_000;
    // deterministic credits and debits that never overdraw, appended with their running sums
    let balance = 0n;
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const ctx = t.gw.services.ctx;
    await t.gw.store.tx(async () => {
      const insert = sqliteOf(t.gw).prepare(
        `INSERT INTO ledger_entries (id, wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after, currency, created_at)
         VALUES (?, ?, ?, ?, ?, 0, ?, 0, 'USD', ?)`,
      );
      for (let seq = 1; seq <= N; seq++) {
        const r = BigInt(next());
        const amount = seq % 3 === 0 && balance > 0n ? -(r % balance) - 1n : (r % 1_000_000n) + 1n;
        balance += amount;
        insert.run(`led_bulk_${seq}`, walletId, BigInt(seq), amount < 0n ? 'correction' : 'fund', amount, balance, BigInt(ctx.clock.now()));
      }
    });
    const sum = sqliteOf(t.gw).prepare('SELECT SUM(amount_minor) AS s, COUNT(*) AS n FROM ledger_entries WHERE wallet_id = ?').get(walletId) as { s: bigint; n: bigint };
    expect(sum.n).toBe(BigInt(N));
    expect(sum.s).toBe(balance);

    expect(await t.workspace.wallets.balance(walletId)).toEqual({ balanceMinor: balance.toString(), availableMinor: balance.toString(), currency: 'USD' });

    const funded = await t.workspace.wallets.fund(walletId, '7');
    expect(funded.entry).toMatchObject({ seq: N + 1, amountMinor: '7', balanceAfterMinor: (balance + 7n).toString() });
    expect((await t.workspace.wallets.balance(walletId)).balanceMinor).toBe((balance + 7n).toString());
  });
});
