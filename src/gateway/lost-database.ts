/**
 * A data directory whose database is gone or empty, though the directory was used before,
 * has lost its ledger: opening it would silently start a new one (new tenants, new dev keys
 * written over the old credentials file, balances at zero) and bury the loss. The start is
 * refused instead, naming what shows the directory's earlier life, so the database can be
 * restored. A brand-new directory has none of these: they are all made after the database.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../core/errors.js';
import { credentialsPath } from '../gateway/dev-credentials.js';
import { modeMarkerPath } from './data-mode.js';

export const databasePath = (dataDir: string) => join(dataDir, 'agentpay.db');

/** What in `dataDir` shows that a database was made there before. */
function traces(dataDir: string): string[] {
  const found: string[] = [];
  if (existsSync(modeMarkerPath(dataDir))) found.push('mode');
  if (existsSync(credentialsPath(dataDir))) found.push('dev-credentials.json');
  const keys = join(dataDir, 'keys');
  if (existsSync(keys) && statSync(keys).isDirectory() && readdirSync(keys).some((f) => f.endsWith('.pem'))) found.push('keys/');
  return found;
}

export function refuseLostDatabase(dataDir: string): void {
  const db = databasePath(dataDir);
  const st = statSync(db, { throwIfNoEntry: false });
  if (st && !(st.isFile() && st.size === 0)) return;
  const seen = traces(dataDir);
  if (seen.length === 0) return;
  throw new AppError('CONFLICT', `${db} is ${st ? 'empty' : 'missing'}, but ${dataDir} was used before (it holds ${seen.join(', ')}): starting would begin a new ledger and lose the old one. Restore agentpay.db (with its -wal file, if any) from a backup; to start afresh on purpose, move the whole data directory away`, {
    dataDir, database: db, traces: seen,
  });
}
