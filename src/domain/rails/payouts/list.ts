/** Reading payouts: one by id (GET /v1/payouts/:id) and pages of them (GET /v1/payouts). */
import type { PayoutStatus } from 'agentpay-sdk/contract';
import { AppError, validationError, wrongKeyKind } from '../../../core/errors.js';
import { parseIsoTime } from '../../../core/clock.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { payoutView } from '../views.js';
import type { PayoutDeps } from './shared.js';

/** GET /v1/payouts: a page, optionally only payouts in one status, submitted before an ISO time. */
export interface PayoutListInput {
  limit?: number;
  after?: string;
  status?: PayoutStatus;
  submittedBefore?: string;
}

export async function getPayout(deps: PayoutDeps, p: Principal, id: string) {
  return deps.ctx.store.read(async (r) => {
    const t = await r.railTransactions.get(id);
    if (!t || t.kind !== 'payout' || (t.tenantId !== p.tenantId && p.tenantKind !== 'operator')) throw new AppError('NOT_FOUND', `payout ${id} not found`, { id });
    return payoutView(t);
  });
}

/**
 * Payouts, newest first: a provider's own, or, for the operator, every provider's (to find the
 * stuck ones: `status=submitted`, `submittedBefore` a day ago). `submittedBefore` is an ISO
 * time; a payout is submitted when it is created (debited and handed to its rail). `after` is
 * a payout the caller may see, whatever the filters: pages follow each other by position, so a
 * payout resolved between two pages does not break the paging.
 */
export async function listPayouts(deps: PayoutDeps, p: Principal, q: PayoutListInput) {
  if (p.tenantKind !== 'provider' && p.tenantKind !== 'operator') {
    throw wrongKeyKind(['provider', 'operator'], 'payouts are listed with a provider key (its own) or the operator key (every provider\'s)');
  }
  const limit = q.limit ?? 50;
  let createdBefore: number | undefined;
  if (q.submittedBefore !== undefined) {
    createdBefore = parseIsoTime(q.submittedBefore);
    if (createdBefore === undefined) {
      throw validationError('submittedBefore', 'must be an ISO 8601 time that exists, like 2026-11-20T00:00:00Z', { location: 'querystring' });
    }
  }
  const everyProvider = p.tenantKind === 'operator';
  return deps.ctx.store.read(async (r) => {
    if (q.after !== undefined) {
      const at = await r.railTransactions.get(q.after);
      if (!at || at.kind !== 'payout' || (!everyProvider && at.tenantId !== p.tenantId)) {
        const what = everyProvider ? 'a payout' : 'a payout of yours';
        throw new AppError('INVALID_CURSOR', `after: ${q.after} is not ${what}; pass a nextCursor you were given`, { field: 'after' });
      }
    }
    const rows = await r.railTransactions.listPayouts({
      limit,
      ...(everyProvider ? {} : { tenantId: p.tenantId }),
      ...(q.status !== undefined ? { state: q.status } : {}),
      ...(createdBefore !== undefined ? { createdBefore } : {}),
      ...(q.after !== undefined ? { before: q.after } : {}),
    });
    return { payouts: rows.map(payoutView), ...(rows.length === limit ? { nextCursor: rows.at(-1)!.id } : {}) };
  });
}
