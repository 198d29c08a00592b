/**
 * What one insert of the paid-call tables costs, and what each index or trigger adds:
 * the production schema (all migrations) on a real file, rows inserted through the
 * gateway's own cached statements, 32 per commit as under group commit, with the log
 * written but not synced (the sync is measured by bench/commits.ts). Variants drop one
 * guard at a time from a fresh database, interleaved over `--rounds` rounds so that a
 * machine whose speed drifts affects them alike. Prints CPU microseconds per insert. Every
 * ledger row is a hold: the worst case for the partial index `ledger_holds`, which takes
 * only holds (one of a paid call's four entries).
 *
 *   npx tsx bench/inserts.ts [--rows 40000] [--rounds 2]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { SqliteSql } from '../src/store/sql/sql.js';
import { challengeNonce, randomIds } from '../src/core/ids.js';
import { DEFAULT_PAYMENTS } from '../src/domain/payments/config.js';
import { parseArgs } from 'node:util';
import { flagReader } from './lib/flags.js';

const { values } = parseArgs({ options: { rows: { type: 'string' }, rounds: { type: 'string' } } });
const { num } = flagReader(values);
const ROWS = num('rows', 40_000);
const ROUNDS = num('rounds', 2);
const PER_COMMIT = 32;
const WALLETS = 50;

interface Variant {
  name: string;
  table: 'ledger' | 'transactions';
  /** run on the migrated database before measuring */
  sql: string;
}

const variants: Variant[] = [
  { name: 'ledger entry, as shipped', table: 'ledger', sql: '' },
  { name: 'ledger entry, no append-only insert trigger', table: 'ledger', sql: 'DROP TRIGGER ledger_entries_no_replace' },
  { name: 'ledger entry, no trigger, no ledger_holds', table: 'ledger', sql: 'DROP TRIGGER ledger_entries_no_replace; DROP INDEX ledger_holds' },
  { name: 'transaction, as shipped', table: 'transactions', sql: '' },
  { name: 'transaction, with a wallet_id index', table: 'transactions', sql: 'CREATE INDEX transactions_wallet ON transactions (wallet_id)' },
];

function ledgerRows(n: number) {
  const seq = new Map<string, number>();
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => {
    const walletId = `wal_${i % WALLETS}`;
    const s = (seq.get(walletId) ?? 0) + 1;
    seq.set(walletId, s);
    return {
      id: randomIds.next('ledgerEntry'), walletId, seq: s, type: 'hold', amountMinor: 0n, holdMinor: 100n,
      balanceAfter: 1000n, heldAfter: 100n, currency: 'USD', transactionId: randomIds.next('transaction'),
      reference: 'cap_bench', memo: 'hold for a call of cap_bench', createdAt: now,
    };
  });
}

function transactionRows(n: number) {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    id: randomIds.next('transaction'), nonce: challengeNonce(), capabilityId: 'cap_bench', providerId: 'prv_bench',
    walletId: `wal_${i % 1000}`, workspaceId: 'wsp_bench', amountMinor: 100n, feeMinor: null, currency: 'USD',
    status: 'authorized', failureReason: null, authorizedAt: now, expiresAt: now + DEFAULT_PAYMENTS.releaseUnsettledAfterMs, resolvedAt: null,
  }));
}

/** CPU microseconds per insert of `rows` into a fresh database with `v` applied. */
function measure(v: Variant): number {
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-inserts-'));
  const store = new SqliteStore({ path: join(dir, 'bench.db'), durability: 'in-commit' });
  try {
    const raw = store.raw;
    raw.pragma('foreign_keys = OFF'); // rows without their wallets and capabilities
    if (v.sql) raw.exec(v.sql);
    raw.pragma('synchronous = NORMAL'); // the log is written at COMMIT, not synced: inserts only
    // SqliteSql runs a statement before its promise returns: each insert is done when the call is
    const table = new SqliteSql(raw).table(v.table === 'ledger' ? 'ledgerEntries' : 'transactions');
    const insert = (row: unknown) => void table.insert(row as never);
    const rows: unknown[] = v.table === 'ledger' ? ledgerRows(ROWS) : transactionRows(ROWS);
    raw.exec('BEGIN');
    const before = process.cpuUsage();
    for (let i = 0; i < rows.length; i++) {
      insert(rows[i]);
      if (i % PER_COMMIT === PER_COMMIT - 1) {
        raw.exec('COMMIT');
        raw.exec('BEGIN');
      }
    }
    raw.exec('COMMIT');
    const used = process.cpuUsage(before);
    return (used.user + used.system) / rows.length;
  } finally {
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const v of variants) results.get(v.name)!.push(measure(v));
  console.error(`round ${round} of ${ROUNDS} done`);
}
console.log(`CPU per insert, ${ROWS} rows, ${PER_COMMIT} per commit (each round's value):`);
for (const [name, us] of results) console.log(`  ${name.padEnd(46)} ${us.map((u) => `${u.toFixed(1)} µs`).join('  ')}`);
