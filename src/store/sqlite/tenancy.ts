import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { tenants, signups, accounts, passwordResets, apiKeys, authThrottles } from '../schema/index.js';
import type { TenantRepo, SignupRepo, AccountRepo, PasswordResetRepo, ApiKeyRepo, AuthThrottleRepo, AuthThrottle, Tenant, Signup, Account, PasswordReset, ApiKey, TenantKind } from '../repos/tenancy.js';
import { statementsFor, type TableStatements } from './statements.js';

type Db = BetterSQLite3Database;

export class SqliteTenants implements TenantRepo {
  private readonly s: TableStatements<typeof tenants>;
  constructor(private db: Db) { this.s = statementsFor(db, tenants); }
  async insert(t: Tenant) { this.s.insert(t); }
  async get(id: string) { return this.s.first({ id }); }
  async update(id: string, patch: Partial<Omit<Tenant, 'id' | 'kind'>>) { this.db.update(tenants).set(patch).where(eq(tenants.id, id)).run(); }
  async listByKind(kind: TenantKind) { return this.db.select().from(tenants).where(eq(tenants.kind, kind)).orderBy(tenants.createdAt).all(); }
}

export class SqliteSignups implements SignupRepo {
  constructor(private db: Db) {}
  async insert(s: Signup) { this.db.insert(signups).values(s).run(); }
  async get(id: string) { return this.db.select().from(signups).where(eq(signups.id, id)).get(); }
  async update(id: string, patch: Partial<Omit<Signup, 'id'>>) { this.db.update(signups).set(patch).where(eq(signups.id, id)).run(); }
}

export class SqliteAccounts implements AccountRepo {
  constructor(private db: Db) {}
  async insert(a: Account) { this.db.insert(accounts).values(a).run(); }
  async get(id: string) { return this.db.select().from(accounts).where(eq(accounts.id, id)).get(); }
  async byEmail(email: string) { return this.db.select().from(accounts).where(eq(accounts.email, email)).get(); }
  async listByTenant(tenantId: string) { return this.db.select().from(accounts).where(eq(accounts.tenantId, tenantId)).orderBy(asc(accounts.createdAt), asc(accounts.id)).all(); }
  async update(id: string, patch: Partial<Omit<Account, 'id'>>) { this.db.update(accounts).set(patch).where(eq(accounts.id, id)).run(); }
}

export class SqlitePasswordResets implements PasswordResetRepo {
  constructor(private db: Db) {}
  async insert(p: PasswordReset) { this.db.insert(passwordResets).values(p).run(); }
  async byTokenHash(hash: string) { return this.db.select().from(passwordResets).where(eq(passwordResets.tokenHash, hash)).get(); }
  async markUsed(id: string, at: number) { this.db.update(passwordResets).set({ usedAt: at }).where(eq(passwordResets.id, id)).run(); }
  async retireOpenForAccount(accountId: string, at: number) {
    this.db.update(passwordResets).set({ usedAt: at }).where(and(eq(passwordResets.accountId, accountId), isNull(passwordResets.usedAt))).run();
  }
}

export class SqliteApiKeys implements ApiKeyRepo {
  private readonly s: TableStatements<typeof apiKeys>;
  constructor(private db: Db) { this.s = statementsFor(db, apiKeys); }
  async insert(k: ApiKey) { this.s.insert(k); }
  async get(id: string) { return this.s.first({ id }); }
  async byHash(hash: string) { return this.s.first({ keyHash: hash }); }
  async listByTenant(tenantId: string) { return this.db.select().from(apiKeys).where(eq(apiKeys.tenantId, tenantId)).orderBy(apiKeys.createdAt).all(); }
  async update(id: string, patch: Partial<Pick<ApiKey, 'revokedAt' | 'lastUsedAt' | 'name'>>) { this.db.update(apiKeys).set(patch).where(eq(apiKeys.id, id)).run(); }
  async countActive(tenantId: string, now: number) {
    const row = this.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM api_keys
      WHERE tenant_id = ${tenantId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})`);
    return Number(row?.n ?? 0);
  }
  async revokeTree(rootId: string, tenantId: string, at: number) {
    return this.revokeFrom(sql`SELECT id FROM api_keys WHERE id = ${rootId} AND tenant_id = ${tenantId}`, at);
  }
  async revokeLoginKeys(accountId: string, at: number) {
    return this.revokeFrom(sql`SELECT id FROM api_keys WHERE login_account_id = ${accountId}`, at);
  }
  /** the keys `roots` selects and all they minted, down the tree (UNION: each once) */
  private revokeFrom(roots: ReturnType<typeof sql>, at: number): string[] {
    return this.db.all<{ id: string }>(sql`WITH RECURSIVE tree(id) AS (${roots} UNION SELECT k.id FROM api_keys k JOIN tree ON k.parent_key_id = tree.id)
      UPDATE api_keys SET revoked_at = ${at} WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL RETURNING id`).map((r) => r.id);
  }
}

export class SqliteAuthThrottles implements AuthThrottleRepo {
  constructor(private db: Db) {}
  async take(key: string, fresh: AuthThrottle) {
    // the write transaction (BEGIN IMMEDIATE) already serialises every writer of the database
    const row = this.db.select().from(authThrottles).where(eq(authThrottles.key, key)).get();
    if (row) return row;
    this.db.insert(authThrottles).values({ ...fresh, key }).run();
    return { ...fresh, key };
  }
  async save(row: AuthThrottle) {
    const { key, ...rest } = row;
    this.db.update(authThrottles).set(rest).where(eq(authThrottles.key, key)).run();
  }
  async delete(key: string) { this.db.delete(authThrottles).where(eq(authThrottles.key, key)).run(); }
  async prune(now: number, limit: number) {
    return this.db.run(sql`DELETE FROM auth_throttles WHERE key IN (SELECT key FROM auth_throttles WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit})`).changes;
  }
}
