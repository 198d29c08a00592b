/**
 * The seller-for-wallet breaker: three provider errors in a row pause that seller
 * for that wallet until the wallet's owner resumes it. Client errors never count; a
 * success resets the count (the pause itself is lifted only by a resume).
 */
import { notFound } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { Breaker } from '../../store/repos/payments.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { recordEvent } from '../platform/events.js';
import type { WalletService } from '../wallets/wallets.js';
import { BREAKER_THRESHOLD } from './config.js';

/** Counts a provider error; the one that pauses the seller is announced to the wallet's workspace (wallet_provider.paused). */
export async function recordProviderFailure(r: Repos, ctx: Pick<DomainContext, 'ids' | 'clock' | 'observer'>, walletId: string, providerId: string): Promise<Breaker> {
  const b = await r.breakers.get(walletId, providerId);
  const consecutiveFailures = (b?.consecutiveFailures ?? 0) + 1;
  const next: Breaker = { walletId, providerId, consecutiveFailures, paused: (b?.paused ?? false) || consecutiveFailures >= BREAKER_THRESHOLD, updatedAt: ctx.clock.now() };
  await r.breakers.put(next);
  if (next.paused && !b?.paused) {
    const wallet = await r.wallets.get(walletId);
    if (wallet) await recordEvent(r, ctx, wallet.tenantId, 'wallet_provider.paused', { walletId, providerId, consecutiveFailures });
  }
  return next;
}

export function recordSuccess(r: Repos, now: number, walletId: string, providerId: string): Promise<void> {
  return r.breakers.clearFailures(walletId, providerId, now);
}

export function breakerView(walletId: string, providerId: string, b: Breaker | undefined) {
  return { walletId, providerId, paused: b?.paused ?? false, consecutiveFailures: b?.consecutiveFailures ?? 0 };
}

/** The wallet owner's view and reset of a breaker (routes under /v1/wallets/:id). */
export class BreakerService {
  constructor(private ctx: DomainContext, private wallets: WalletService) {}

  private async provider(r: Repos, providerId: string): Promise<void> {
    const t = await r.tenants.get(providerId);
    if (!t || t.kind !== 'provider') throw notFound('PROVIDER_NOT_FOUND', 'provider', providerId);
  }

  get(p: Principal, walletId: string, providerId: string) {
    return this.ctx.store.read(async (r) => {
      const w = await this.wallets.ownedWallet(r, p, walletId);
      await this.provider(r, providerId);
      return breakerView(w.id, providerId, await r.breakers.get(w.id, providerId));
    });
  }

  resume(p: Principal, walletId: string, providerId: string) {
    return this.ctx.store.tx(async (r) => {
      const w = await this.wallets.ownedWallet(r, p, walletId);
      await this.provider(r, providerId);
      const b = await r.breakers.get(w.id, providerId);
      if (b && (b.paused || b.consecutiveFailures !== 0)) {
        await r.breakers.put({ ...b, paused: false, consecutiveFailures: 0, updatedAt: this.ctx.clock.now() });
      }
      return { ok: true as const, paused: false as const };
    });
  }
}
