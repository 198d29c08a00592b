/**
 * Each table is described once (src/store/tables) and made into a SQLite table (src/store/schema)
 * and a PostgreSQL table (src/store/schema-pg). The row types are checked at compile time (this
 * file is in the typecheck): the same on both backends for every table, and what the repositories
 * expect for a few. At run time: both dialects' tables have the same columns, keys, indexes and
 * foreign keys, and the two schema modules export every described table (drizzle-kit reads only
 * their named exports).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { getTableConfig as liteConfig } from 'drizzle-orm/sqlite-core';
import { getTableConfig as pgConfig } from 'drizzle-orm/pg-core';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import * as described from '../../src/store/tables/index.js';
import * as lite from '../../src/store/schema/index.js';
import * as pg from '../../src/store/schema-pg/index.js';

type Described = typeof described;
type Same<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;
/** the tables whose SQLite and PostgreSQL rows differ (none) */
type RowsDiffer = {
  [K in keyof Described]: Same<(typeof lite)[K]['$inferSelect'], (typeof pg)[K]['$inferSelect']> extends true
    ? Same<(typeof lite)[K]['$inferInsert'], (typeof pg)[K]['$inferInsert']> extends true
      ? never
      : K
    : K;
}[keyof Described];

describe('tables described once', () => {
  it('gives both backends the same row types, the ones the repositories expect (compile time)', () => {
    expectTypeOf<RowsDiffer>().toEqualTypeOf<never>();
    expectTypeOf<keyof typeof lite>().toEqualTypeOf<keyof Described>();
    expectTypeOf<keyof typeof pg>().toEqualTypeOf<keyof Described>();
    expectTypeOf<typeof lite.wallets.$inferSelect>().toEqualTypeOf<{
      id: string;
      tenantId: string;
      ownerType: 'agent' | 'workspace' | 'settlement' | 'platform';
      ownerId: string;
      publicKeyPem: string | null;
      status: 'active' | 'closed';
      frozen: boolean;
      frozenBy: 'owner' | 'operator' | null;
      currency: string;
      createdAt: number;
      updatedAt: number;
    }>();
    expectTypeOf<typeof pg.ledgerEntries.$inferSelect>().toEqualTypeOf<{
      id: string;
      walletId: string;
      seq: number;
      type: string;
      amountMinor: bigint;
      holdMinor: bigint;
      balanceAfter: bigint;
      heldAfter: bigint;
      currency: string;
      transactionId: string | null;
      reference: string | null;
      memo: string | null;
      createdAt: number;
      hash: string | null;
    }>();
    expectTypeOf<typeof pg.capabilities.$inferSelect.tags>().toEqualTypeOf<string[]>();
    expectTypeOf<typeof lite.capabilities.$inferSelect.latencyP50Ms>().toEqualTypeOf<number | null>();
    // a default makes the column optional on insert
    expectTypeOf<typeof pg.webhookEndpoints.$inferInsert.lastSeq>().toEqualTypeOf<number | undefined>();
    expect(Object.keys(described).length).toBeGreaterThan(0);
  });

  it('exports every described table from both schema modules, and nothing else', () => {
    expect(Object.keys(lite).sort()).toEqual(Object.keys(described).sort());
    expect(Object.keys(pg).sort()).toEqual(Object.keys(described).sort());
    for (const [key, t] of Object.entries(described)) {
      expect(lite[key as keyof typeof lite]).toBe(t.sqlite);
      expect(pg[key as keyof typeof pg]).toBe(t.pg);
    }
  });

  const liteSql = new SQLiteSyncDialect();
  const pgSql = new PgDialect();
  const text = (dialect: SQLiteSyncDialect | PgDialect, condition: SQL | undefined) => (condition ? dialect.sqlToQuery(condition).sql : null);

  it.each(Object.keys(described))('%s: the same columns, keys, indexes and foreign keys on both', (key) => {
    const l = liteConfig(lite[key as keyof typeof lite]);
    const p = pgConfig(pg[key as keyof typeof pg]);
    expect(p.name).toBe(l.name);
    const columns = (cs: { name: string; notNull: boolean; primary: boolean; hasDefault: boolean; default: unknown }[]) =>
      cs.map((c) => ({ name: c.name, notNull: c.notNull, primary: c.primary, hasDefault: c.hasDefault, default: c.default }));
    expect(columns(p.columns)).toEqual(columns(l.columns));
    expect(l.columns.length).toBeGreaterThan(1);
    expect(p.primaryKeys.map((k) => k.columns.map((c) => c.name))).toEqual(l.primaryKeys.map((k) => k.columns.map((c) => c.name)));
    expect(p.indexes.map((i) => ({ name: i.config.name, unique: i.config.unique, columns: i.config.columns.map((c) => (c as { name: string }).name), where: text(pgSql, i.config.where) })))
      .toEqual(l.indexes.map((i) => ({ name: i.config.name, unique: i.config.unique, columns: i.config.columns.map((c) => (c as { name: string }).name), where: text(liteSql, i.config.where) })));
    const fks = (refs: { columns: { name: string }[]; foreignTable: object; foreignColumns: { name: string }[] }[]) =>
      refs.map((r) => ({ columns: r.columns.map((c) => c.name), foreignColumns: r.foreignColumns.map((c) => c.name) }));
    expect(fks(p.foreignKeys.map((f) => f.reference()))).toEqual(fks(l.foreignKeys.map((f) => f.reference())));
    expect(p.checks.map((c) => c.name)).toEqual(l.checks.map((c) => c.name));
  });

  it('builds foreign keys to the referenced table of the same dialect', () => {
    const l = liteConfig(lite.ledgerEntries).foreignKeys.map((f) => f.reference());
    const p = pgConfig(pg.ledgerEntries).foreignKeys.map((f) => f.reference());
    expect(l).toHaveLength(1);
    expect(l[0]!.foreignTable).toBe(lite.wallets);
    expect(p[0]!.foreignTable).toBe(pg.wallets);
    expect(liteConfig(lite.signingKeys).indexes.map((i) => text(liteSql, i.config.where))).toEqual(["status = 'current'"]);
  });
});
