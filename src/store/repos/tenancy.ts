import type { tenants, signups, accounts, passwordResets, apiKeys } from '../schema/index.js';

export type Tenant = typeof tenants.$inferSelect;
export type Signup = typeof signups.$inferSelect;
export type Account = typeof accounts.$inferSelect;
export type PasswordReset = typeof passwordResets.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
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
}
