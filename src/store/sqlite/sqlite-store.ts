import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsDir } from '../../paths.js';
import type { Repos, Store } from '../store.js';
import { SqliteTenants, SqliteSignups, SqliteAccounts, SqlitePasswordResets, SqliteApiKeys } from './tenancy.js';
import { SqliteWallets, SqliteLedger } from './wallets.js';
import { SqliteSigningKeys } from './platform.js';
import { SqliteCapabilities, SqliteCapabilityVersions, SqliteCapabilitySearch, SqliteVerificationRequests, SqliteRatings } from './market.js';
import { SqliteTransactions, SqliteReceipts, SqliteBreakers } from './payments.js';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for throwaway stores. */
  path: string;
  /** FULL (default) makes every commit durable before it is acknowledged. */
  synchronous?: 'FULL' | 'NORMAL';
}

/**
 * better-sqlite3 is synchronous and one connection has one transaction, so every
 * `tx` and `read` runs in turn on a promise queue. Inside, repository calls complete
 * synchronously, so the queue is held only for the microseconds the SQL takes.
 */
export class SqliteStore implements Store {
  readonly raw: Database.Database;
  readonly db: BetterSQLite3Database;
  private readonly repos: Repos;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(opts: SqliteStoreOptions) {
    this.raw = new Database(opts.path);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
    this.raw.defaultSafeIntegers(true);
    this.db = drizzle(this.raw);
    migrate(this.db, { migrationsFolder: migrationsDir() });
    this.repos = {
      tenants: new SqliteTenants(this.db),
      signups: new SqliteSignups(this.db),
      accounts: new SqliteAccounts(this.db),
      passwordResets: new SqlitePasswordResets(this.db),
      apiKeys: new SqliteApiKeys(this.db),
      wallets: new SqliteWallets(this.db),
      ledger: new SqliteLedger(this.db),
      signingKeys: new SqliteSigningKeys(this.db),
      capabilities: new SqliteCapabilities(this.db),
      capabilityVersions: new SqliteCapabilityVersions(this.db),
      capabilitySearch: new SqliteCapabilitySearch(this.db),
      verificationRequests: new SqliteVerificationRequests(this.db),
      ratings: new SqliteRatings(this.db),
      transactions: new SqliteTransactions(this.db),
      receipts: new SqliteReceipts(this.db),
      breakers: new SqliteBreakers(this.db),
    };
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      this.raw.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(this.repos);
        this.raw.exec('COMMIT');
        return result;
      } catch (e) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw e;
      }
    });
  }

  read<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return this.exclusive(() => fn(this.repos));
  }

  async close(): Promise<void> {
    await this.exclusive(async () => undefined);
    if (this.raw.open) this.raw.close();
  }
}
