/**
 * Payout destinations: where a provider's payouts go, one per asset and chain (a USD
 * bank account reference serves bank_transfer and ach; a USDC address on Base serves
 * usdc_base). The first registration for an asset is usable at once (the spec); a change
 * freezes payouts on that asset's rails for the cooldown (24 h), whatever the address, and
 * raises a `payout_destination.changed` event: a stolen key cannot redirect money unnoticed.
 * A first destination for an asset when the provider already has one for another asset
 * raises the same event (money that went to its bank could now go to a new USDC address),
 * without a freeze.
 * The same address in another letter case is not a change. Bank destinations are
 * external account references (`ext_…`), never account numbers.
 */
import { AppError, validationError, wrongKeyKind } from '../../core/errors.js';
import type { PayoutDestination } from '../../store/repos/rails.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { recordEvent } from '../platform/events.js';
import { destinationView, railsOf } from './views.js';

export interface DestinationInput {
  destination: string;
  asset?: 'USD' | 'USDC';
  chain?: 'base';
}

const EXT_REF = /^ext_[A-Za-z0-9_-]{1,100}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** asset, chain and the destination checked against its form */
export function parseDestination(input: DestinationInput): { asset: PayoutDestination['asset']; chain: string; destination: string } {
  const destination = input.destination.trim();
  const asset = input.asset ?? (destination.startsWith('0x') ? 'USDC' : 'USD');
  if (asset === 'USD') {
    if (input.chain !== undefined) throw validationError('chain', 'is only for USDC destinations; a USD bank destination has no chain');
    if (!EXT_REF.test(destination)) {
      throw validationError('destination', 'must be an external bank account reference "ext_…" for USD; bank account numbers never go through agentpay: link the account with your bank provider and register its ext_ reference');
    }
    return { asset, chain: '', destination };
  }
  if (!EVM_ADDRESS.test(destination)) throw validationError('destination', 'must be a 0x address of 40 hex digits for USDC on base');
  return { asset, chain: input.chain ?? 'base', destination };
}

export class PayoutDestinationService {
  constructor(private ctx: DomainContext, private settings: { destinationCooldownMs: number }) {}

  private ownerOnly(p: Principal, providerId: string, what: string): void {
    // refused before any lookup: nothing about another tenant is disclosed
    if (p.tenantKind !== 'provider' || p.tenantId !== providerId) throw wrongKeyKind(['provider'], `only provider ${providerId} itself can ${what}`, { ownerId: providerId });
  }

  async register(p: Principal, providerId: string, input: DestinationInput) {
    this.ownerOnly(p, providerId, 'register its payout destination');
    const { asset, chain, destination } = parseDestination(input);
    const normalized = destination.toLowerCase();
    return this.ctx.store.tx(async (r) => {
      const now = this.ctx.clock.now();
      const current = await r.payoutDestinations.current(providerId, asset, chain);
      if (current && current.normalized === normalized) return { destination: destinationView(current, now), changed: false };
      // a change freezes; a first registration for this asset is usable at once (the spec), but
      // alerts when the provider is already paid elsewhere: money could now go to a new asset
      const changed = current !== undefined;
      const alert = changed || (await r.payoutDestinations.listCurrent(providerId)).length > 0;
      const row: PayoutDestination = {
        id: this.ctx.ids.next('payoutDestination'), providerId, asset, chain, destination, normalized, createdAt: now,
        usableAt: changed ? now + this.settings.destinationCooldownMs : now,
      };
      await r.payoutDestinations.insert(row);
      if (alert) {
        await recordEvent(r, this.ctx, providerId, 'payout_destination.changed', {
          asset, chain: chain || null, rails: railsOf(row), previous: current?.destination ?? null, destination,
          payoutsFrozenUntil: changed ? new Date(row.usableAt).toISOString() : null,
        });
      }
      return { destination: destinationView(row, now), changed: true };
    });
  }

  /** The current destination of each asset and chain; the provider itself or the operator. */
  async list(p: Principal, providerId: string) {
    if (p.tenantKind !== 'operator') this.ownerOnly(p, providerId, 'read its payout destinations');
    return this.ctx.store.read(async (r) => {
      if (p.tenantKind === 'operator') {
        const t = await r.tenants.get(providerId);
        if (!t || t.kind !== 'provider') throw new AppError('PROVIDER_NOT_FOUND', `provider ${providerId} not found`, { id: providerId });
      }
      const now = this.ctx.clock.now();
      return { destinations: (await r.payoutDestinations.listCurrent(providerId)).map((d) => destinationView(d, now)) };
    });
  }
}
