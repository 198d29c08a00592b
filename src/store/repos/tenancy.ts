import type { tenants, signups, accounts, passwordResets, apiKeys, authThrottles } from '../schema/index.js';

export type Tenant = typeof tenants.$inferSelect;
export type Signup = typeof signups.$inferSelect;
export type Account = typeof accounts.$inferSelect;
export type PasswordReset = typeof passwordResets.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type AuthThrottle = typeof authThrottles.$inferSelect;
export type TenantKind = Tenant['kind'];

export interface TenantRepo {
  insert(t: Tenant): Promise<void>;
  get(id: string): Promise<Tenant | undefined>;
  update(id: string, patch: Partial<Omit<Tenant, 'id' | 'kind'>>): Promise<void>;
  listByKind(kind: TenantKind): Promise<Tenant[]>;
}

export interface SignupRepo {
  insert(s: Signup): Promise<void>;
  get(id: string): Promise<Signup | undefined>;
  update(id: string, patch: Partial<Omit<Signup, 'id'>>): Promise<void>;
}

export interface AccountRepo {
  insert(a: Account): Promise<void>;
  get(id: string): Promise<Account | undefined>;
  byEmail(email: string): Promise<Account | undefined>;
  /** the tenant's accounts, oldest first */
  listByTenant(tenantId: string): Promise<Account[]>;
  update(id: string, patch: Partial<Omit<Account, 'id'>>): Promise<void>;
}

export interface PasswordResetRepo {
  insert(p: PasswordReset): Promise<void>;
  byTokenHash(hash: string): Promise<PasswordReset | undefined>;
  markUsed(id: string, at: number): Promise<void>;
  /** Marks every still-unused reset token of the account as used (after a successful reset). */
  retireOpenForAccount(accountId: string, at: number): Promise<void>;
}

export interface ApiKeyRepo {
  insert(k: ApiKey): Promise<void>;
  get(id: string): Promise<ApiKey | undefined>;
  byHash(hash: string): Promise<ApiKey | undefined>;
  listByTenant(tenantId: string): Promise<ApiKey[]>;
  update(id: string, patch: Partial<Pick<ApiKey, 'revokedAt' | 'lastUsedAt' | 'name'>>): Promise<void>;
  /**
   * How many of the tenant's keys are active at `now` (neither revoked nor expired). Inside a
   * write transaction the count is serialised per tenant (PostgreSQL locks the tenant's row), so
   * two keys made at once cannot both take the last place under a cap.
   */
  countActive(tenantId: string, now: number): Promise<number>;
  /**
   * Revokes the key `rootId` of the tenant and every key it minted, and theirs (`parentKeyId`),
   * at `at`; keys already revoked keep their time. The ids revoked by this call.
   */
  revokeTree(rootId: string, tenantId: string, at: number): Promise<string[]>;
  /** Revokes the keys the account's logins issued, and every key they minted, at `at`; the ids revoked by this call. */
  revokeLoginKeys(accountId: string, at: number): Promise<string[]>;
}

/** Per-address counters of failed logins and reset mails (see the table's comment). */
export interface AuthThrottleRepo {
  /**
   * The row of `key`, made as `fresh` when there is none; inside a write transaction it is
   * locked until the transaction ends, so instances counting the same address queue on it.
   */
  take(key: string, fresh: AuthThrottle): Promise<AuthThrottle>;
  save(row: AuthThrottle): Promise<void>;
  delete(key: string): Promise<void>;
  /** Deletes up to `limit` rows that expired before `now` (none that another transaction holds); how many. */
  prune(now: number, limit: number): Promise<number>;
}
