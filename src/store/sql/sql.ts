/**
 * The one SQL helper: each repository is written once, against `Sql`, and runs on SQLite and on
 * PostgreSQL. A statement is text with `?` placeholders; its text is built once per shape and run
 * as a cached better-sqlite3 statement (SQLite) or a named prepared statement on the session's
 * connection (PostgreSQL, ../pg/sql.ts `run`): nothing builds SQL per call (docs/performance.md:
 * drizzle's query builder was most of the CPU per paid call). Tables are the drizzle tables of
 * the connection's dialect (`table('apiKeys')`), whose column types encode and decode values,
 * so a row read here equals one read through drizzle.
 *
 * Where the two databases truly differ, the switch is here, named (`Sql.lock`, `Sql.rowLocks`,
 * `Sql.skipLocked`, `Sql.anyOf`/`Sql.list`, `Sql.lockedHeads`), or in a repository method that
 * says so (full-text search, discovery's ranking, a transaction's resolution, the signing keys'
 * advisory lock). Driver errors are raised as typed store errors
 * (../errors.ts) on both.
 */
import type { LedgerHeads } from '../pg/ledger-heads.js';
import type Database from 'better-sqlite3';
import { getTableColumns, getTableName, type Column, type Table as DrizzleTable } from 'drizzle-orm';
import * as liteTables from '../schema/index.js';
import * as pgTables from '../schema-pg/index.js';
import { storeError } from '../errors.js';
import { run as pgRun, send as pgSend, type Session } from '../pg/sql.js';
import type { LedgerEntry } from '../repos/wallets.js';

export type Dialect = 'sqlite' | 'pg';

type Tables = typeof liteTables;
export type TableName = { [K in keyof Tables]: Tables[K] extends DrizzleTable ? K : never }[keyof Tables];
type RowOf<K extends TableName> = Tables[K]['$inferSelect'];
/** a column's value, or null (IS NULL), or a list (IN) */
type Match<R> = { [K in keyof R]?: R[K] | null | readonly R[K][] };
/**
 * What a PostgreSQL `tx` holds of the ledger (../pg/sql.ts Session): the heads it keeps, the wallets a
 * retry queues on, the wallets it holds by their turn in this process and by their row lock, and the
 * process's heads and turns (../pg/ledger-heads.ts)
 */
export type LockedHeads = {
  heads: Map<string, LedgerEntry | undefined>;
  touched: Set<string> | undefined;
  turns: string[];
  published: string[];
  locked: Set<string>;
  /** wallets whose head in `heads` is the one this process kept, not read in this transaction */
  cached: Set<string>;
  ledgerHeads?: LedgerHeads;
};

const quote = (name: string) => `"${name}"`;

/** A connection as a repository sees it: one dialect, inside a `tx`, a `read` or autocommit. */
export abstract class Sql {
  abstract readonly dialect: Dialect;
  /** inside a write transaction */
  abstract readonly writable: boolean;
  private readonly tables = new Map<string, Table<unknown>>();

  /** rows as arrays, in the select list's order */
  abstract rows(text: string, values?: readonly unknown[]): Promise<unknown[][]>;
  /** a write; how many rows it changed (or returned) */
  abstract run(text: string, values?: readonly unknown[]): Promise<number>;
  /** a write whose result nobody reads: PostgreSQL sends it inside a `tx` without waiting (../pg/sql.ts send) */
  abstract send(text: string, values?: readonly unknown[]): Promise<void>;
  /** a raw value as the driver binds it */
  abstract value(v: unknown): unknown;

  async one(text: string, values?: readonly unknown[]): Promise<unknown[] | undefined> {
    return (await this.rows(text, values))[0];
  }

  /** The table `name` of this dialect (its drizzle table), with its statements. */
  table<K extends TableName>(name: K): Table<RowOf<K>> {
    let t = this.tables.get(name);
    if (!t) this.tables.set(name, (t = new Table(this, (this.dialect === 'sqlite' ? liteTables : pgTables)[name] as DrizzleTable)));
    return t as Table<RowOf<K>>;
  }

  /**
   * Dialect switch, row locks: whether a read that decides a write must lock what it reads.
   * SQLite's write transaction (BEGIN IMMEDIATE) already serialises every writer; PostgreSQL runs
   * READ COMMITTED, where two writers would both read the old row (pg-store.ts).
   */
  get rowLocks(): boolean {
    return this.dialect === 'pg' && this.writable;
  }

  /** Dialect switch, row locks: the clause that ends a select whose rows decide a write (see rowLocks). */
  get lock(): string {
    return this.rowLocks ? ' FOR NO KEY UPDATE' : '';
  }

  /**
   * Dialect switch, row locks: the clause that makes a select of rows to delete pass over the rows
   * another transaction holds (PostgreSQL); SQLite has one writer at a time, nothing to pass over.
   */
  get skipLocked(): string {
    return this.dialect === 'pg' ? ' FOR UPDATE SKIP LOCKED' : '';
  }

  /**
   * Dialect switch, ledger locks: inside a PostgreSQL `tx`, the wallets' heads it has locked and
   * keeps (./wallets.ts Ledger); undefined elsewhere (SQLite reads heads under its one writer).
   */
  get lockedHeads(): LockedHeads | undefined {
    return undefined;
  }

  /** Dialect switch, list parameters: `expr` is one of a list bound as one parameter (`list`), one text whatever its length. */
  anyOf(expr: string): string {
    return this.dialect === 'pg' ? `${expr} = ANY(?::text[])` : `${expr} IN (SELECT value FROM json_each(?))`;
  }

  /** the parameter of `anyOf` */
  list(values: readonly unknown[]): unknown {
    return this.dialect === 'pg' ? values : JSON.stringify(values);
  }
}

interface Col {
  key: string;
  name: string;
  column: Column;
}

/**
 * A table's statements by shape: select, insert, update and delete by columns equal to values
 * (`match`), or by a condition written in SQL. Each shape's text is built once.
 */
export class Table<R> {
  readonly name: string;
  private readonly cols: Col[];
  private readonly byKey: Map<string, Col>;
  private readonly selectList: string;
  private readonly texts = new Map<string, string>();

  constructor(private readonly sql: Sql, table: DrizzleTable) {
    this.name = quote(getTableName(table));
    this.cols = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name, column }));
    this.byKey = new Map(this.cols.map((c) => [c.key, c]));
    this.selectList = this.columns();
  }

  /** how many columns `columns()` selects */
  get width(): number {
    return this.cols.length;
  }

  /** the select list of every column, in schema order; under `alias` for a statement that joins */
  columns(alias?: string): string {
    return this.cols.map((c) => (alias ? `${alias}.${quote(c.name)}` : quote(c.name))).join(', ');
  }

  private col(key: string): Col {
    const c = this.byKey.get(key);
    if (!c) throw new Error(`${this.name} has no column ${key}`);
    return c;
  }

  /** the driver value of `key`'s column */
  encode(key: string, v: unknown): unknown {
    return v === null || v === undefined ? null : this.col(key).column.mapToDriverValue(v);
  }

  /** a row of a statement that selects `columns()` from position `at`, as the domain's record */
  row(raw: unknown[], at = 0): R {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < this.cols.length; i++) {
      const c = this.cols[i]!;
      const v = raw[at + i];
      out[c.key] = v === null || v === undefined ? null : c.column.mapFromDriverValue(v);
    }
    return out as R;
  }

  private text(id: string, build: () => string): string {
    let t = this.texts.get(id);
    if (t === undefined) this.texts.set(id, (t = build()));
    return t;
  }

  /** `"a" = ? AND "b" IS NULL AND "c" IN …` over `match`, and its values */
  private where(match: Record<string, unknown>): { id: string; text: string; values: unknown[] } {
    const keys = Object.keys(match);
    const values: unknown[] = [];
    const id = keys.map((k) => {
      const v = match[k];
      if (v === null) return `${k}:null`;
      if (Array.isArray(v)) {
        values.push(this.sql.list(v.map((x) => this.encode(k, x))));
        return `${k}:in`;
      }
      values.push(this.encode(k, v));
      return k;
    }).join(',');
    const text = this.text(`where:${id}`, () => keys.map((k) => {
      const v = match[k];
      const name = quote(this.col(k).name);
      return v === null ? `${name} IS NULL` : Array.isArray(v) ? this.sql.anyOf(name) : `${name} = ?`;
    }).join(' AND ') || 'TRUE');
    return { id, text, values };
  }

  /** The first row whose columns equal `match`, in the order `tail` gives; with `lock`, locked as `Sql.lock` says. */
  async first(match: Match<R>, tail = '', lock = false): Promise<R | undefined> {
    const w = this.where(match as Record<string, unknown>);
    const l = lock ? this.sql.lock : '';
    const text = this.text(`first:${w.id}:${tail}:${l}`, () => `SELECT ${this.selectList} FROM ${this.name} WHERE ${w.text}${tail ? ` ${tail}` : ''} LIMIT 1${l}`);
    const r = await this.sql.one(text, w.values);
    return r ? this.row(r) : undefined;
  }

  /** Every row whose columns equal `match`, in the order `tail` gives (ORDER BY, LIMIT ?: `tailValues`). */
  async all(match: Match<R>, tail = '', tailValues: readonly unknown[] = []): Promise<R[]> {
    const w = this.where(match as Record<string, unknown>);
    const text = this.text(`all:${w.id}:${tail}`, () => `SELECT ${this.selectList} FROM ${this.name} WHERE ${w.text}${tail ? ` ${tail}` : ''}`);
    return (await this.sql.rows(text, [...w.values, ...tailValues])).map((r) => this.row(r));
  }

  /** The rows `rest` selects (`WHERE …`, `ORDER BY …` in SQL, with `?` for `values`). */
  async select(rest: string, values: readonly unknown[] = []): Promise<R[]> {
    return (await this.sql.rows(`SELECT ${this.selectList} FROM ${this.name} ${rest}`, values)).map((r) => this.row(r));
  }

  /** `INSERT INTO t (…) VALUES (?, …)` over the row's defined columns (a missing one takes its default), and the values */
  private insertOf(row: R): { id: string; text: string; values: unknown[] } {
    const r = row as Record<string, unknown>;
    const keys = this.cols.filter((c) => r[c.key] !== undefined);
    const id = keys.map((c) => c.key).join(',');
    const text = this.text(`insert:${id}`, () =>
      `INSERT INTO ${this.name} (${keys.map((c) => quote(c.name)).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`);
    return { id, text, values: keys.map((c) => this.encode(c.key, r[c.key])) };
  }

  /** Inserts `rows` in one statement, every column of each (undefined as NULL); sent as `insert` says. */
  async insertAll(rows: readonly R[], sent = false): Promise<void> {
    if (rows.length === 0) return;
    const text = this.text(`insertAll:${rows.length}`, () => {
      const one = `(${this.cols.map(() => '?').join(', ')})`;
      return `INSERT INTO ${this.name} (${this.selectList}) VALUES ${rows.map(() => one).join(', ')}`;
    });
    const values = rows.flatMap((r) => this.cols.map((c) => this.encode(c.key, (r as Record<string, unknown>)[c.key])));
    await (sent ? this.sql.send(text, values) : this.sql.run(text, values));
  }

  /**
   * PostgreSQL: inserts `rows` as `insertAll` does, in one statement with `first` (a query whose
   * result nobody reads, run once before any row is inserted: a CTE, materialized as it calls a
   * volatile function). The rows' values are typed as their columns (a VALUES in a SELECT has no
   * column to take its types from). Sent as `insert` says.
   */
  async insertAllAfter(first: { text: string; values: readonly unknown[] }, rows: readonly R[], sent = false): Promise<void> {
    const text = this.text(`insertAllAfter:${rows.length}:${first.text}`, () => {
      const one = `(${this.cols.map((c) => `?::${c.column.getSQLType()}`).join(', ')})`;
      return `WITH first AS (${first.text}) INSERT INTO ${this.name} (${this.selectList}) SELECT v.* FROM first CROSS JOIN (VALUES ${rows.map(() => one).join(', ')}) AS v(${this.selectList})`;
    });
    const values = [...first.values, ...rows.flatMap((r) => this.cols.map((c) => this.encode(c.key, (r as Record<string, unknown>)[c.key])))];
    await (sent ? this.sql.send(text, values) : this.sql.run(text, values));
  }

  /** with `sent`, a write whose result nobody reads: sent without waiting inside a PostgreSQL `tx` (`Sql.send`) */
  async insert(row: R, sent = false): Promise<void> {
    const i = this.insertOf(row);
    await (sent ? this.sql.send(i.text, i.values) : this.sql.run(i.text, i.values));
  }

  /** Inserts `row`, or sets every other column of the row with its `keys` to `row`'s; sent as `insert` says. */
  async upsert(row: R, keys: readonly (keyof R & string)[], sent = false): Promise<void> {
    const i = this.insertOf(row);
    const text = this.text(`upsert:${i.id}:${keys.join(',')}`, () => {
      const set = i.id.split(',').filter((k) => !keys.includes(k as keyof R & string)).map((k) => quote(this.col(k).name));
      return `${i.text} ON CONFLICT (${keys.map((k) => quote(this.col(k).name)).join(', ')}) DO UPDATE SET ${set.map((n) => `${n} = excluded.${n}`).join(', ')}`;
    });
    await (sent ? this.sql.send(text, i.values) : this.sql.run(text, i.values));
  }

  /**
   * Inserts `row`, or, when a row with its `key` is there, takes that one as it is (a no-op update,
   * which locks it on PostgreSQL until the transaction ends): the row in the table either way.
   */
  async take(row: R, key: keyof R & string): Promise<R> {
    const i = this.insertOf(row);
    const k = quote(this.col(key).name);
    const text = this.text(`take:${i.id}:${key}`, () => `${i.text} ON CONFLICT (${k}) DO UPDATE SET ${k} = ${this.name}.${k} RETURNING ${this.selectList}`);
    return this.row((await this.sql.rows(text, i.values))[0]!);
  }

  /** Sets the patch's defined columns on the rows whose columns equal `match`; how many there were. */
  async update(match: Match<R>, patch: Partial<R>): Promise<number> {
    return this.updateWhere(patch, match);
  }

  /** As `update`, with a further condition in SQL (`and`, `?` for `andValues`). */
  async updateWhere(patch: Partial<R>, match: Match<R>, and = '', andValues: readonly unknown[] = []): Promise<number> {
    const p = patch as Record<string, unknown>;
    const set = Object.keys(p).filter((k) => p[k] !== undefined);
    if (set.length === 0) return 0;
    const w = this.where(match as Record<string, unknown>);
    return this.sql.run(this.updateText(set, w, and), [...set.map((k) => this.encode(k, p[k])), ...w.values, ...andValues]);
  }

  private updateText(set: string[], w: { id: string; text: string }, and: string): string {
    return this.text(`update:${set.join(',')}:${w.id}:${and}`, () =>
      `UPDATE ${this.name} SET ${set.map((k) => `${quote(this.col(k).name)} = ?`).join(', ')} WHERE ${w.text}${and ? ` AND ${and}` : ''}`);
  }

  /** As `updateWhere`, for a write whose count nobody reads: sent as `insert` says. */
  async updateSent(patch: Partial<R>, match: Match<R>, and = ''): Promise<void> {
    const p = patch as Record<string, unknown>;
    const set = Object.keys(p).filter((k) => p[k] !== undefined);
    if (set.length === 0) return;
    const w = this.where(match as Record<string, unknown>);
    await this.sql.send(this.updateText(set, w, and), [...set.map((k) => this.encode(k, p[k])), ...w.values]);
  }

  async delete(match: Match<R>): Promise<number> {
    const w = this.where(match as Record<string, unknown>);
    return this.sql.run(this.text(`delete:${w.id}`, () => `DELETE FROM ${this.name} WHERE ${w.text}`), w.values);
  }
}

/** SQLite: one better-sqlite3 connection, its statements prepared once and kept. */
export class SqliteSql extends Sql {
  readonly dialect = 'sqlite';
  readonly writable = false;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    super();
  }

  private statement(text: string): Database.Statement {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      if (s.reader) s.raw(true);
      this.statements.set(text, s);
    }
    return s;
  }

  value(v: unknown): unknown {
    return typeof v === 'boolean' ? (v ? 1n : 0n) : v;
  }

  rows(text: string, values: readonly unknown[] = []): Promise<unknown[][]> {
    try {
      return Promise.resolve(this.statement(text).all(...values.map((v) => this.value(v))) as unknown[][]);
    } catch (e) {
      return Promise.reject(storeError(e));
    }
  }

  run(text: string, values: readonly unknown[] = []): Promise<number> {
    try {
      const s = this.statement(text);
      const v = values.map((x) => this.value(x));
      return Promise.resolve(s.reader ? s.all(...v).length : s.run(...v).changes);
    } catch (e) {
      return Promise.reject(storeError(e));
    }
  }

  async send(text: string, values?: readonly unknown[]): Promise<void> {
    await this.run(text, values);
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …`, and a statement name per text (one per process). */
const pgTexts = new Map<string, { name: string; text: string }>();
function pgStatement(text: string): { name: string; text: string } {
  let s = pgTexts.get(text);
  if (!s) {
    let n = 0;
    pgTexts.set(text, (s = { name: `agentpay_${pgTexts.size}`, text: text.replace(/\?/g, () => `$${++n}`) }));
  }
  return s;
}

const translate = (e: unknown): never => {
  throw storeError(e);
};

/** PostgreSQL: the statements of one session (a pooled connection in a `tx` or `read`, or the shared autocommit one). */
export class PgSql extends Sql {
  readonly dialect = 'pg';

  constructor(private readonly session: Session) {
    super();
  }

  get writable(): boolean {
    return this.session.writable;
  }

  override get lockedHeads(): LockedHeads | undefined {
    return this.session.writable ? this.session : undefined;
  }

  value(v: unknown): unknown {
    return typeof v === 'bigint' ? v.toString() : v;
  }

  async rows(text: string, values: readonly unknown[] = []): Promise<unknown[][]> {
    const s = pgStatement(text);
    return (await pgRun(this.session, s.name, s.text, values.map((v) => this.value(v))).then(undefined, translate)).rows;
  }

  async run(text: string, values: readonly unknown[] = []): Promise<number> {
    const s = pgStatement(text);
    const r = await pgRun(this.session, s.name, s.text, values.map((v) => this.value(v))).then(undefined, translate);
    return r.count ?? r.rows.length;
  }

  send(text: string, values: readonly unknown[] = []): Promise<void> {
    const s = pgStatement(text);
    return pgSend(this.session, s.name, s.text, values.map((v) => this.value(v))).then(undefined, translate);
  }
}
