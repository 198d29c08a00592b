/** How a person sees the seller-for-wallet breaker. */
import type { BreakerState } from 'agentpay-sdk/types';
import { renderFields } from './output.js';

export function breakerFields(b: BreakerState): string {
  return renderFields([
    ['wallet', b.walletId],
    ['provider', b.providerId],
    ['paused', b.paused ? `yes (resume: agentpay wallets resume-provider ${b.walletId} --provider ${b.providerId})` : 'no'],
    ['failures in a row', b.consecutiveFailures],
  ]);
}
