/**
 * A PostgreSQL session as ../sql/sql.ts's PgSql runs it: named prepared statements (parsed once per
 * connection, node-postgres sends only Bind and Execute afterwards; docs/performance.md,
 * "PostgreSQL against SQLite"), writes sent without waiting inside a `tx`, and the state one
 * transaction keeps.
 */
import type { LedgerHeads } from './ledger-heads.js';
import pg from 'pg';
import { execute, type Rows } from './statement.js';
import { corkUntilIdle } from './cork.js';
import { SharedConnection } from './shared-connection.js';
import type { LedgerEntry } from '../repos/wallets.js';

/** Where a repository's SQL runs: one pooled connection inside `tx`/`read`, or the shared connection (autocommit reads). */
export interface Session {
  /** a pooled connection; for autocommit reads, the shared connection */
  conn: pg.PoolClient | SharedConnection;
  /** inside `tx` (a write transaction): reads that decide a write lock what they read */
  writable: boolean;
  /** wallets whose ledger head this transaction read (PgStore queues a retry on them) */
  touched: Set<string> | undefined;
  /** the ledger heads of the wallets this transaction holds (by turn or by lock), as it left them (../sql/wallets.ts Ledger keeps them) */
  heads: Map<string, LedgerEntry | undefined>;
  /** wallets whose turn in this process this transaction holds (./ledger-heads.ts), until its COMMIT is sent */
  turns: string[];
  /** wallets it appended to whose COMMIT it sent, unanswered (./ledger-heads.ts) */
  published: string[];
  /** wallets whose row this transaction has locked (FOR NO KEY UPDATE, until COMMIT) */
  locked: Set<string>;
  /** wallets whose head in `heads` is the one this process kept, not read in this transaction */
  cached: Set<string>;
  /** the heads this process committed and the wallets' turns (PgStore's) */
  ledgerHeads?: LedgerHeads;
  /** writes sent inside this `tx` and not waited for (`send`): settled before the transaction's outcome is told */
  pending: Promise<void>[];
  /** the first of those writes that PostgreSQL refused (the transaction is then aborted: its COMMIT rolls back) */
  failed: { error: unknown } | undefined;
}

/** A session's per-transaction state, cleared when its connection begins another `tx` or `read`. */
export function resetSession(s: Session, writable: boolean, touched: Set<string> | undefined): void {
  s.writable = writable;
  s.touched = touched;
  s.heads.clear();
  s.turns.length = 0;
  s.published.length = 0;
  s.locked.clear();
  s.cached.clear();
  s.pending.length = 0;
  s.failed = undefined;
}

/**
 * Runs a named prepared statement (parsed once per connection, its result described once per
 * process: ./statement.ts); rows come back as arrays in the statement's column order. Outside a
 * `tx` or `read` (autocommit), on the shared connection (./shared-connection.ts).
 */
export function run(s: Session, name: string, text: string, values: unknown[]): Promise<Rows> {
  const conn = s.conn;
  if (conn instanceof SharedConnection) return conn.run(name, text, values);
  corkUntilIdle(conn);
  return execute(conn, name, text, values);
}

/**
 * A write whose result the domain does not read (an INSERT, an UPDATE by key): inside a `tx` it is
 * sent and not waited for; PostgreSQL runs it before anything sent after it on the connection,
 * so later reads see it. Its failure (a unique violation, say) aborts the transaction: the
 * statements after it fail too, and PgStore.tx raises this first failure (`settle`), after the
 * COMMIT, which PostgreSQL answers by rolling back. Outside a `tx` it is a plain awaited query.
 */
export async function send(s: Session, name: string, text: string, values: unknown[]): Promise<void> {
  if (!s.writable) {
    await run(s, name, text, values);
    return;
  }
  s.pending.push(run(s, name, text, values).then(
    () => undefined,
    (error: unknown) => {
      s.failed ??= { error };
    },
  ));
}

/** Waits for the writes `send` left in flight; raises the first that failed. */
export async function settle(s: Session): Promise<void> {
  if (s.pending.length > 0) await Promise.all(s.pending);
  if (s.failed) throw s.failed.error;
}
