import type { AuthThrottle, Tenant, Signup, Account, PasswordReset, ApiKey, TenantKind } from '../repos/tenancy.js';
import type { Sql } from './sql.js';

export class Tenants {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('tenants'); }
  insert(t: Tenant) { return this.t.insert(t); }
  get(id: string) { return this.t.first({ id }); }
  async update(id: string, patch: Partial<Omit<Tenant, 'id' | 'kind'>>) { await this.t.update({ id }, patch); }
  listByKind(kind: TenantKind) { return this.t.all({ kind }, 'ORDER BY created_at, id'); }
}

/**
 * Signups and password resets are read to decide a write (verify, resend, use a reset token
 * once): inside a write transaction the row is locked (Sql.lock), so under PostgreSQL's READ
 * COMMITTED two requests at once queue on it and the second sees what the first did.
 */
export class Signups {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('signups'); }
  insert(s: Signup) { return this.t.insert(s); }
  get(id: string) { return this.t.first({ id }, '', true); }
  async update(id: string, patch: Partial<Omit<Signup, 'id'>>) { await this.t.update({ id }, patch); }
}

export class Accounts {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('accounts'); }
  insert(a: Account) { return this.t.insert(a); }
  /** locked in a write transaction: a login that issues a key and a password reset queue on the account */
  get(id: string) { return this.t.first({ id }, '', true); }
  byEmail(email: string) { return this.t.first({ email }); }
  /** the tenant's accounts, oldest first */
  listByTenant(tenantId: string) { return this.t.all({ tenantId }, 'ORDER BY created_at, id'); }
  async update(id: string, patch: Partial<Omit<Account, 'id'>>) { await this.t.update({ id }, patch); }
}

export class PasswordResets {
  private readonly t;
  constructor(c: Sql) { this.t = c.table('passwordResets'); }
  insert(p: PasswordReset) { return this.t.insert(p); }
  byTokenHash(hash: string) { return this.t.first({ tokenHash: hash }, '', true); }
  async markUsed(id: string, at: number) { await this.t.update({ id }, { usedAt: at }); }
  /** Marks every still-unused reset token of the account as used (after a successful reset). */
  async retireOpenForAccount(accountId: string, at: number) { await this.t.update({ accountId, usedAt: null }, { usedAt: at }); }
}

export class ApiKeys {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('apiKeys'); }
  insert(k: ApiKey) { return this.t.insert(k); }
  /** locked in a write transaction: minting a key from it and revoking it queue on the key */
  get(id: string) { return this.t.first({ id }, '', true); }
  byHash(hash: string) { return this.t.first({ keyHash: hash }); }
  listByTenant(tenantId: string) { return this.t.all({ tenantId }, 'ORDER BY created_at, id'); }
  async update(id: string, patch: Partial<Pick<ApiKey, 'revokedAt' | 'lastUsedAt' | 'name'>>) { await this.t.update({ id }, patch); }
  /**
   * How many of the tenant's keys are active at `now` (neither revoked nor expired). Inside a
   * write transaction the count is serialised per tenant (PostgreSQL locks the tenant's row), so
   * two keys made at once cannot both take the last place under a cap.
   */
  async countActive(tenantId: string, now: number) {
    // the tenant's row is the lock that queues the writers counting its keys
    if (this.c.rowLocks) await this.c.rows(`SELECT 1 FROM tenants WHERE id = ?${this.c.lock}`, [tenantId]);
    const row = await this.c.one(`SELECT count(*) FROM api_keys
      WHERE tenant_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, [tenantId, now]);
    return Number(row?.[0] ?? 0);
  }
  /**
   * Revokes the key `rootId` of the tenant and every key it minted, and theirs (`parentKeyId`),
   * at `at`; keys already revoked keep their time. The ids revoked by this call.
   */
  revokeTree(rootId: string, tenantId: string, at: number) {
    return this.revokeFrom('SELECT id FROM api_keys WHERE id = ? AND tenant_id = ?', [rootId, tenantId], at);
  }
  /** Revokes the keys the account's logins issued, and every key they minted, at `at`; the ids revoked by this call. */
  revokeLoginKeys(accountId: string, at: number) {
    return this.revokeFrom('SELECT id FROM api_keys WHERE login_account_id = ?', [accountId], at);
  }
  /** the keys `roots` selects and all they minted, down the tree (UNION: each once) */
  private async revokeFrom(roots: string, values: unknown[], at: number): Promise<string[]> {
    const rows = await this.c.rows(`WITH RECURSIVE tree(id) AS (${roots} UNION SELECT k.id FROM api_keys k JOIN tree ON k.parent_key_id = tree.id)
      UPDATE api_keys SET revoked_at = ? WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL RETURNING id`, [...values, at]);
    return rows.map((r) => r[0] as string);
  }
}

/** Per-address counters of failed logins and reset mails (see the table's comment). */
export class AuthThrottles {
  private readonly t;
  constructor(private readonly c: Sql) { this.t = c.table('authThrottles'); }
  /**
   * The row of `key`, made as `fresh` when there is none; inside a write transaction it is
   * locked until the transaction ends, so instances counting the same address queue on it. One
   * statement that inserts or takes (and on PostgreSQL locks) the row there: never two rows, never
   * a lost count.
   */
  take(key: string, fresh: AuthThrottle) { return this.t.take({ ...fresh, key }, 'key'); }
  async save(row: AuthThrottle) {
    const { key, ...rest } = row;
    await this.t.update({ key }, rest);
  }
  async delete(key: string) { await this.t.delete({ key }); }
  /** Deletes up to `limit` rows that expired before `now` (none that another transaction holds); how many. */
  prune(now: number, limit: number) {
    // PostgreSQL: a row another transaction holds is left to a later prune, and no two prunes wait on each other
    return this.c.run(`DELETE FROM auth_throttles WHERE key IN
      (SELECT key FROM auth_throttles WHERE expires_at <= ? ORDER BY expires_at LIMIT ?${this.c.skipLocked})`, [now, limit]);
  }
}
