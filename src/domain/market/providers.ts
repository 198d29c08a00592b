/**
 * Providers (sellers) as buyers, sellers and the operator see them, the verification
 * workflow, and the operator's decisions.
 *
 * Visibility: a provider key sees only itself; a workspace key sees verified, active sellers;
 * the operator sees every provider. A provider the caller may not see is 404 PROVIDER_NOT_FOUND.
 * The `verification` request is shown only to the provider itself and to the operator.
 *
 * Status transitions (the specification leaves them to the project):
 *   pending_verification --verify approved--> active
 *   pending_verification | active --suspend--> suspended
 *   suspended --unsuspend--> active (if verified) or pending_verification (if not)
 *   suspended --verify approved--> suspended (verified; active once unsuspended)
 * Only active, verified sellers' capabilities are discoverable, so suspension or a missing
 * verification takes them out of discovery at once.
 */
import { AppError, notFound, wrongKeyKind } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { Tenant } from '../../store/repos/tenancy.js';
import type { VerificationRequest } from '../../store/repos/market.js';
import type { DomainContext } from '../platform/context.js';
import type { Principal } from '../tenancy/api-keys.js';
import { reputations } from './reputation.js';

export type VerificationStatus = VerificationRequest['status'];
export type Decision = 'approved' | 'denied';

/** The seller as discovery and capability records show it. */
export function providerSummary(t: Tenant, reputation: number) {
  return { id: t.id, name: t.name, verified: t.verified, reputation };
}

export function verificationView(v: VerificationRequest) {
  return {
    id: v.id,
    status: v.status,
    note: v.note,
    contact: v.contact,
    reason: v.reason,
    requestedAt: iso(v.requestedAt),
    updatedAt: iso(v.updatedAt),
    decidedAt: v.decidedAt === null ? null : iso(v.decidedAt),
  };
}

/**
 * `verification` is left out when undefined (a caller who may not see it) and null when the
 * provider has never asked.
 */
export function providerView(t: Tenant, reputation: number, verification?: VerificationRequest | null) {
  return {
    id: t.id,
    name: t.name,
    verified: t.verified,
    status: t.status,
    reputation,
    website: t.website,
    ...(verification === undefined ? {} : { verification: verification ? verificationView(verification) : null }),
  };
}

export type ProviderView = ReturnType<typeof providerView>;

function canSee(p: Principal, t: Tenant): boolean {
  if (t.kind !== 'provider') return false;
  if (p.tenantKind === 'operator' || p.tenantId === t.id) return true;
  return p.tenantKind === 'workspace' && t.verified && t.status === 'active';
}

const seesVerification = (p: Principal, t: Tenant) => p.tenantKind === 'operator' || p.tenantId === t.id;

export class ProviderService {
  constructor(private ctx: DomainContext) {}

  private async views(r: Repos, p: Principal, list: Tenant[]): Promise<ProviderView[]> {
    const reps = await reputations(r, list.map((t) => t.id));
    const out: ProviderView[] = [];
    for (const t of list) {
      const verification = seesVerification(p, t) ? ((await r.verificationRequests.latestForProvider(t.id)) ?? null) : undefined;
      out.push(providerView(t, reps.get(t.id)!, verification));
    }
    return out;
  }

  private async visible(r: Repos, p: Principal, id: string): Promise<Tenant> {
    const t = await r.tenants.get(id);
    if (!t || !canSee(p, t)) throw notFound('PROVIDER_NOT_FOUND', 'provider', id);
    return t;
  }

  /** For the operator's decisions: any provider, 404 for anything else. */
  private async anyProvider(r: Repos, id: string): Promise<Tenant> {
    const t = await r.tenants.get(id);
    if (!t || t.kind !== 'provider') throw notFound('PROVIDER_NOT_FOUND', 'provider', id);
    return t;
  }

  private requireOperator(p: Principal): void {
    if (p.tenantKind !== 'operator') throw wrongKeyKind(['operator'], 'only the operator decides verification and suspension');
  }

  /**
   * The providers the caller may see, oldest first. `verification` filters by the status of
   * each provider's latest request (the operator's queue, oldest request first).
   */
  async list(p: Principal, filter: { verification?: VerificationStatus } = {}): Promise<ProviderView[]> {
    if (filter.verification !== undefined && p.tenantKind !== 'operator') {
      throw wrongKeyKind(['operator'], 'only the operator can filter providers by verification status');
    }
    return this.ctx.store.read(async (r) => {
      let list: Tenant[];
      if (p.tenantKind === 'provider') {
        const self = await r.tenants.get(p.tenantId);
        list = self ? [self] : [];
      } else {
        list = (await r.tenants.listByKind('provider')).filter((t) => canSee(p, t));
        list.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      }
      const views = await this.views(r, p, list);
      if (filter.verification === undefined) return views;
      return views
        .filter((v) => v.verification?.status === filter.verification)
        .sort((a, b) => a.verification!.requestedAt.localeCompare(b.verification!.requestedAt) || (a.id < b.id ? -1 : 1));
    });
  }

  async get(p: Principal, id: string): Promise<ProviderView> {
    return this.ctx.store.read(async (r) => (await this.views(r, p, [await this.visible(r, p, id)]))[0]!);
  }

  /**
   * A provider asks to be verified. None or denied: a new `requested` request. Already
   * requested: the note and contact are updated and the queue place (requestedAt) is kept.
   * Verified: 409 CONFLICT.
   */
  async requestVerification(p: Principal, id: string, body: { note?: string; contact?: string }): Promise<ProviderView> {
    // refused before any lookup, so nothing about another tenant is disclosed
    if (p.tenantKind !== 'provider' || p.tenantId !== id) throw wrongKeyKind(['provider'], 'only the provider itself can request its verification', { ownerId: id });
    return this.ctx.store.tx(async (r) => {
      const t = await this.anyProvider(r, id);
      const latest = await r.verificationRequests.latestForProvider(id);
      if (t.verified || latest?.status === 'approved') {
        throw new AppError('CONFLICT', `provider ${id} is already verified; there is nothing to request`, { id });
      }
      const now = this.ctx.clock.now();
      if (latest?.status === 'requested') {
        const patch = {
          ...(body.note !== undefined ? { note: body.note } : {}),
          ...(body.contact !== undefined ? { contact: body.contact } : {}),
          updatedAt: now,
        };
        await r.verificationRequests.update(latest.id, patch);
      } else {
        await r.verificationRequests.insert({
          id: this.ctx.ids.next('verificationRequest'),
          providerId: id,
          status: 'requested',
          note: body.note ?? null,
          contact: body.contact ?? null,
          reason: null,
          requestedAt: now,
          updatedAt: now,
          decidedAt: null,
        });
      }
      return (await this.views(r, p, [t]))[0]!;
    });
  }

  /**
   * The operator decides the open request (or, if there is none, records a decision of its own).
   * Approved: verified, and active unless suspended. Denied: stays unverified; the reason is
   * shown to the provider, who may ask again. Denying a verified provider is 409: suspend it.
   */
  async decide(p: Principal, id: string, input: { decision: Decision; reason?: string }): Promise<ProviderView> {
    this.requireOperator(p);
    return this.ctx.store.tx(async (r) => {
      let t = await this.anyProvider(r, id);
      const latest = await r.verificationRequests.latestForProvider(id);
      const open = latest?.status === 'requested' ? latest : undefined;
      const now = this.ctx.clock.now();
      if (input.decision === 'denied' && t.verified) {
        throw new AppError('CONFLICT', `provider ${id} is verified; suspend it to take it out of discovery`, { id });
      }
      const alreadyApproved = input.decision === 'approved' && t.verified && !open;
      if (!alreadyApproved) {
        const decided = { status: input.decision, reason: input.reason ?? null, decidedAt: now, updatedAt: now };
        if (open) await r.verificationRequests.update(open.id, decided);
        else await r.verificationRequests.insert({ id: this.ctx.ids.next('verificationRequest'), providerId: id, note: null, contact: null, requestedAt: now, ...decided });
      }
      if (input.decision === 'approved' && (!t.verified || t.status === 'pending_verification')) {
        const update = { verified: true, status: t.status === 'suspended' ? 'suspended' : 'active', updatedAt: now };
        await r.tenants.update(id, update);
        t = { ...t, ...update };
      }
      return (await this.views(r, p, [t]))[0]!;
    });
  }

  /** Suspending and unsuspending are idempotent; unsuspended means active if verified, else pending. */
  async setSuspended(p: Principal, id: string, suspended: boolean): Promise<ProviderView> {
    this.requireOperator(p);
    return this.ctx.store.tx(async (r) => {
      let t = await this.anyProvider(r, id);
      const status = suspended ? 'suspended' : t.status !== 'suspended' ? t.status : t.verified ? 'active' : 'pending_verification';
      if (status !== t.status) {
        const update = { status, updatedAt: this.ctx.clock.now() };
        await r.tenants.update(id, update);
        t = { ...t, ...update };
      }
      return (await this.views(r, p, [t]))[0]!;
    });
  }
}
