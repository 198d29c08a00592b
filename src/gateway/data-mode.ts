/**
 * A data directory serves one mode for its whole life. A sandbox directory holds simulated
 * money (`fund` entries, sandbox rails) and dev keys whose values sit in a file; started in
 * production, that money could be spent with real sellers and those keys would be operator
 * keys. So the first start records its mode in `DATA_DIR/mode`, and a start in the other
 * mode is refused. A directory from before the marker is sandbox if it shows sandbox traces.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../core/errors.js';
import { readTextFile, writeFileAtomic } from '../core/files.js';
import { credentialsPath } from '../gateway/dev-credentials.js';
import type { GatewayConfig } from './config.js';

export const modeMarkerPath = (dataDir: string) => join(dataDir, 'mode');

/** What the mode check is told of the store it starts on. */
export interface ModeCheckStore {
  /** whether the database holds simulated money (a `fund` entry) */
  hasSandboxMoney: () => Promise<boolean>;
  /** a PostgreSQL database shared by a fleet: its URL with the password hidden; absent for SQLite in the data dir */
  database?: string;
}

/**
 * Records the directory's mode on its first start; refuses a start in the other mode, naming what
 * conflicts: the directory's recorded mode, or, for a directory new to this start, the database
 * (a fleet's PostgreSQL database with simulated money in it is a sandbox one). A refused start
 * records nothing, so a new directory stays new.
 */
export async function claimDataDirMode(dataDir: string, mode: GatewayConfig['mode'], store: ModeCheckStore): Promise<void> {
  const path = modeMarkerPath(dataDir);
  let recorded = existsSync(path) ? readTextFile(path).trim() : undefined;
  if (recorded === undefined) {
    // once per directory: a scan for sandbox credit, the only way `fund` entries are made
    const devKeys = existsSync(credentialsPath(dataDir));
    const sandboxMoney = !devKeys && (await store.hasSandboxMoney());
    const found = devKeys || sandboxMoney ? 'sandbox' : mode;
    if (found !== mode) {
      throw new AppError('CONFLICT', devKeys
        ? `${dataDir} holds dev keys (${credentialsPath(dataDir)}): it is a sandbox data directory and cannot be served in production mode; give production a new --data-dir, or start this one with --mode sandbox`
        : store.database
          ? `the database ${store.database} holds simulated money (sandbox \`fund\` entries): it is a sandbox database and cannot be served in production mode (the data directory ${dataDir} is not what conflicts); start with --mode sandbox for a trial, or give production a database of its own`
          : `${dataDir} is a sandbox data directory (its database holds simulated money: sandbox \`fund\` entries) and cannot be served in production mode; give production a new --data-dir, or start this one with --mode sandbox`, {
        dataDir, recordedMode: 'sandbox', mode, conflict: devKeys || !store.database ? 'dataDir' : 'database', ...(store.database ? { database: store.database } : {}),
      });
    }
    writeFileAtomic(path, `${found}\n`);
    recorded = found;
  }
  if (recorded !== 'sandbox' && recorded !== 'production') {
    throw new AppError('CONFLICT', `${path} says ${JSON.stringify(recorded.slice(0, 40))}, not sandbox or production: write the mode this data directory was first started in (a directory with dev-credentials.json or simulated fund entries is sandbox)`, {
      dataDir, path, recordedMode: recorded,
    });
  }
  if (recorded !== mode) {
    throw new AppError('CONFLICT', recorded === 'sandbox'
      ? `${dataDir} is a sandbox data directory (${path} says sandbox: simulated money, dev keys) and cannot be served in production mode; give production a new --data-dir, or start this one with --mode sandbox`
      : `${dataDir} is a production data directory (${path} says production) and cannot be served in sandbox mode (sandbox shortcuts would create money in it); use another --data-dir for development`, {
      dataDir, recordedMode: recorded, mode, conflict: 'dataDir',
    });
  }
}
