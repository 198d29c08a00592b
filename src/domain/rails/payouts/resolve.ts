/** The operator's resolution of a payout its rail never resolved (POST /v1/payouts/:id/resolve). */
import type { ResolveOutcome } from 'agentpay-sdk/contract';
import { AppError, validationError, wrongKeyKind } from '../../../core/errors.js';
import type { RailTransaction } from '../../../store/repos/rails.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { OPERATOR_TENANT_ID } from '../../tenancy/tenants.js';
import { recordEvent } from '../../platform/events.js';
import { payoutView } from '../views.js';
import { recordPayoutEvent, reverseIn, type PayoutDeps } from './shared.js';

/** The rail's own record of a payout, as the operator's resolution checks it. */
type RailRecordState = 'submitted' | 'confirmed' | 'returned' | 'none' | 'unavailable';

/**
 * The operator closes out a payout its rail never resolved, having checked with the rail out
 * of band: `paid` (the money left: confirmed; the debit written at submission stands) or
 * `failed` (it did not: re-credited with a `payout_return` entry, as a refused submission is),
 * in one transaction with the reason and a `payout.resolved` event for the provider and the
 * operator. Refused (409) unless the payout is `submitted` and not being handed to its rail
 * by this process right now, and (RAIL_DISAGREES) when the rail's own record contradicts the
 * outcome: `failed` for a payout the rail paid would pay the provider twice, `paid` for one
 * it returned would keep the provider's money. A rail that cannot say leaves the operator's
 * word. The payout is re-read in the transaction, so against the rail job (or a second
 * operator) exactly one resolution wins; the other is refused and changes nothing.
 */
export async function resolvePayout(deps: PayoutDeps, p: Principal, id: string, input: { outcome: ResolveOutcome; reason: string }) {
  if (p.tenantKind !== 'operator') throw wrongKeyKind(['operator'], 'only the operator resolves a payout by hand');
  const reason = input.reason.trim();
  if (reason === '') throw validationError('reason', 'is required: say what the rail told you about this payout (who, when, its reference)');
  const t = await deps.ctx.store.read((r) => r.railTransactions.get(id));
  if (!t || t.kind !== 'payout') throw new AppError('NOT_FOUND', `payout ${id} not found`, { id });
  assertResolvable(deps, t);

  // the rail's word, outside any transaction (a network call)
  const rail = await railRecord(deps, t);
  const contradicts = input.outcome === 'failed' ? rail.state === 'confirmed' : rail.state === 'returned';
  if (contradicts) {
    const why = input.outcome === 'failed'
      ? `the rail reports payout ${id} paid (${rail.externalRef}); marking it failed would re-credit money the rail sent: resolve it as paid, or have the rail correct its record first`
      : `the rail reports payout ${id} returned (${rail.externalRef}): the money came back; resolve it as failed, or let the rail job re-credit it`;
    throw new AppError('RAIL_DISAGREES', why, { payoutId: id, outcome: input.outcome, railState: rail.state, externalRef: rail.externalRef ?? null });
  }

  return deps.ctx.store.tx(async (r) => {
    // re-read: the rail job (or another operator) may have resolved it since
    const current = (await r.railTransactions.get(id))!;
    assertResolvable(deps, current);
    const recorded = `resolved by the operator: ${reason}`;
    const now = deps.ctx.clock.now();
    const moved = input.outcome === 'failed'
      ? await reverseIn(deps, r, current, 'failed', recorded)
      : await r.railTransactions.transition(id, ['submitted'], { state: 'confirmed', reason: recorded, updatedAt: now, settledAt: now });
    if (!moved) throw notResolvable(id, (await r.railTransactions.get(id))!.state);
    // failed: reverseIn recorded payout.failed; paid: the confirmation is announced as the rail's would be
    if (input.outcome === 'paid') await recordPayoutEvent(r, deps, current, 'confirmed', recorded);
    const data = {
      payoutId: id, outcome: input.outcome, status: input.outcome === 'paid' ? 'confirmed' : 'failed',
      amountMinor: current.usdAmountMinor!.toString(), rail: current.rail, reason, railRecord: rail.state,
    };
    await recordEvent(r, deps.ctx, current.tenantId, 'payout.resolved', data);
    // the operator's copy is the audit trail: which provider, and which key decided
    await recordEvent(r, deps.ctx, OPERATOR_TENANT_ID, 'payout.resolved', { ...data, providerId: current.tenantId, resolvedBy: p.keyId });
    return payoutView((await r.railTransactions.get(id))!);
  });
}

function notResolvable(id: string, status: RailTransaction['state']): AppError {
  return new AppError('CONFLICT', `payout ${id} is already ${status}; only a submitted payout is resolved, once`, { payoutId: id, status });
}

/** Only a submitted payout that this process is not handing to its rail right now. */
function assertResolvable(deps: PayoutDeps, t: RailTransaction): void {
  if (t.state !== 'submitted') throw notResolvable(t.id, t.state);
  if (deps.firstSubmissions.has(t.id) || deps.submitting.has(t.id)) {
    throw new AppError('CONFLICT', `payout ${t.id} is being submitted to its rail right now; retry in a moment`, { payoutId: t.id, status: t.state });
  }
}

/** The rail's record of the payout by its id: its state, `none`, or `unavailable` when the rail cannot say. */
async function railRecord(deps: PayoutDeps, t: RailTransaction): Promise<{ state: RailRecordState; externalRef?: string }> {
  const rail = deps.registry.find(t.treasuryProviderId)?.payouts;
  if (!rail) return { state: 'unavailable' };
  try {
    const rec = await rail.lookup(t.id);
    return rec ? { state: rec.state, externalRef: rec.externalRef } : { state: 'none' };
  } catch {
    return { state: 'unavailable' };
  }
}
