import { and, asc, eq, isNull } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { tenants, signups, accounts, passwordResets, apiKeys } from '../schema-pg/index.js';
import type { TenantRepo, SignupRepo, AccountRepo, PasswordResetRepo, ApiKeyRepo, Tenant, Signup, Account, PasswordReset, ApiKey, TenantKind } from '../repos/tenancy.js';
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
  constructor(private db: Db) {}
  async insert(a: Account) { await this.db.insert(accounts).values(a); }
  async get(id: string) { return (await this.db.select().from(accounts).where(eq(accounts.id, id)))[0]; }
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
  async get(id: string) { return (await this.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0]; }
  async byHash(hash: string) { return AK.first(await run(this.s, 'api_key_by_hash', KEY_BY_HASH, [hash])); }
  async listByTenant(tenantId: string) { return this.db.select().from(apiKeys).where(eq(apiKeys.tenantId, tenantId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)); }
  async update(id: string, patch: Partial<Pick<ApiKey, 'revokedAt' | 'lastUsedAt' | 'name'>>) { await this.db.update(apiKeys).set(patch).where(eq(apiKeys.id, id)); }
}
