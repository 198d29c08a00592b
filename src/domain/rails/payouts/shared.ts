/** What the payout modules share: their dependencies, the in-process marks, the refusal and the reversal. */
import { AppError } from '../../../core/errors.js';
import type { Repos } from '../../../store/store.js';
import type { RailTransaction } from '../../../store/repos/rails.js';
import type { DomainContext } from '../../platform/context.js';
import { post } from '../../wallets/ledger.js';
import type { WalletService } from '../../wallets/wallets.js';
import type { RailsSettings } from '../config.js';
import { recordEvent } from '../../platform/events.js';
import type { PayoutEventData } from 'agentpay-sdk/contract';
import type { RailRegistry } from '../registry.js';

export interface PayoutDeps {
  ctx: DomainContext;
  registry: RailRegistry;
  wallets: WalletService;
  settings: Pick<RailsSettings, 'priceBandBps'>;
  /** payouts whose first submission (the only one that may reverse them) is running now */
  firstSubmissions: Set<string>;
  /** payouts being handed to their rail by this process now (first or again) */
  submitting: Set<string>;
}

export const unavailable = (service: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError('TREASURY_UNAVAILABLE', `${message}; payouts on this rail are paused, retry later`, { service, ...details });

/**
 * submitted -> failed or returned, re-crediting the wallet with a new entry, once. Never
 * `failed` once the rail job has submitted it again (resubmittedAt): the rail may hold it.
 */
export async function reverse(deps: PayoutDeps, t: RailTransaction, state: 'failed' | 'returned', reason: string): Promise<boolean> {
  return deps.ctx.store.tx(async (r) => {
    if (state === 'failed' && (await r.railTransactions.get(t.id))?.resubmittedAt != null) return false;
    return reverseIn(deps, r, t, state, reason);
  });
}

/** `reverse` inside the caller's transaction; false (nothing written) if it was no longer submitted. */
export async function reverseIn(deps: PayoutDeps, r: Repos, t: RailTransaction, state: 'failed' | 'returned', reason: string): Promise<boolean> {
  const now = deps.ctx.clock.now();
  const patch = { state, reason, updatedAt: now, settledAt: now, ...(state === 'failed' ? { idempotencyKey: null } : {}) };
  if (!(await r.railTransactions.transition(t.id, ['submitted'], patch))) return false;
  await post(r, deps.ctx, {
    walletId: t.walletId, type: 'payout_return', amountMinor: t.usdAmountMinor!, currency: 'USD', reference: `payout:${t.id}`,
    memo: state === 'returned' ? `payout returned: ${reason}` : `payout not sent: ${reason}`,
  });
  await recordPayoutEvent(r, deps, t, state, reason);
  return true;
}

/**
 * `payout.confirmed`, `payout.failed` or `payout.returned` for the provider, in the caller's
 * transaction: the one that moves the payout to that state (and, failed or returned, re-credits it).
 */
export async function recordPayoutEvent(r: Repos, deps: Pick<PayoutDeps, 'ctx'>, t: RailTransaction, status: 'confirmed' | 'failed' | 'returned', reason: string | null): Promise<void> {
  const data: PayoutEventData = {
    payoutId: t.id, walletId: t.walletId, status, amountMinor: t.usdAmountMinor!.toString(), currency: 'USD', rail: t.rail ?? '',
    railAmountMinor: t.railAmountMinor.toString(), asset: t.railCurrency, destination: t.counterparty, externalRef: t.externalRef, reason,
  };
  await recordEvent(r, deps.ctx, t.tenantId, `payout.${status}`, data);
}
