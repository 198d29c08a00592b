/** The rail job's side of payouts: submitting again a payout whose outcome is unknown, and following submitted ones to confirmed or returned. */
import type { RailTransaction } from '../../../store/repos/rails.js';
import { submitPayout } from './create.js';
import { recordPayoutEvent, reverse, type PayoutDeps } from './shared.js';

/**
 * Takes a payout whose first submission's outcome is unknown for submitting again: only one
 * still submitted without a rail reference (re-read: the caller's copy may be stale), and not
 * while its first submission runs in this process. Marks it (resubmittedAt) in the same
 * transaction, so that first submission, if the rail then refuses it, no longer reverses it.
 */
export async function claimResubmission(deps: PayoutDeps, t: RailTransaction): Promise<RailTransaction | undefined> {
  if (deps.firstSubmissions.has(t.id)) return undefined;
  return deps.ctx.store.tx(async (r) => {
    const current = await r.railTransactions.get(t.id);
    if (!current || current.state !== 'submitted' || current.externalRef !== null) return undefined;
    if (current.resubmittedAt !== null) return current;
    const resubmittedAt = deps.ctx.clock.now();
    await r.railTransactions.update(t.id, { resubmittedAt });
    return { ...current, resubmittedAt };
  });
}

/** Follows one submitted payout at its rail: confirmed, returned, or still on its way. */
export async function followPayout(deps: PayoutDeps, t: RailTransaction): Promise<RailTransaction['state']> {
  if (t.state !== 'submitted') return t.state;
  if (t.externalRef === null) {
    // outcome unknown so far: submit again; refused or failing, it stays submitted and is retried
    const claimed = await claimResubmission(deps, t);
    if (!claimed) return (await deps.ctx.store.read((r) => r.railTransactions.get(t.id)))?.state ?? t.state;
    await submitPayout(deps, claimed, 'again').catch(() => undefined);
    return 'submitted';
  }
  const rec = await deps.registry.find(t.treasuryProviderId)?.payouts?.status(t.externalRef);
  if (!rec || rec.state === 'submitted') return 'submitted';
  if (rec.state === 'returned') {
    await reverse(deps, t, 'returned', rec.reason ?? 'returned by the rail');
    return 'returned';
  }
  const now = deps.ctx.clock.now();
  await deps.ctx.store.tx(async (r) => {
    // the event only with the move: a payout another process confirmed meanwhile is announced once
    if (await r.railTransactions.transition(t.id, ['submitted'], { state: 'confirmed', updatedAt: now, settledAt: now })) await recordPayoutEvent(r, deps, t, 'confirmed', null);
  });
  return 'confirmed';
}

/**
 * Follows every submitted payout, a page at a time (so payouts a rail never resolves cannot
 * keep newer ones from being followed); returns how many changed state.
 */
export async function followAllPayouts(deps: PayoutDeps, pageSize = 500): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const page = await deps.ctx.store.read((r) => r.railTransactions.listByState('payout', ['submitted'], pageSize, after));
    for (const t of page) if ((await followPayout(deps, t)) !== 'submitted') n += 1;
    if (page.length < pageSize) return n;
    after = page.at(-1)!.id;
  }
}
