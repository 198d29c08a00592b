/**
 * Hand-written SQL for the PostgreSQL store's hot path (a paid call's challenge, authorize and
 * complete), beside drizzle for everything else.
 *
 * Measured (docs/performance.md, "PostgreSQL against SQLite"): drizzle's query building was a
 * quarter of the gateway's CPU on PostgreSQL. Here a statement's text is built once per table
 * (at module load) and sent as a named prepared statement (`{ name, text, values }`): the
 * server parses and plans it once per connection, node-postgres sends only Bind and Execute
 * afterwards. Rows are mapped with the schema's own column types (`mapFromDriverValue`:
 * money to bigint exactly), so a row read here equals one read through drizzle.
 */
import pg from 'pg';
import { execute, type Rows } from './statement.js';
import { corkUntilIdle } from './cork.js';
import { SharedConnection } from './shared-connection.js';
import { getTableColumns, getTableName, type Table } from 'drizzle-orm';
import type { LedgerEntry } from '../repos/wallets.js';

/** Where a repository's SQL runs: one pooled connection inside `tx`/`read`, or the shared connection (autocommit reads). */
export interface Session {
  /** a pooled connection; for autocommit reads, the shared connection (drizzle's statements there go to the pool) */
  conn: pg.PoolClient | SharedConnection;
  /** inside `tx` (a write transaction): reads that decide a write lock what they read */
  writable: boolean;
  /** wallets whose ledger head this transaction read (PgStore queues a retry on them) */
  touched: Set<string> | undefined;
  /** wallets whose row this transaction has locked (their ledger head is then read without the lock) */
  locked: Set<string>;
  /** the ledger heads of the locked wallets as this transaction left them (PgLedger keeps them) */
  heads?: Map<string, LedgerEntry | undefined>;
  /** writes sent inside this `tx` and not waited for (`send`): settled before the transaction's outcome is told */
  pending: Promise<void>[];
  /** the first of those writes that PostgreSQL refused (the transaction is then aborted: its COMMIT rolls back) */
  failed: { error: unknown } | undefined;
}

/** A session's per-transaction state, cleared when its connection begins another `tx` or `read`. */
export function resetSession(s: Session, writable: boolean, touched: Set<string> | undefined): void {
  s.writable = writable;
  s.touched = touched;
  s.locked.clear();
  s.heads?.clear();
  s.pending.length = 0;
  s.failed = undefined;
}

interface Col {
  key: string;
  name: string;
  fromDriver: (v: unknown) => unknown;
  toDriver: (v: unknown) => unknown;
  hasDefault: boolean;
}

/** A table's column list, row mapper and INSERT text, made once. */
export class TableSql<T> {
  readonly name: string;
  /** `"a", "b", …` in schema order */
  readonly columns: string;
  /** `INSERT INTO t (…) VALUES ($1, …)` */
  readonly insertText: string;
  private readonly cols: Col[];
  private readonly byKey: Map<string, Col>;

  constructor(table: Table) {
    this.name = getTableName(table);
    this.cols = Object.entries(getTableColumns(table)).map(([key, c]) => ({
      key,
      name: c.name,
      fromDriver: (v: unknown) => c.mapFromDriverValue(v),
      toDriver: (v: unknown) => c.mapToDriverValue(v),
      hasDefault: c.hasDefault,
    }));
    this.byKey = new Map(this.cols.map((c) => [c.key, c]));
    this.columns = this.cols.map((c) => `"${c.name}"`).join(', ');
    this.insertText = `INSERT INTO "${this.name}" (${this.columns}) VALUES (${this.cols.map((_, i) => `$${i + 1}`).join(', ')})`;
  }

  /** How many columns `columns` selects. */
  get width(): number {
    return this.cols.length;
  }

  /** `a."x", a."y", …`: the columns of this table under the alias `alias`, for a statement that joins it. */
  columnsOf(alias: string): string {
    return this.cols.map((c) => `${alias}."${c.name}"`).join(', ');
  }

  /** A row of a statement that selects `columns` (this table's columns in schema order) from position `at`, as the domain's record. */
  row(raw: unknown[], at = 0): T {
    const out: Record<string, unknown> = {};
    const cols = this.cols;
    for (let i = 0; i < cols.length; i++) {
      const c = cols[i]!;
      const v = raw[at + i];
      out[c.key] = v === null || v === undefined ? null : c.fromDriver(v);
    }
    return out as T;
  }

  first(r: Rows): T | undefined {
    return r.rows[0] === undefined ? undefined : this.row(r.rows[0]);
  }

  all(r: Rows): T[] {
    return r.rows.map((x) => this.row(x));
  }

  /** The INSERT's values; undefined when a value is missing for a column with a default (drizzle's insert then writes DEFAULT). */
  insertValues(obj: T): unknown[] | undefined {
    const o = obj as Record<string, unknown>;
    const out: unknown[] = [];
    for (const c of this.cols) {
      const v = o[c.key];
      if (v === undefined && c.hasDefault) return undefined;
      out.push(v === null || v === undefined ? null : c.toDriver(v));
    }
    return out;
  }

  /** The driver values of `obj`'s `keys`, in that order (null for a missing value). */
  values(obj: Partial<T>, keys: readonly (keyof T & string)[]): unknown[] {
    const o = obj as Record<string, unknown>;
    return keys.map((k) => {
      const c = this.byKey.get(k);
      if (!c) throw new Error(`${this.name} has no column ${k}`);
      const v = o[k];
      return v === null || v === undefined ? null : c.toDriver(v);
    });
  }

  /** `SET "a" = $1, …` for a patch's defined keys, from parameter `from`, and their values; the statement's name part. */
  set(patch: Record<string, unknown>, from = 1): { text: string; values: unknown[]; keys: string } {
    const parts: string[] = [];
    const values: unknown[] = [];
    const keys: string[] = [];
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      const c = this.byKey.get(k);
      if (!c) throw new Error(`${this.name} has no column ${k}`);
      parts.push(`"${c.name}" = $${from + values.length}`);
      values.push(v === null ? null : c.toDriver(v));
      keys.push(k);
    }
    return { text: parts.join(', '), values, keys: keys.join(',') };
  }
}

/**
 * A drizzle select, locked (`FOR NO KEY UPDATE`, held to COMMIT) when it runs inside a write
 * transaction: a read that decides a write then makes a second writer wait and read what the
 * first one committed (READ COMMITTED). Outside `tx` it is the plain select.
 */
export function forWrite<R>(s: Session, q: PromiseLike<R> & { for(strength: 'no key update'): PromiseLike<R> }): PromiseLike<R> {
  return s.writable ? q.for('no key update') : q;
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
