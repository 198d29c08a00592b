/** What the payment core is built from; GatewayConfig satisfies `PaymentSettings`. */
import { wrongKeyKind } from '../../core/errors.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import type { SigningKeys } from './signing-keys.js';
import type { PurchasePolicy } from './policy.js';

export interface PaymentSettings {
  /** platform fee in basis points, rounded down */
  feeBps: number;
  challengeTtlMs: number;
  inFlightTtlMs: number;
}

export interface PaymentDeps {
  ctx: DomainContext;
  signingKeys: SigningKeys;
  settings: PaymentSettings;
  policy: PurchasePolicy;
}

/** The four payment routes are the seller's: only a provider key acts on them. */
export function requireProvider(p: Principal): void {
  if (p.tenantKind !== 'provider') {
    throw wrongKeyKind(['provider'], 'the payment protocol routes take a provider key (the seller middleware\'s); buyers sign proofs instead');
  }
}
