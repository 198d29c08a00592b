/**
 * The first (or another) operator key of a gateway, made on the machine that holds its
 * data directory. Operators are not signed up: whoever can write the gateway's database
 * already controls it, so that is the trust boundary for making one. Works while the
 * gateway runs (SQLite lets a second connection write between its commits).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { systemClock } from '../core/clock.js';
import { randomIds } from '../core/ids.js';
import { issueKey, keyView } from '../domain/tenancy/api-keys.js';
import { ensurePlatform, OPERATOR_TENANT_ID } from '../domain/tenancy/tenants.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { CliError } from './errors/index.js';
import { PgStore } from '../store/pg/pg-store.js';
import { DatabaseUnavailable } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { databaseUnavailable } from './gateway-runner.js';
import type { SettingSource } from './setting-source.js';
import { databasePath } from '../gateway/lost-database.js';

export async function issueOperatorKey(dataDir: string, name: string, database?: string, databaseSource?: SettingSource) {
  if (database) {
    let store: PgStore;
    try {
      // migrates a new database, as a start would: the key is then valid for every instance
      store = await PgStore.open({ url: database });
    } catch (e) {
      if (e instanceof DatabaseUnavailable) throw databaseUnavailable(e, databaseSource);
      throw e;
    }
    return issueWith(store, name);
  }
  const dir = resolve(dataDir);
  const db = databasePath(dir);
  if (!existsSync(db)) {
    throw new CliError('DATA_DIR_NOT_FOUND', `${dir} holds no gateway database (agentpay.db)`, {
      tryNext: `start the gateway once on it first: agentpay gateway start --data-dir ${dir}`,
      details: { dataDir: dir },
    });
  }
  return issueWith(new SqliteStore({ path: db }), name);
}

async function issueWith(store: Store, name: string) {
  try {
    const ctx = { store, clock: systemClock, ids: randomIds };
    const issued = await store.tx(async (r) => {
      await ensurePlatform(r, ctx);
      return issueKey(r, ctx, { id: OPERATOR_TENANT_ID, kind: 'operator' }, { name });
    });
    return { key: issued.key, ...keyView(issued.record) };
  } finally {
    await store.close();
  }
}
