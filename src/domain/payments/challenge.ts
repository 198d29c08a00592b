/**
 * Price challenges: the platform's signed quote for one call of a capability at its
 * price right now. Nothing is stored; the signature and the nonce (recorded when the
 * proof that embeds it is authorized) make it single-use and tamper-evident.
 */
import { AppError, forbidden, notFound } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import { challengeNonce } from '../../core/ids.js';
import type { Principal } from '../tenancy/api-keys.js';
import { requireProvider, type PaymentDeps } from './deps.js';

/** The wire shapes, from the contract (agentpay-sdk/contract): one definition for gateway, SDK and CLI. */
export type { UnsignedPriceChallenge as UnsignedChallenge, PriceChallenge as Challenge } from 'agentpay-sdk/contract';
import type { UnsignedPriceChallenge as UnsignedChallenge, PriceChallenge as Challenge } from 'agentpay-sdk/contract';

export async function issueChallenge(deps: PaymentDeps, p: Principal, capabilityId: string): Promise<Challenge> {
  requireProvider(p);
  // the capability and the caller's own provider record, asked for at once; no common snapshot
  // needed: authorize checks both again before any money moves
  const [capability, provider] = await deps.ctx.store.read((r) => Promise.all([r.capabilities.get(capabilityId), r.tenants.get(p.tenantId)]), { snapshot: false });
  if (!capability) throw notFound('CAPABILITY_NOT_FOUND', 'capability', capabilityId);
  if (capability.providerId !== p.tenantId) throw forbidden(`capability ${capabilityId} belongs to another provider`, { capabilityId });
  if (!provider) throw notFound('CAPABILITY_NOT_FOUND', 'capability', capabilityId);
  if (capability.status !== 'active') {
    throw new AppError('CONFLICT', `capability ${capabilityId} is ${capability.status} and cannot be sold; publish a new capability`, { capabilityId, status: capability.status });
  }
  if (!provider.verified || provider.status !== 'active') {
    throw forbidden(`provider ${provider.id} is ${provider.verified ? provider.status : 'not verified'} and cannot sell until an operator verifies it`, {
      providerId: provider.id,
      status: provider.status,
      verified: provider.verified,
    });
  }
  if (!provider.settlementWalletId) throw new AppError('INTERNAL', `provider ${provider.id} has no settlement wallet`);
  return deps.signingKeys.sign({
    capabilityId: capability.id,
    providerId: provider.id,
    amountMinor: capability.priceMinor.toString(),
    currency: capability.currency,
    nonce: challengeNonce(),
    expiresAt: iso(deps.ctx.clock.now() + deps.settings.challengeTtlMs),
    payTo: provider.settlementWalletId,
    // metered: amountMinor is the maximum the buyer authorizes; the seller charges the units used (signed, so the buyer can trust it)
    ...(capability.metering ? { metering: capability.metering } : {}),
  } satisfies UnsignedChallenge);
}
