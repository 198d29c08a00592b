/** What the payment core is built from; GatewayConfig satisfies `PaymentSettings` (./config.ts). */
import { wrongKeyKind } from '../../core/errors.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import type { SigningKeys } from './signing-keys.js';
import type { PurchasePolicy } from './policy.js';
import type { PaymentSettings } from './config.js';

export type { PaymentSettings } from './config.js';

export interface PaymentDeps {
  ctx: DomainContext;
  signingKeys: SigningKeys;
  settings: Pick<PaymentSettings, 'feeBps' | 'challengeTtlMs' | 'releaseUnsettledAfterMs'>;
  policy: PurchasePolicy;
}

/** The four payment routes are the seller's: only a provider key acts on them. */
export function requireProvider(p: Principal): void {
  if (p.tenantKind !== 'provider') {
    throw wrongKeyKind(['provider'], 'the payment protocol routes take a provider key (the seller middleware\'s); buyers sign proofs instead');
  }
}
