import { bool, index, int, json, table, text, uniqueIndex } from './kit.js';

/** A workspace (buyer), a provider (seller) or the platform operator. */
export const tenants = table('tenants', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['workspace', 'provider', 'operator'] }).notNull(),
  name: text('name').notNull(),
  email: text('email'),
  website: text('website'),
  /** providers: pending_verification | active | suspended; workspaces and the operator: active */
  status: text('status').notNull(),
  verified: bool('verified').notNull(),
  settlementWalletId: text('settlement_wallet_id'),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
});

/** A pending signup: becomes a tenant, an account and a first key once its email token is verified. */
export const signups = table('signups', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['workspace', 'provider'] }).notNull(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  website: text('website'),
  passwordHash: text('password_hash').notNull(),
  status: text('status', { enum: ['pending', 'verified'] }).notNull(),
  tokenHash: text('token_hash').notNull(),
  tokenExpiresAt: int('token_expires_at').notNull(),
  resendCount: int('resend_count').notNull(),
  tenantId: text('tenant_id'),
  createdAt: int('created_at').notNull(),
  verifiedAt: int('verified_at'),
}, (t) => [index('signups_email').on(t.email)]);

/** A person who can log in to a tenant. */
export const accounts = table('accounts', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull().references(() => tenants, 'id'),
  email: text('email').notNull(),
  passwordHash: text('password_hash').notNull(),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
}, (t) => [uniqueIndex('accounts_email').on(t.email)]);

export const passwordResets = table('password_resets', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts, 'id'),
  tokenHash: text('token_hash').notNull(),
  expiresAt: int('expires_at').notNull(),
  usedAt: int('used_at'),
  createdAt: int('created_at').notNull(),
}, (t) => [uniqueIndex('password_resets_token').on(t.tokenHash)]);

/** API keys: only a SHA-256 of the secret is kept; the key itself is shown once. */
export const apiKeys = table('api_keys', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull().references(() => tenants, 'id'),
  name: text('name').notNull(),
  keyHash: text('key_hash').notNull(),
  /** first characters of the key, to recognise it in lists */
  prefix: text('prefix').notNull(),
  scopes: json<string[]>()('scopes').notNull(),
  expiresAt: int('expires_at'),
  revokedAt: int('revoked_at'),
  lastUsedAt: int('last_used_at'),
  createdAt: int('created_at').notNull(),
  /** the key that minted this one (POST /v1/auth/keys); revoking a key revokes the keys it minted, and theirs */
  parentKeyId: text('parent_key_id'),
  /** the account whose login issued this key; a password reset of that account revokes it */
  loginAccountId: text('login_account_id'),
}, (t) => [
  uniqueIndex('api_keys_hash').on(t.keyHash),
  index('api_keys_tenant').on(t.tenantId),
  index('api_keys_parent').on(t.parentKeyId),
  index('api_keys_login_account').on(t.loginAccountId),
]);

/**
 * Failed-login backoff and password-reset mail throttle, per email address, in the store so that
 * every instance of a fleet counts the same. `key` is `<kind>:<SHA-256 of the address>` (no address
 * is kept in clear, known or not); a row whose `expiresAt` has passed no longer matters and is pruned.
 */
export const authThrottles = table('auth_throttles', {
  key: text('key').primaryKey(),
  /** login: attempts in the current streak; reset mail: mails in the current day window */
  count: int('count').notNull(),
  windowStartedAt: int('window_started_at').notNull(),
  lastAt: int('last_at').notNull(),
  /** login: no attempt is checked before this time */
  blockedUntil: int('blocked_until'),
  expiresAt: int('expires_at').notNull(),
}, (t) => [index('auth_throttles_expires').on(t.expiresAt)]);
