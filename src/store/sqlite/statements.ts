/**
 * Cached prepared statements for the queries on the payment hot path, built from the
 * drizzle table definitions so that column names and value encodings stay the ones the
 * schema declares (the same mapToDriverValue / mapFromDriverValue drizzle itself calls).
 *
 * Why not drizzle's query builder here: it builds the SQL and prepares a new statement on
 * every call. Measured on this machine (docs/performance.md): a select by key costs
 * 242 us through the builder, 27 us as a drizzle prepared query, 3.5 us as a cached
 * better-sqlite3 statement. A paid call runs about 30 statements, so the builder alone
 * was most of the gateway's CPU per call. Everything else keeps using drizzle.
 */
import type Database from 'better-sqlite3';
import { getTableColumns, getTableName, type InferInsertModel, type InferSelectModel } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';

type Row<T extends SQLiteTable> = InferSelectModel<T>;
type Key<T extends SQLiteTable> = keyof Row<T> & string;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class TableStatements<T extends SQLiteTable> {
  private readonly columns: Array<[key: string, column: SQLiteColumn]>;
  private readonly byKey: Map<string, SQLiteColumn>;
  private readonly table: string;
  private readonly selectList: string;
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly raw: Database.Database, table: T) {
    this.columns = Object.entries(getTableColumns(table)) as Array<[string, SQLiteColumn]>;
    this.byKey = new Map(this.columns);
    this.table = quote(getTableName(table));
    this.selectList = this.columns.map(([, c]) => quote(c.name)).join(', ');
  }

  private statement(id: string, sql: () => string, rawRows = false): Database.Statement {
    let s = this.cache.get(id);
    if (!s) {
      s = this.raw.prepare(sql());
      if (rawRows) s.raw(true);
      this.cache.set(id, s);
    }
    return s;
  }

  private column(key: string): SQLiteColumn {
    const c = this.byKey.get(key);
    if (!c) throw new Error(`${this.table} has no column ${key}`);
    return c;
  }

  private encode(key: string, value: unknown): unknown {
    if (value === undefined || value === null) return null;
    return this.column(key).mapToDriverValue(value);
  }

  private decode(values: unknown[]): Row<T> {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < this.columns.length; i++) {
      const [key, column] = this.columns[i]!;
      const v = values[i];
      row[key] = v === null || v === undefined ? null : column.mapFromDriverValue(v);
    }
    return row as Row<T>;
  }

  /** `WHERE a = ? AND b = ?` over the given keys, then `tail` (ORDER BY / LIMIT). */
  private where(keys: string[], tail: string): string {
    return `${keys.map((k) => `${quote(this.column(k).name)} = ?`).join(' AND ')}${tail ? ` ${tail}` : ''}`;
  }

  /** The first row whose columns equal `match`, in the order `tail` gives (e.g. `ORDER BY "seq" DESC`). */
  first(match: Partial<Record<Key<T>, unknown>>, tail = ''): Row<T> | undefined {
    const keys = Object.keys(match);
    const s = this.statement(`first:${keys.join(',')}:${tail}`, () => `SELECT ${this.selectList} FROM ${this.table} WHERE ${this.where(keys, tail)} LIMIT 1`, true);
    const values = s.get(...keys.map((k) => this.encode(k, (match as Record<string, unknown>)[k]))) as unknown[] | undefined;
    return values ? this.decode(values) : undefined;
  }

  /** Every row whose columns equal `match`, in the order `tail` gives. */
  all(match: Partial<Record<Key<T>, unknown>>, tail = ''): Array<Row<T>> {
    const keys = Object.keys(match);
    const s = this.statement(`all:${keys.join(',')}:${tail}`, () => `SELECT ${this.selectList} FROM ${this.table} WHERE ${this.where(keys, tail)}`, true);
    return (s.all(...keys.map((k) => this.encode(k, (match as Record<string, unknown>)[k]))) as unknown[][]).map((v) => this.decode(v));
  }

  insert(row: InferInsertModel<T>): void {
    const s = this.statement('insert', () =>
      `INSERT INTO ${this.table} (${this.selectList}) VALUES (${this.columns.map(() => '?').join(', ')})`);
    const r = row as Record<string, unknown>;
    s.run(...this.columns.map(([key]) => this.encode(key, r[key])));
  }

  /** Sets the patch's columns on the rows whose columns equal `match`; returns how many changed. */
  update(match: Partial<Record<Key<T>, unknown>>, patch: Partial<InferInsertModel<T>>): number {
    const p = patch as Record<string, unknown>;
    const setKeys = Object.keys(p).filter((k) => p[k] !== undefined);
    if (setKeys.length === 0) return 0;
    const keys = Object.keys(match);
    const s = this.statement(`update:${setKeys.join(',')}:${keys.join(',')}`, () =>
      `UPDATE ${this.table} SET ${setKeys.map((k) => `${quote(this.column(k).name)} = ?`).join(', ')} WHERE ${this.where(keys, '')}`);
    return s.run(
      ...setKeys.map((k) => this.encode(k, p[k])),
      ...keys.map((k) => this.encode(k, (match as Record<string, unknown>)[k])),
    ).changes;
  }
}

const perConnection = new WeakMap<Database.Database, Map<SQLiteTable, TableStatements<SQLiteTable>>>();

/** The statement cache of `table` on this drizzle database's connection (one per connection and table). */
export function statementsFor<T extends SQLiteTable>(db: BetterSQLite3Database, table: T): TableStatements<T> {
  const raw = (db as unknown as { $client: Database.Database }).$client;
  let tables = perConnection.get(raw);
  if (!tables) perConnection.set(raw, (tables = new Map()));
  let s = tables.get(table);
  if (!s) tables.set(table, (s = new TableStatements(raw, table) as unknown as TableStatements<SQLiteTable>));
  return s as unknown as TableStatements<T>;
}
