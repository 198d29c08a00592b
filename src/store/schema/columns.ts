/**
 * Column types shared by every table. The SQLite connection runs with safe integers
 * on, so every INTEGER arrives as a bigint; these types decide which stay bigint
 * (money) and which become numbers (times, counters) or booleans. They map one to
 * one onto PostgreSQL's bigint/boolean for the planned second backend.
 */
import { customType } from 'drizzle-orm/sqlite-core';

/** Money: integer minor units, bigint in memory. */
export const minor = customType<{ data: bigint; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => v,
  fromDriver: (v) => BigInt(v),
});

/** Epoch milliseconds (times) and small counters. */
export const int = customType<{ data: number; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => BigInt(v),
  fromDriver: (v) => Number(v),
});

/**
 * A measure that may have a fraction (an advertised latency in ms): a JSON number, kept as
 * SQLite stores it (INTEGER when whole, REAL otherwise), a number in memory. Never money.
 */
export const measure = customType<{ data: number; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => v,
  fromDriver: (v) => Number(v),
});

export const bool = customType<{ data: boolean; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (v) => (v ? 1n : 0n),
  fromDriver: (v) => Number(v) !== 0,
});

/** JSON kept as text (string arrays, small objects). */
export const json = <T>() =>
  customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: (v) => JSON.stringify(v),
    fromDriver: (v) => JSON.parse(v) as T,
  });
