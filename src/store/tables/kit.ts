/**
 * The dialect-neutral kit every table is described with, once (./<family>.ts). `table()` makes
 * from one description both drizzle tables: the SQLite one (src/store/schema, drizzle/) and the
 * PostgreSQL one (src/store/schema-pg, drizzle-pg/). Each column of the kit is a pair of drizzle
 * column builders, one per dialect, modified together, so the two tables have the same columns,
 * keys and indexes, and row types that are the same by construction (test/store/tables.test.ts).
 *
 * In memory the types are the same on both backends; in the database each has its own:
 * - `minor`: money, integer minor units, a bigint in memory (SQLite INTEGER, PostgreSQL bigint);
 * - `int`: epoch milliseconds (times) and counters, a number in memory (INTEGER, bigint);
 * - `measure`: a measure that may have a fraction (an advertised latency in ms), a number, never
 *   money (INTEGER as SQLite keeps it: INTEGER when whole, REAL otherwise; double precision);
 * - `bool`: a boolean (INTEGER 0/1, boolean);
 * - `json<T>()`: JSON kept as text, read back exactly as written (text on both);
 * - `text`, with an optional enum (text on both).
 * The SQLite connection runs with safe integers on, so every INTEGER arrives as a bigint;
 * node-postgres returns int8 as a string (it can exceed 2^53). Money is parsed to a bigint
 * exactly, times and counters to a number: nothing passes through a float.
 */
import type { AnyColumn, BuildColumns, HasDefault, IsPrimaryKey, NotNull, SQL, Writable } from 'drizzle-orm';
import * as lite from 'drizzle-orm/sqlite-core';
import * as pg from 'drizzle-orm/pg-core';

// ---- the dialects' column types ---------------------------------------------------------------

const liteTypes = {
  minor: lite.customType<{ data: bigint; driverData: bigint | number }>({
    dataType: () => 'integer',
    toDriver: (v) => v,
    fromDriver: (v) => BigInt(v),
  }),
  int: lite.customType<{ data: number; driverData: bigint | number }>({
    dataType: () => 'integer',
    toDriver: (v) => BigInt(v),
    fromDriver: (v) => Number(v),
  }),
  measure: lite.customType<{ data: number; driverData: bigint | number }>({
    dataType: () => 'integer',
    toDriver: (v) => v,
    fromDriver: (v) => Number(v),
  }),
  bool: lite.customType<{ data: boolean; driverData: bigint | number }>({
    dataType: () => 'integer',
    toDriver: (v) => (v ? 1n : 0n),
    fromDriver: (v) => Number(v) !== 0,
  }),
  json: <T>() =>
    lite.customType<{ data: T; driverData: string }>({
      dataType: () => 'text',
      toDriver: (v) => JSON.stringify(v),
      fromDriver: (v) => JSON.parse(v) as T,
    }),
};

const pgTypes = {
  minor: pg.customType<{ data: bigint; driverData: string | number | bigint }>({
    dataType: () => 'bigint',
    toDriver: (v) => v.toString(),
    fromDriver: (v) => BigInt(v),
  }),
  int: pg.customType<{ data: number; driverData: string | number }>({
    dataType: () => 'bigint',
    toDriver: (v) => v,
    fromDriver: (v) => Number(v),
  }),
  measure: pg.customType<{ data: number; driverData: string | number }>({
    dataType: () => 'double precision',
    toDriver: (v) => v,
    fromDriver: (v) => Number(v),
  }),
  bool: pg.customType<{ data: boolean; driverData: boolean }>({
    dataType: () => 'boolean',
    toDriver: (v) => v,
    fromDriver: (v) => v === true || (v as unknown) === 't',
  }),
  json: <T>() =>
    pg.customType<{ data: T; driverData: string }>({
      dataType: () => 'text',
      toDriver: (v) => JSON.stringify(v),
      fromDriver: (v) => JSON.parse(v) as T,
    }),
};

// ---- neutral columns ---------------------------------------------------------------------------

/** What both dialects' builders can do; the builders' own methods return `this`, typed by drizzle's NotNull etc. below. */
interface Modifiable {
  notNull(): unknown;
  default(value: unknown): unknown;
  primaryKey(): unknown;
  references(ref: () => AnyColumn): unknown;
}

/** A column of a description: its SQLite builder and its PostgreSQL builder, changed together. */
export class Col<S extends lite.SQLiteColumnBuilderBase, P extends pg.PgColumnBuilderBase> {
  constructor(readonly sqlite: S, readonly pg: P) {}

  notNull(): Col<NotNull<S>, NotNull<P>> {
    return this.both((b) => b.notNull());
  }

  default(value: S['_']['data'] & P['_']['data']): Col<HasDefault<S>, HasDefault<P>> {
    return this.both((b) => b.default(value));
  }

  primaryKey(): Col<IsPrimaryKey<NotNull<S>>, IsPrimaryKey<NotNull<P>>> {
    return this.both((b) => b.primaryKey());
  }

  /** A foreign key to `column` of another described table. */
  references<T extends AnyTable>(target: () => T, column: keyof T['sqlite']['_']['columns'] & keyof T['pg']['_']['columns'] & string): this {
    (this.sqlite as unknown as Modifiable).references(() => (target().sqlite as unknown as Record<string, AnyColumn>)[column]!);
    (this.pg as unknown as Modifiable).references(() => (target().pg as unknown as Record<string, AnyColumn>)[column]!);
    return this;
  }

  /** drizzle's builders change in place and return themselves: so does the pair. */
  private both<R>(change: (builder: Modifiable) => unknown): R {
    change(this.sqlite as unknown as Modifiable);
    change(this.pg as unknown as Modifiable);
    return this as unknown as R;
  }
}

/** Text, optionally one of `enum`. */
export function text<TName extends string, U extends string, T extends Readonly<[U, ...U[]]>>(
  name: TName,
  config?: { enum: T | Writable<T> },
): Col<lite.SQLiteTextBuilderInitial<TName, Writable<T>, number | undefined>, pg.PgTextBuilderInitial<TName, Writable<T>>> {
  return new Col(lite.text(name, config) as never, pg.text(name, config) as never);
}

/** Money: integer minor units, a bigint in memory. */
export const minor = <N extends string>(name: N) => new Col(liteTypes.minor(name), pgTypes.minor(name));
/** Epoch milliseconds (times) and counters: a number in memory. */
export const int = <N extends string>(name: N) => new Col(liteTypes.int(name), pgTypes.int(name));
/** A measure that may have a fraction (an advertised latency in ms). Never money. */
export const measure = <N extends string>(name: N) => new Col(liteTypes.measure(name), pgTypes.measure(name));
export const bool = <N extends string>(name: N) => new Col(liteTypes.bool(name), pgTypes.bool(name));
/** JSON kept as text (string arrays, small objects): `json<string[]>()('tags')`. */
export const json =
  <T>() =>
  <N extends string>(name: N) =>
    new Col(liteTypes.json<T>()(name), pgTypes.json<T>()(name));

// ---- keys, indexes, checks ---------------------------------------------------------------------

type Columns = [AnyColumn, ...AnyColumn[]];

class IndexSpec {
  constructor(
    readonly name: string,
    readonly unique: boolean,
    readonly columns: Columns,
    readonly condition?: SQL,
  ) {}

  /** A partial index: only the rows where `condition` (plain SQL both databases read) holds. */
  where(condition: SQL): IndexSpec {
    return new IndexSpec(this.name, this.unique, this.columns, condition);
  }
}

class PrimaryKeySpec {
  constructor(readonly columns: Columns) {}
}

class CheckSpec {
  constructor(
    readonly name: string,
    readonly condition: SQL,
  ) {}
}

type Constraint = IndexSpec | PrimaryKeySpec | CheckSpec;

export const index = (name: string) => ({ on: (...columns: Columns) => new IndexSpec(name, false, columns) });
export const uniqueIndex = (name: string) => ({ on: (...columns: Columns) => new IndexSpec(name, true, columns) });
/** A composite primary key (a one-column key is the column's `.primaryKey()`). */
export const primaryKey = (config: { columns: Columns }) => new PrimaryKeySpec(config.columns);
export const check = (name: string, condition: SQL) => new CheckSpec(name, condition);

function liteConstraint(c: Constraint): lite.SQLiteTableExtraConfigValue {
  if (c instanceof PrimaryKeySpec) return lite.primaryKey({ columns: c.columns as [lite.SQLiteColumn, ...lite.SQLiteColumn[]] });
  if (c instanceof CheckSpec) return lite.check(c.name, c.condition);
  const built = (c.unique ? lite.uniqueIndex : lite.index)(c.name).on(...(c.columns as [lite.SQLiteColumn, ...lite.SQLiteColumn[]]));
  return c.condition ? built.where(c.condition) : built;
}

function pgConstraint(c: Constraint): pg.PgTableExtraConfigValue {
  if (c instanceof PrimaryKeySpec) return pg.primaryKey({ columns: c.columns as [pg.PgColumn, ...pg.PgColumn[]] });
  if (c instanceof CheckSpec) return pg.check(c.name, c.condition);
  const built = (c.unique ? pg.uniqueIndex : pg.index)(c.name).on(...(c.columns as [pg.ExtraConfigColumn, ...pg.ExtraConfigColumn[]]));
  return c.condition ? built.where(c.condition) : built;
}

// ---- tables ------------------------------------------------------------------------------------

type ColumnsMap = Record<string, Col<lite.SQLiteColumnBuilderBase, pg.PgColumnBuilderBase>>;
type LiteBuilders<C extends ColumnsMap> = { [K in keyof C]: C[K]['sqlite'] };
type PgBuilders<C extends ColumnsMap> = { [K in keyof C]: C[K]['pg'] };

/** One described table: the SQLite table and the PostgreSQL table made from it. */
export interface Table<N extends string, C extends ColumnsMap> {
  readonly name: N;
  readonly sqlite: lite.SQLiteTableWithColumns<{ name: N; schema: undefined; columns: BuildColumns<N, LiteBuilders<C>, 'sqlite'>; dialect: 'sqlite' }>;
  readonly pg: pg.PgTableWithColumns<{ name: N; schema: undefined; columns: BuildColumns<N, PgBuilders<C>, 'pg'>; dialect: 'pg' }>;
}

export interface AnyTable {
  readonly name: string;
  readonly sqlite: lite.AnySQLiteTable;
  readonly pg: pg.AnyPgTable;
}

function builders(columns: ColumnsMap, dialect: 'sqlite' | 'pg'): Record<string, unknown> {
  return Object.fromEntries(Object.entries(columns).map(([key, col]) => [key, col[dialect]]));
}

/**
 * Describes a table once: its columns (this kit's), and its composite key, indexes and checks,
 * given the table's columns (`(t) => [index('name').on(t.a, t.b)]`).
 */
export function table<N extends string, C extends ColumnsMap>(
  name: N,
  columns: C,
  constraints?: (t: { [K in keyof C]: AnyColumn }) => Constraint[],
): Table<N, C> {
  type Self = Parameters<NonNullable<typeof constraints>>[0];
  const sqlite = lite.sqliteTable(
    name,
    builders(columns, 'sqlite') as LiteBuilders<C>,
    constraints && ((t) => constraints(t as unknown as Self).map(liteConstraint)),
  );
  const pgTable = pg.pgTable(
    name,
    builders(columns, 'pg') as PgBuilders<C>,
    constraints && ((t) => constraints(t as unknown as Self).map(pgConstraint)),
  );
  return { name, sqlite, pg: pgTable };
}

/** The SQLite tables of a module of descriptions, under the same names. */
export function sqliteTables<T extends Record<string, AnyTable>>(tables: T): { [K in keyof T]: T[K]['sqlite'] } {
  return Object.fromEntries(Object.entries(tables).map(([key, t]) => [key, t.sqlite])) as { [K in keyof T]: T[K]['sqlite'] };
}

/** The PostgreSQL tables of a module of descriptions, under the same names. */
export function pgTables<T extends Record<string, AnyTable>>(tables: T): { [K in keyof T]: T[K]['pg'] } {
  return Object.fromEntries(Object.entries(tables).map(([key, t]) => [key, t.pg])) as { [K in keyof T]: T[K]['pg'] };
}
