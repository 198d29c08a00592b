/**
 * Identity and key management for the caller's own tenant. The rules:
 * - a new key holds a subset of the scopes of the key that creates it, so no key can
 *   mint a more powerful one (403 FORBIDDEN naming the first scope it lacks);
 * - without `scopes` or `preset`, the new key copies the calling key's scopes;
 * - the `agent` preset is AGENT_SCOPES, which lacks approvals:write, so an agent
 *   cannot approve its own held spend;
 * - a new key expires no later than the key that creates it: by default when that key does
 *   (never, for a key that never expires); a later time, or `expiresAt: null` (never) from a key
 *   that expires, is 400 VALIDATION_FAILED naming the field and the calling key's expiry;
 * - a new key records the key that created it (`parentKeyId`), and revoking a key revokes
 *   every key it created, and theirs, in the same transaction; revoking is final;
 * - a tenant holds at most `keysPerTenant` active keys: past it, 409 CONFLICT (reason
 *   `key_limit_reached`) until one is revoked or expires (logins and signup still get theirs);
 * - another tenant's key is "not found", and nothing about it changes.
 */
import { AppError, notFound, validationError } from '../../core/errors.js';
import { parseIsoTime } from '../../core/clock.js';
import type { ApiKey, Tenant } from '../../store/repos/tenancy.js';
import type { Repos } from '../../store/store.js';
import type { DomainContext } from '../platform/context.js';
import { issueKey, keyView, revokeAll, type Principal } from './api-keys.js';
import { DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from './auth-throttles.js';
import { AGENT_SCOPES, DEFAULT_SCOPES, isScope, type Scope } from './scopes.js';

export type KeyView = ReturnType<typeof keyView>;

export const KEY_PRESETS = { agent: AGENT_SCOPES } as const;
export type KeyPreset = keyof typeof KEY_PRESETS;

export interface CreateKeyInput {
  name?: string;
  scopes?: string[];
  preset?: KeyPreset;
  /** ISO 8601 time; null: never (only from a key that never expires) */
  expiresAt?: string | null;
  expiresInSeconds?: number;
}

export function tenantView(t: Tenant) {
  return {
    id: t.id,
    kind: t.kind,
    name: t.name,
    status: t.status,
    verified: t.verified,
    ...(t.kind === 'provider' && t.settlementWalletId ? { walletId: t.settlementWalletId } : {}),
  };
}


/** What revoking answers: the key, and how many keys the call revoked (it and the keys it minted, down the tree). */
export interface RevokedKeys {
  key: KeyView;
  revokedCount: number;
  revokedKeyIds: string[];
}

export class KeyService {
  constructor(private ctx: DomainContext, private limits: Pick<AccountLimits, 'keysPerTenant'> = DEFAULT_ACCOUNT_LIMITS) {}

  private async callerKey(r: Repos, p: Principal): Promise<ApiKey> {
    const k = await r.apiKeys.get(p.keyId);
    if (!k) throw new AppError('UNAUTHORIZED', 'unknown API key');
    return k;
  }

  async whoami(p: Principal): Promise<{ tenant: ReturnType<typeof tenantView>; key: KeyView }> {
    return this.ctx.store.read(async (r) => {
      const tenant = await r.tenants.get(p.tenantId);
      if (!tenant) throw new AppError('UNAUTHORIZED', 'API key belongs to no tenant');
      return { tenant: tenantView(tenant), key: keyView(await this.callerKey(r, p)) };
    });
  }

  async self(p: Principal): Promise<{ key: KeyView; tenant: { id: string; kind: Tenant['kind'] } }> {
    const key = await this.ctx.store.read((r) => this.callerKey(r, p));
    return { key: keyView(key), tenant: { id: p.tenantId, kind: p.tenantKind } };
  }

  scopes(p: Principal): { scopes: Scope[]; available: Scope[] } {
    return { scopes: [...p.scopes] as Scope[], available: [...DEFAULT_SCOPES[p.tenantKind]] };
  }

  async create(p: Principal, input: CreateKeyInput): Promise<KeyView & { key: string }> {
    const scopes = this.scopesFor(p, input);
    this.expiryOf(input); // refuse a bad expiry before queueing for the transaction
    const name = input.name?.trim() || input.preset || 'key';
    const { record, key } = await this.ctx.store.tx(async (r) => {
      // locked (a store with row locks) until this transaction ends: revoking the parent waits for the new
      // key, or this finds the parent revoked; either way the new key cannot outlive it
      const parent = await this.callerKey(r, p);
      const now = this.ctx.clock.now();
      if (parent.revokedAt !== null) throw new AppError('UNAUTHORIZED', 'API key revoked', { keyId: parent.id });
      if (parent.expiresAt !== null && parent.expiresAt <= now) throw new AppError('UNAUTHORIZED', 'API key expired', { keyId: parent.id });
      // the expiry is counted from the same moment as the key's createdAt
      const expiresAt = this.boundedExpiry(input, this.expiryOf(input), parent);
      const active = await r.apiKeys.countActive(p.tenantId, now);
      if (active >= this.limits.keysPerTenant) {
        throw new AppError('CONFLICT', `this tenant already has ${active} active API keys, the most it may hold (${this.limits.keysPerTenant}); revoke keys it no longer uses (GET /v1/auth/keys, POST /v1/auth/keys/:id/revoke) and try again`, {
          reason: 'key_limit_reached',
          limit: this.limits.keysPerTenant,
          active,
        });
      }
      return issueKey(r, this.ctx, { id: p.tenantId, kind: p.tenantKind }, { name, scopes, expiresAt, parentKeyId: parent.id });
    });
    return { ...keyView(record), key };
  }

  async list(p: Principal): Promise<KeyView[]> {
    return (await this.ctx.store.read((r) => r.apiKeys.listByTenant(p.tenantId))).map(keyView);
  }

  /**
   * Revokes the key and every key it minted, and theirs, in one transaction. Idempotent: a
   * revoked key keeps its first revocation time (revoking it again revokes any descendant still
   * active, and counts only those).
   */
  async revoke(p: Principal, keyId: string): Promise<RevokedKeys> {
    return this.ctx.store.tx(async (r) => {
      const k = await r.apiKeys.get(keyId); // locked (a store with row locks): a key being minted from it commits first
      if (!k || k.tenantId !== p.tenantId) throw notFound('NOT_FOUND', 'API key', keyId);
      const revokedKeyIds = await revokeAll((at) => r.apiKeys.revokeTree(k.id, p.tenantId, at), this.ctx.clock.now());
      const after = await r.apiKeys.get(k.id);
      return { key: keyView(after ?? k), revokedCount: revokedKeyIds.length, revokedKeyIds };
    });
  }

  private scopesFor(p: Principal, input: CreateKeyInput): Scope[] {
    if (input.preset !== undefined && input.scopes !== undefined) throw validationError('preset', 'send either preset or scopes, not both');
    let scopes: readonly string[];
    if (input.preset !== undefined) {
      scopes = KEY_PRESETS[input.preset];
      const kindScopes: readonly string[] = DEFAULT_SCOPES[p.tenantKind];
      if (!scopes.every((s) => kindScopes.includes(s))) {
        throw validationError('preset', `the ${input.preset} preset is for workspace keys; send scopes instead`);
      }
    } else {
      scopes = input.scopes ?? [...p.scopes];
    }
    if (scopes.length === 0) throw validationError('scopes', 'must name at least one scope');
    for (const s of scopes) {
      if (!isScope(s)) throw validationError('scopes', `unknown scope ${JSON.stringify(s)}; GET /v1/auth/scopes lists them`, { scope: s });
    }
    for (const s of scopes) {
      if (!p.scopes.has(s)) throw new AppError('FORBIDDEN', `a new key cannot hold the scope ${s}, because the calling key lacks it`, { scope: s, reason: 'scope_not_grantable' });
    }
    return scopes as Scope[];
  }

  /**
   * The new key's expiry within its parent's: the parent's when none was asked for; 400 naming
   * the field for a later one, or for `expiresAt: null` (never), from a parent that expires.
   */
  private boundedExpiry(input: CreateKeyInput, asked: number | null | undefined, parent: ApiKey): number | null {
    if (asked === undefined) return parent.expiresAt;
    if (parent.expiresAt === null || (asked !== null && asked <= parent.expiresAt)) return asked;
    const field = input.expiresInSeconds !== undefined ? 'expiresInSeconds' : 'expiresAt';
    const limit = new Date(parent.expiresAt).toISOString();
    const secondsLeft = Math.floor((parent.expiresAt - this.ctx.clock.now()) / 1000);
    const what = asked === null ? `null asks for a key that never expires, but the calling key expires at ${limit}` : `is later than the calling key's expiry, ${limit}`;
    throw validationError(field, `${what}: a key cannot outlive the key that makes it; ask for ${limit} or earlier (expiresInSeconds at most ${secondsLeft}), or leave expiresAt and expiresInSeconds out to get ${limit}`, {
      parentExpiresAt: limit,
      reason: 'outlives_parent',
    });
  }

  /** undefined: none asked for; null: `expiresAt: null`, never */
  private expiryOf(input: CreateKeyInput): number | null | undefined {
    const now = this.ctx.clock.now();
    if (input.expiresAt !== undefined && input.expiresInSeconds !== undefined) {
      throw validationError('expiresAt', 'send either expiresAt or expiresInSeconds, not both');
    }
    if (input.expiresInSeconds !== undefined) return now + input.expiresInSeconds * 1000;
    if (input.expiresAt === undefined) return undefined;
    if (input.expiresAt === null) return null;
    const at = parseIsoTime(input.expiresAt);
    if (at === undefined) throw validationError('expiresAt', 'must be an ISO 8601 time that exists, like 2030-01-31T00:00:00Z');
    if (at <= now) throw validationError('expiresAt', `is in the past (now is ${new Date(now).toISOString()}); give a future time`);
    return at;
  }
}
