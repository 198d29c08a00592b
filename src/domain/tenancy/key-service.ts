/**
 * Identity and key management for the caller's own tenant. The rules:
 * - a new key holds a subset of the scopes of the key that creates it, so no key can
 *   mint a more powerful one (403 FORBIDDEN naming the first scope it lacks);
 * - without `scopes` or `preset`, the new key copies the calling key's scopes;
 * - the `agent` preset is AGENT_SCOPES, which lacks approvals:write, so an agent
 *   cannot approve its own held spend;
 * - keys expire at `expiresAt`/after `expiresInSeconds` or never; revoking is final;
 * - another tenant's key is "not found", and nothing about it changes.
 */
import { AppError, notFound, validationError } from '../../core/errors.js';
import { parseIsoTime } from '../../core/clock.js';
import type { ApiKey, Tenant } from '../../store/repos/tenancy.js';
import type { Repos } from '../../store/store.js';
import type { DomainContext } from '../platform/context.js';
import { issueKey, keyView, type Principal } from './api-keys.js';
import { AGENT_SCOPES, DEFAULT_SCOPES, isScope, type Scope } from './scopes.js';

export type KeyView = ReturnType<typeof keyView>;

export const KEY_PRESETS = { agent: AGENT_SCOPES } as const;
export type KeyPreset = keyof typeof KEY_PRESETS;

export interface CreateKeyInput {
  name?: string;
  scopes?: string[];
  preset?: KeyPreset;
  /** ISO 8601 time */
  expiresAt?: string;
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


export class KeyService {
  constructor(private ctx: DomainContext) {}

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
    const { record, key } = await this.ctx.store.tx((r) =>
      // the expiry is counted from the same moment as the key's createdAt
      issueKey(r, this.ctx, { id: p.tenantId, kind: p.tenantKind }, { name, scopes, expiresAt: this.expiryOf(input) }),
    );
    return { ...keyView(record), key };
  }

  async list(p: Principal): Promise<KeyView[]> {
    return (await this.ctx.store.read((r) => r.apiKeys.listByTenant(p.tenantId))).map(keyView);
  }

  /** Revoking is idempotent: a revoked key keeps its first revocation time. */
  async revoke(p: Principal, keyId: string): Promise<KeyView> {
    return this.ctx.store.tx(async (r) => {
      const k = await r.apiKeys.get(keyId);
      if (!k || k.tenantId !== p.tenantId) throw notFound('NOT_FOUND', 'API key', keyId);
      if (k.revokedAt !== null) return keyView(k);
      const revokedAt = this.ctx.clock.now();
      await r.apiKeys.update(k.id, { revokedAt });
      return keyView({ ...k, revokedAt });
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

  private expiryOf(input: CreateKeyInput): number | null {
    const now = this.ctx.clock.now();
    if (input.expiresAt !== undefined && input.expiresInSeconds !== undefined) {
      throw validationError('expiresAt', 'send either expiresAt or expiresInSeconds, not both');
    }
    if (input.expiresInSeconds !== undefined) return now + input.expiresInSeconds * 1000;
    if (input.expiresAt === undefined) return null;
    const at = parseIsoTime(input.expiresAt);
    if (at === undefined) throw validationError('expiresAt', 'must be an ISO 8601 time that exists, like 2030-01-31T00:00:00Z');
    if (at <= now) throw validationError('expiresAt', `is in the past (now is ${new Date(now).toISOString()}); give a future time`);
    return at;
  }
}
