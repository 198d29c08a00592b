/** The `agentpay keys` commands' work, and how a person sees keys. */
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { ApiKeyView, CreateKeyInput, CreatedApiKey, RevokedKeys } from 'agentpay-sdk/types';
import { usageError } from './errors/index.js';
import { renderFields, renderTable } from './output.js';

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/** "30d", "12h", "90m", "2w", "3600s" → seconds. */
export function parseDuration(value: string, flag = '--expires-in'): number {
  const m = /^([0-9]+)([smhdw])$/.exec(value.trim());
  if (!m) throw usageError(`${flag}: expected a number and a unit (s, m, h, d or w), e.g. 30d; got ${JSON.stringify(value)}`);
  const n = Number(m[1]);
  if (n === 0) throw usageError(`${flag}: must be more than zero, e.g. 30d; got ${JSON.stringify(value)}`);
  return n * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
}

/** "a,b, c" → ["a","b","c"]; unknown scopes are the gateway's to refuse (it names them). */
export function parseScopes(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) throw usageError('--scopes: list at least one scope, e.g. --scopes wallets:read,receipts:read');
  return scopes;
}

export interface CreateKeyOptions {
  name?: string | undefined;
  scopes?: string | undefined;
  expiresIn?: string | undefined;
  forAgent?: boolean | undefined;
}

/** The request for a new key from the flags; checked before any gateway is looked for. */
export function createKeyInput(opts: CreateKeyOptions): CreateKeyInput {
  // `!== undefined`, not truthiness: an empty --scopes or --expires-in is refused, never read as
  // "not given" (which would give the new key every scope of the caller, or no expiry)
  if (opts.forAgent && opts.scopes !== undefined) throw usageError('pass either --for-agent or --scopes, not both');
  return {
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.scopes !== undefined ? { scopes: parseScopes(opts.scopes) } : {}),
    ...(opts.forAgent ? { preset: 'agent' as const } : {}),
    ...(opts.expiresIn !== undefined ? { expiresInSeconds: parseDuration(opts.expiresIn) } : {}),
  };
}

export async function createKey(client: AgentpayClient, input: CreateKeyInput): Promise<CreatedApiKey> {
  return (await client.keys.create(input)).apiKey;
}

export function createdKeyText(k: CreatedApiKey): string {
  return renderFields([
    ['key', k.key],
    ['id', k.id],
    ['name', k.name],
    ['scopes', k.scopes.join(' ')],
    ['expires', k.expiresAt ?? 'never'],
    ['made by', k.parentKeyId],
  ]);
}

export function keyState(k: ApiKeyView, now = Date.now()): string {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return 'expired';
  return 'active';
}

export function keyTable(keys: readonly ApiKeyView[]): string {
  return renderTable(keys, [
    { header: 'ID', get: (k) => k.id },
    { header: 'NAME', get: (k) => k.name },
    { header: 'PREFIX', get: (k) => k.prefix },
    { header: 'STATE', get: (k) => keyState(k) },
    { header: 'CREATED', get: (k) => k.createdAt },
    { header: 'EXPIRES', get: (k) => k.expiresAt ?? 'never' },
    { header: 'MADE BY', get: (k) => k.parentKeyId },
    { header: 'LAST USED', get: (k) => k.lastUsedAt },
    { header: 'SCOPES', get: (k) => k.scopes.join(' ') },
  ], '(no keys)');
}

export function keyFields(k: ApiKeyView): string {
  return renderFields([
    ['id', k.id],
    ['name', k.name],
    ['prefix', k.prefix],
    ['state', keyState(k)],
    ['scopes', k.scopes.join(' ')],
    ['created', k.createdAt],
    ['expires', k.expiresAt ?? 'never'],
    ['made by', k.parentKeyId],
    ['revoked', k.revokedAt],
    ['last used', k.lastUsedAt],
  ]);
}

/** What `keys revoke` prints: how many keys the call revoked (the key and those made from it), then the key. */
export function revokedText(res: RevokedKeys): string {
  const others = res.revokedKeyIds.filter((id) => id !== res.key.id);
  const head =
    res.revokedCount === 0
      ? 'Already revoked; no key made from it was still active.'
      : `Revoked ${res.revokedCount} key${res.revokedCount === 1 ? '' : 's'}${others.length > 0 ? `: this one and ${others.length} made from it (${others.join(', ')})` : ''}.`;
  return `${head}
${keyFields(res.key)}`;
}
