/**
 * `agentpay ledger verify`: the ledger's verification (src/domain/wallets/verify.ts, docs/ledger.md)
 * on the database of a data directory (SQLite) or a fleet's PostgreSQL database.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { verifyLedger, type LedgerProblem, type LedgerReport } from '../domain/wallets/verify.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { PgStore } from '../store/pg/pg-store.js';
import { DatabaseUnavailable } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { CliError } from './errors/index.js';
import { databaseUnavailable } from './gateway-runner.js';
import type { SettingSource } from './setting-source.js';
import { databasePath } from '../gateway/lost-database.js';

export async function verifyLedgerAt(dataDir: string, database?: string, databaseSource?: SettingSource): Promise<LedgerReport> {
  let store: Store;
  if (database) {
    try {
      // not migrated here: a database this agentpay does not know the schema of is refused
      store = await PgStore.open({ url: database, migrate: false });
    } catch (e) {
      if (e instanceof DatabaseUnavailable) throw databaseUnavailable(e, databaseSource);
      throw e;
    }
  } else {
    const dir = resolve(dataDir);
    const db = databasePath(dir);
    if (!existsSync(db)) {
      throw new CliError('DATA_DIR_NOT_FOUND', `${dir} holds no gateway database (agentpay.db)`, {
        tryNext: 'pass the data directory of the gateway whose ledger to verify: --data-dir DIR, or --database URL for PostgreSQL',
        details: { dataDir: dir },
      });
    }
    store = new SqliteStore({ path: db });
  }
  try {
    return await verifyLedger(store);
  } finally {
    await store.close();
  }
}

function where(p: LedgerProblem): string {
  const parts: string[] = [];
  if (p.walletId) parts.push(`wallet ${p.walletId}`);
  if (p.seq !== undefined) parts.push(`entry ${p.seq}${p.entryId ? ` (${p.entryId})` : ''}`);
  else if (p.entryId) parts.push(`entry ${p.entryId}`);
  if (p.transactionId) parts.push(`transaction ${p.transactionId}`);
  if (p.receiptId) parts.push(`receipt ${p.receiptId}`);
  if (p.checkpointId) parts.push(`checkpoint ${p.checkpointId}`);
  return parts.join(', ');
}

export function ledgerReportText(r: LedgerReport): string {
  const counted = `${r.wallets} wallets, ${r.entries} entries, ${r.transactions} transactions, ${r.receipts} receipts, ${r.checkpoints} checkpoints`;
  if (r.ok) return `ledger verified: ${counted}; every chain, running sum, hold, receipt and checkpoint agrees`;
  return [`ledger verification FAILED (${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}; ${counted}):`, ...r.problems.map((p) => `  ${where(p)}: ${p.problem}`)].join('\n');
}
