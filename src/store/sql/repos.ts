/**
 * The repositories written once (./sql.ts), for either store: SqliteStore makes them once over its
 * connection, PgStore once per pooled connection (and once for its autocommit reads).
 */
import type { Repos } from '../store.js';
import type { Sql } from './sql.js';
import { Tenants, Signups, Accounts, PasswordResets, ApiKeys, AuthThrottles } from './tenancy.js';

export type CommonRepos = Pick<Repos, 'tenants' | 'signups' | 'accounts' | 'passwordResets' | 'apiKeys' | 'authThrottles'>;

export function commonRepos(c: Sql): CommonRepos {
  return {
    tenants: new Tenants(c),
    signups: new Signups(c),
    accounts: new Accounts(c),
    passwordResets: new PasswordResets(c),
    apiKeys: new ApiKeys(c),
    authThrottles: new AuthThrottles(c),
  };
}
