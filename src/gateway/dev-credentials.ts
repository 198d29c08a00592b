/**
 * First start of a sandbox gateway: an operator key, one workspace and one verified
 * provider, their keys kept in DATA_DIR/dev-credentials.json (mode 0600). Later starts
 * reuse the file, replacing a key that was revoked or expired meanwhile. The database
 * holds only hashes of these keys.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/files.js';
import { isAppError } from '../core/errors.js';
import { authenticate, issueKey } from '../domain/tenancy/api-keys.js';
import type { DomainContext } from '../domain/platform/context.js';
import { createTenant, OPERATOR_TENANT_ID } from '../domain/tenancy/tenants.js';
import type { Tenant } from '../store/repos/tenancy.js';
import type { Repos } from '../store/store.js';

export interface DevCredentials {
  operatorKey: string;
  workspace: { id: string; apiKey: string };
  provider: { id: string; apiKey: string; walletId: string };
}

export const credentialsPath = (dataDir: string) => join(dataDir, 'dev-credentials.json');

/**
 * dev-credentials.json is there but cannot be used: unreadable (`readError`, e.g. EACCES), or
 * damaged (not JSON, missing keys), whose keys are lost: the gateway makes new ones once the
 * file is gone. `path` names the file; the CLI adds what to do.
 */
export class DevCredentialsError extends Error {
  readonly code = 'DEV_CREDENTIALS_INVALID';
  readonly path: string;
  readonly readError: string | undefined;

  constructor(path: string, problem: string, readError?: string) {
    super(`${path} ${problem}`);
    this.name = 'DevCredentialsError';
    this.path = path;
    this.readError = readError;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isKey = (v: unknown) => typeof v === 'string' && v.length > 0;

/** The dev credentials of a data dir; undefined if it has none; DevCredentialsError if they are damaged. */
export function readDevCredentials(dataDir: string): DevCredentials | undefined {
  const p = credentialsPath(dataDir);
  let text: string;
  try {
    text = readFileSync(p, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new DevCredentialsError(p, `cannot be read (${code ?? (e as Error).message})`, code ?? 'error');
  }
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch (e) {
    throw new DevCredentialsError(p, `is not valid JSON (${text.trim() ? (e as Error).message : 'the file is empty'})`);
  }
  const ok = isObject(c) && isKey(c.operatorKey)
    && isObject(c.workspace) && isKey(c.workspace.id) && isKey(c.workspace.apiKey)
    && isObject(c.provider) && isKey(c.provider.id) && isKey(c.provider.apiKey) && isKey(c.provider.walletId);
  if (!ok) throw new DevCredentialsError(p, 'lacks the dev keys: it must hold operatorKey, workspace {id, apiKey} and provider {id, apiKey, walletId}');
  return c as unknown as DevCredentials;
}

/**
 * The dev credentials of a sandbox gateway, made on the first start and reused after. A saved
 * key that no longer authenticates (revoked or expired, say by `agentpay keys revoke`) is
 * replaced by a new key of the same tenant, so the ready line never hands out a key the
 * gateway refuses; the file is rewritten (atomically, 0600) only when something changed.
 */
export async function ensureDevCredentials(ctx: DomainContext, dataDir: string): Promise<DevCredentials> {
  const existing = readDevCredentials(dataDir);
  const { creds, changed } = await ctx.store.tx(async (r) => {
    // the file must still match the database it sits beside
    const ws = existing && (await r.tenants.get(existing.workspace.id));
    const prv = existing && (await r.tenants.get(existing.provider.id));
    if (!existing || !ws || !prv) return { creds: await makeDevCredentials(r, ctx), changed: true };
    const renewed: DevCredentials = {
      operatorKey: await workingKey(r, ctx, existing.operatorKey, { id: OPERATOR_TENANT_ID, kind: 'operator' }, 'dev operator'),
      workspace: { id: ws.id, apiKey: await workingKey(r, ctx, existing.workspace.apiKey, ws, 'dev workspace') },
      provider: { id: prv.id, apiKey: await workingKey(r, ctx, existing.provider.apiKey, prv, 'dev provider'), walletId: prv.settlementWalletId ?? existing.provider.walletId },
    };
    return { creds: renewed, changed: JSON.stringify(renewed) !== JSON.stringify(existing) };
  });
  if (changed) writeFileAtomic(credentialsPath(dataDir), JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  return creds;
}

/** `key` if it still authenticates as `tenant`, else a new key of that tenant. */
async function workingKey(r: Repos, ctx: DomainContext, key: string, tenant: Pick<Tenant, 'id' | 'kind'>, name: string): Promise<string> {
  try {
    if ((await authenticate(r, ctx.clock, key)).tenantId === tenant.id) return key;
  } catch (e) {
    if (!isAppError(e) || e.code !== 'UNAUTHORIZED') throw e;
  }
  return (await issueKey(r, ctx, tenant, { name })).key;
}

/** An operator key, a workspace and a verified provider, with their keys. */
async function makeDevCredentials(r: Repos, ctx: DomainContext): Promise<DevCredentials> {
  const operator = await issueKey(r, ctx, { id: OPERATOR_TENANT_ID, kind: 'operator' }, { name: 'dev operator' });
  const ws = await createTenant(r, ctx, { kind: 'workspace', name: 'Dev Workspace', email: 'dev-workspace@localhost' });
  const wsKey = await issueKey(r, ctx, ws, { name: 'dev workspace' });
  const prv = await createTenant(r, ctx, { kind: 'provider', name: 'Dev Provider', email: 'dev-provider@localhost', website: 'https://localhost' });
  await r.tenants.update(prv.id, { status: 'active', verified: true, updatedAt: ctx.clock.now() });
  const prvKey = await issueKey(r, ctx, prv, { name: 'dev provider' });
  return {
    operatorKey: operator.key,
    workspace: { id: ws.id, apiKey: wsKey.key },
    provider: { id: prv.id, apiKey: prvKey.key, walletId: prv.settlementWalletId! },
  };
}
