/**
 * What the fleet tests share: an instance of the gateway in a process of its own (instance.mjs), and
 * the sellers and capabilities they write straight into the shared PostgreSQL database.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../src/core/clock.js';
import { randomIds } from '../../src/core/ids.js';
import { issueKey } from '../../src/domain/tenancy/api-keys.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import type { DevCredentials } from '../../src/gateway/dev-credentials.js';
import type { Store } from '../../src/store/store.js';

const INSTANCE = join(dirname(fileURLToPath(import.meta.url)), 'instance.mjs');

export interface FleetInstance {
  child: ChildProcess;
  baseUrl: string;
  pid: number;
  caCertPath: string;
  /** the dev credentials, from the instance started `withCreds` */
  creds?: DevCredentials;
}

export interface InstanceOptions {
  dataDir: string;
  database: string;
  /** the sweeper's and the rail job's tick */
  tickMs: number;
  /** make (or read) the dev credentials and report them */
  withCreds: boolean;
  env?: NodeJS.ProcessEnv;
  /** each run of a duty (the sweeper, the rail job), as the instance reports it */
  onDuty?: (duty: string, pid: number) => void;
}

/** Starts one instance; resolves once it serves. */
export function startInstance(o: InstanceOptions): Promise<FleetInstance> {
  const child = fork(INSTANCE, [o.dataDir, o.database, String(o.tickMs), o.withCreds ? '1' : '0'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(o.env ? { env: o.env } : {}),
  });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { type: string; duty?: string; pid?: number; baseUrl?: string; caCertPath?: string; creds?: DevCredentials }) => {
      if (m.type === 'duty') o.onDuty?.(m.duty!, m.pid!);
      if (m.type === 'ready') resolve({ child, baseUrl: m.baseUrl!, pid: child.pid!, caCertPath: m.caCertPath!, ...(m.creds ? { creds: m.creds } : {}) });
    });
    child.once('exit', (code) => reject(new Error(`instance exited with ${code} before it was ready`)));
  });
}

/** A tenant with an API key; a provider is made active and verified, so its listings can be bought. */
export async function newTenant(store: Store, kind: 'provider' | 'workspace', name: string): Promise<{ id: string; walletId: string | null; apiKey: string }> {
  const ctx = { store, clock: systemClock, ids: randomIds };
  return store.tx(async (r) => {
    const t = await createTenant(r, ctx, { kind, name });
    if (kind === 'provider') await r.tenants.update(t.id, { status: 'active', verified: true, updatedAt: Date.now() });
    return { id: t.id, walletId: t.settlementWalletId ?? null, apiKey: (await issueKey(r, ctx, t)).key };
  });
}

/** An active REST capability of the provider at `price` minor units; its id. */
export async function newCapability(store: Store, providerId: string, price: bigint, name = 'fleet capability'): Promise<string> {
  return store.tx(async (r) => {
    const capId = randomIds.next('capability');
    const versionId = randomIds.next('capabilityVersion');
    const now = Date.now();
    await r.capabilities.insert({
      id: capId, providerId, name, description: 'for fleet tests', protocol: 'rest', priceMinor: price, currency: 'USD', category: 'test',
      tags: [], schema: null, latencyP50Ms: null, toolName: null, metering: null, status: 'active', currentVersionId: versionId, createdAt: now, updatedAt: now, deprecatedAt: null,
    });
    await r.capabilityVersions.insert({ id: versionId, capabilityId: capId, version: '1', endpoint: 'https://seller.example/x', address: { kind: 'url', url: 'https://seller.example/x' }, schema: null, hash: 'sha256:test', createdAt: now });
    return capId;
  });
}
