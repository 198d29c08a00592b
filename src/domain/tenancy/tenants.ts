/** Creating tenants: a provider comes with its settlement wallet. */
import type { Repos } from '../../store/store.js';
import type { Tenant } from '../../store/repos/tenancy.js';
import type { DomainContext } from '../platform/context.js';
import { newWalletRow } from '../wallets/wallets.js';

export const OPERATOR_TENANT_ID = 'opr_platform';
export const PLATFORM_REVENUE_WALLET_ID = 'wal_platform_revenue';

export interface NewTenant {
  kind: 'workspace' | 'provider';
  name: string;
  email?: string | null;
  website?: string | null;
}

export async function createTenant(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids'>, input: NewTenant): Promise<Tenant> {
  const now = ctx.clock.now();
  const id = ctx.ids.next(input.kind === 'provider' ? 'provider' : 'workspace');
  const settlementWalletId = input.kind === 'provider' ? ctx.ids.next('wallet') : null;
  const tenant: Tenant = {
    id,
    kind: input.kind,
    name: input.name,
    email: input.email ?? null,
    website: input.website ?? null,
    status: input.kind === 'provider' ? 'pending_verification' : 'active',
    verified: false,
    settlementWalletId,
    createdAt: now,
    updatedAt: now,
  };
  await r.tenants.insert(tenant);
  if (settlementWalletId) {
    await r.wallets.insert(newWalletRow({ id: settlementWalletId, tenantId: id, ownerType: 'settlement', ownerId: id, publicKeyPem: null }, now));
  }
  return tenant;
}

/** The platform operator and its fee revenue wallet exist in every database. */
export async function ensurePlatform(r: Repos, ctx: Pick<DomainContext, 'clock'>): Promise<Tenant> {
  const existing = await r.tenants.get(OPERATOR_TENANT_ID);
  if (existing) return existing;
  const now = ctx.clock.now();
  const op: Tenant = {
    id: OPERATOR_TENANT_ID, kind: 'operator', name: 'platform operator', email: null, website: null,
    status: 'active', verified: true, settlementWalletId: PLATFORM_REVENUE_WALLET_ID, createdAt: now, updatedAt: now,
  };
  await r.tenants.insert(op);
  await r.wallets.insert(newWalletRow({ id: PLATFORM_REVENUE_WALLET_ID, tenantId: OPERATOR_TENANT_ID, ownerType: 'platform', ownerId: 'platform-revenue', publicKeyPem: null }, now));
  return op;
}
