/**
 * The PostgreSQL column types, one for one with the SQLite ones (../schema/columns.ts): the
 * same TypeScript types in memory, so every table's `$inferSelect` equals the SQLite schema's
 * (checked in ./same-types.ts) and the repository interfaces are unchanged.
 *
 * node-postgres returns int8 as a string (it can exceed 2^53): money is parsed to a bigint
 * exactly, times and counters to a number. Nothing passes through a float.
 */
import { customType } from 'drizzle-orm/pg-core';

/** Money: integer minor units, bigint in memory, `bigint` (int8) in the database. */
export const minor = customType<{ data: bigint; driverData: string | number | bigint }>({
  dataType: () => 'bigint',
  toDriver: (v) => v.toString(),
  fromDriver: (v) => BigInt(v),
});

/** Epoch milliseconds (times) and small counters: `bigint`, a number in memory. */
export const int = customType<{ data: number; driverData: string | number }>({
  dataType: () => 'bigint',
  toDriver: (v) => v,
  fromDriver: (v) => Number(v),
});

/** A measure that may have a fraction (an advertised latency in ms). Never money. */
export const measure = customType<{ data: number; driverData: string | number }>({
  dataType: () => 'double precision',
  toDriver: (v) => v,
  fromDriver: (v) => Number(v),
});

export const bool = customType<{ data: boolean; driverData: boolean }>({
  dataType: () => 'boolean',
  toDriver: (v) => v,
  fromDriver: (v) => v === true || (v as unknown) === 't',
});

/** JSON kept as text, as SQLite keeps it (the text is read back exactly as written). */
export const json = <T>() =>
  customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: (v) => JSON.stringify(v),
    fromDriver: (v) => JSON.parse(v) as T,
  });
