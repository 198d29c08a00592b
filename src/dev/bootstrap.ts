/**
 * First start of a sandbox gateway: an operator key, one workspace and one verified
 * provider, their keys kept in DATA_DIR/dev-credentials.json (mode 0600). Later starts
 * reuse the file. The database holds only hashes of these keys.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/files.js';
import { issueKey } from '../domain/api-keys.js';
import type { DomainContext } from '../domain/context.js';
import { createTenant, OPERATOR_TENANT_ID } from '../domain/tenants.js';

export interface DevCredentials {
  operatorKey: string;
  workspace: { id: string; apiKey: string };
  provider: { id: string; apiKey: string; walletId: string };
}

export const credentialsPath = (dataDir: string) => join(dataDir, 'dev-credentials.json');

export function readDevCredentials(dataDir: string): DevCredentials | undefined {
  const p = credentialsPath(dataDir);
  if (!existsSync(p)) return undefined;
  return JSON.parse(readFileSync(p, 'utf8')) as DevCredentials;
}

export async function ensureDevCredentials(ctx: DomainContext, dataDir: string): Promise<DevCredentials> {
  const existing = readDevCredentials(dataDir);
  if (existing) {
    // the file must still match the database it sits beside
    const ok = await ctx.store.read(async (r) => Boolean((await r.tenants.get(existing.workspace.id)) && (await r.tenants.get(existing.provider.id))));
    if (ok) return existing;
  }
  const creds = await ctx.store.tx(async (r) => {
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
    } satisfies DevCredentials;
  });
  writeFileAtomic(credentialsPath(dataDir), JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  return creds;
}
