import { and, asc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { tenants, signups, accounts, passwordResets, apiKeys, authThrottles } from '../schema-pg/index.js';
import type { TenantRepo, SignupRepo, AccountRepo, PasswordResetRepo, ApiKeyRepo, AuthThrottleRepo, AuthThrottle, Tenant, Signup, Account, PasswordReset, ApiKey, TenantKind } from '../repos/tenancy.js';
import { forWrite, run, TableSql, type Session } from './sql.js';

type Db = NodePgDatabase;

const TN = new TableSql<Tenant>(tenants);
const AK = new TableSql<ApiKey>(apiKeys);
const TENANT_GET = `SELECT ${TN.columns} FROM tenants WHERE id = $1`;
const KEY_BY_HASH = `SELECT ${AK.columns} FROM api_keys WHERE key_hash = $1`;

export class PgTenants implements TenantRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(t: Tenant) { await this.db.insert(tenants).values(t); }
  async get(id: string) { return TN.first(await run(this.s, 'tenant_get', TENANT_GET, [id])); }
  async update(id: string, patch: Partial<Omit<Tenant, 'id' | 'kind'>>) { await this.db.update(tenants).set(patch).where(eq(tenants.id, id)); }
  async listByKind(kind: TenantKind) { return this.db.select().from(tenants).where(eq(tenants.kind, kind)).orderBy(asc(tenants.createdAt), asc(tenants.id)); }
}

/**
 * Signups and password resets are read to decide a write (verify, resend, use a reset token
 * once): inside a write transaction the row is locked, so under READ COMMITTED two requests at
 * once queue on it and the second sees what the first did.
 */
export class PgSignups implements SignupRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(s: Signup) { await this.db.insert(signups).values(s); }
  async get(id: string) {
    const q = this.db.select().from(signups).where(eq(signups.id, id));
    return (await forWrite(this.s, q))[0];
  }
  async update(id: string, patch: Partial<Omit<Signup, 'id'>>) { await this.db.update(signups).set(patch).where(eq(signups.id, id)); }
}

export class PgAccounts implements AccountRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(a: Account) { await this.db.insert(accounts).values(a); }
  /** locked in a write transaction: a login that issues a key and a password reset queue on the account */
  async get(id: string) { return (await forWrite(this.s, this.db.select().from(accounts).where(eq(accounts.id, id))))[0]; }
  async byEmail(email: string) { return (await this.db.select().from(accounts).where(eq(accounts.email, email)))[0]; }
  async listByTenant(tenantId: string) { return this.db.select().from(accounts).where(eq(accounts.tenantId, tenantId)).orderBy(asc(accounts.createdAt), asc(accounts.id)); }
  async update(id: string, patch: Partial<Omit<Account, 'id'>>) { await this.db.update(accounts).set(patch).where(eq(accounts.id, id)); }
}

export class PgPasswordResets implements PasswordResetRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(p: PasswordReset) { await this.db.insert(passwordResets).values(p); }
  async byTokenHash(hash: string) {
    const q = this.db.select().from(passwordResets).where(eq(passwordResets.tokenHash, hash));
    return (await forWrite(this.s, q))[0];
  }
  async markUsed(id: string, at: number) { await this.db.update(passwordResets).set({ usedAt: at }).where(eq(passwordResets.id, id)); }
  async retireOpenForAccount(accountId: string, at: number) {
    await this.db.update(passwordResets).set({ usedAt: at }).where(and(eq(passwordResets.accountId, accountId), isNull(passwordResets.usedAt)));
  }
}

export class PgApiKeys implements ApiKeyRepo {
  constructor(private db: Db, private s: Session) {}
  async insert(k: ApiKey) { await this.db.insert(apiKeys).values(k); }
  /** locked in a write transaction: minting a key from it and revoking it queue on the key */
  async get(id: string) { return (await forWrite(this.s, this.db.select().from(apiKeys).where(eq(apiKeys.id, id))))[0]; }
  async byHash(hash: string) { return AK.first(await run(this.s, 'api_key_by_hash', KEY_BY_HASH, [hash])); }
  async listByTenant(tenantId: string) { return this.db.select().from(apiKeys).where(eq(apiKeys.tenantId, tenantId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)); }
  async update(id: string, patch: Partial<Pick<ApiKey, 'revokedAt' | 'lastUsedAt' | 'name'>>) { await this.db.update(apiKeys).set(patch).where(eq(apiKeys.id, id)); }
  async countActive(tenantId: string, now: number) {
    // the tenant's row is the lock that queues the writers counting its keys
    if (this.s.writable) await this.db.execute(sql`SELECT 1 FROM tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`);
    const { rows } = await this.db.execute<{ n: string }>(sql`SELECT count(*) AS n FROM api_keys
      WHERE tenant_id = ${tenantId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})`);
    return Number(rows[0]?.n ?? 0);
  }
  async revokeTree(rootId: string, tenantId: string, at: number) {
    return this.revokeFrom(sql`SELECT id FROM api_keys WHERE id = ${rootId} AND tenant_id = ${tenantId}`, at);
  }
  async revokeLoginKeys(accountId: string, at: number) {
    return this.revokeFrom(sql`SELECT id FROM api_keys WHERE login_account_id = ${accountId}`, at);
  }
  /** the keys `roots` selects and all they minted, down the tree (UNION: each once) */
  private async revokeFrom(roots: SQL, at: number): Promise<string[]> {
    const { rows } = await this.db.execute<{ id: string }>(sql`WITH RECURSIVE tree(id) AS (${roots} UNION SELECT k.id FROM api_keys k JOIN tree ON k.parent_key_id = tree.id)
      UPDATE api_keys SET revoked_at = ${at} WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL RETURNING id`);
    return rows.map((r) => r.id);
  }
}

export class PgAuthThrottles implements AuthThrottleRepo {
  constructor(private db: Db) {}
  async take(key: string, fresh: AuthThrottle) {
    // one statement that inserts or, on a row already there, locks it: never two rows, never a lost count
    const [row] = await this.db.insert(authThrottles).values({ ...fresh, key })
      .onConflictDoUpdate({ target: authThrottles.key, set: { count: sql`${authThrottles.count}` } })
      .returning();
    return row!;
  }
  async save(row: AuthThrottle) {
    const { key, ...rest } = row;
    await this.db.update(authThrottles).set(rest).where(eq(authThrottles.key, key));
  }
  async delete(key: string) { await this.db.delete(authThrottles).where(eq(authThrottles.key, key)); }
  async prune(now: number, limit: number) {
    // SKIP LOCKED: a row another transaction holds is left to a later prune, and no two prunes wait on each other
    const { rowCount } = await this.db.execute(sql`DELETE FROM auth_throttles WHERE key IN
      (SELECT key FROM auth_throttles WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`);
    return rowCount ?? 0;
  }
}
