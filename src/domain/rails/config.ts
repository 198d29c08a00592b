/**
 * Rail settings: which adapters run and the numbers the rails work with. A gateway's
 * `config.rails` (GatewayConfig) is a partial of these; `resolveRails` fills in the
 * defaults and refuses nonsense at boot.
 */
import type { RailAdapters } from './adapters.js';

export interface RailsSettings {
  /**
   * Which adapters run: `sandbox` (the simulated processor, chain, bank, screening and
   * price feed of ./sandbox), `none` (no rail: top-ups, deposits and payouts answer 501),
   * or the adapters a deployment built itself. Default: `sandbox` on sandbox gateways,
   * `none` in production mode, which refuses the sandbox adapters.
   */
  adapters: 'sandbox' | 'none' | RailAdapters;
  /** HMAC secret of the sandbox processor's webhooks; default: DATA_DIR/rails/sandbox-webhook.secret */
  webhookSecret?: string;
  /** how far a webhook's signed timestamp may be from the gateway's clock */
  webhookToleranceMs: number;
  /** how often the rail job observes deposits, retries held ones and follows payouts */
  pollIntervalMs: number;
  /** how often the rail job reconciles the ledger with the adapters */
  reconcileIntervalMs: number;
  /** how long a changed payout destination freezes payouts on its rails */
  destinationCooldownMs: number;
  /** the USDC price band in basis points around 1 USD (50 = ±0.5%) */
  priceBandBps: number;
  /** what one faucet call sends, in USDC base units (6 decimals) */
  faucetAmountMinor: bigint;
  sandbox: {
    /** destinations the sandbox screening refuses, besides its built-in test ones */
    sanctioned: string[];
    /** top-ups above this many USD minor units are declined at once (amount_over_limit) */
    topUpLimitMinor: bigint;
    /** how long a USDC payout takes to confirm on the sandbox chain */
    usdcConfirmMs: number;
  };
}

export type RailsConfig = Partial<Omit<RailsSettings, 'sandbox'>> & { sandbox?: Partial<RailsSettings['sandbox']> };

const MINUTE = 60_000;

export const DEFAULT_RAILS: Omit<RailsSettings, 'adapters'> = {
  webhookToleranceMs: 5 * MINUTE,
  pollIntervalMs: 15_000,
  reconcileIntervalMs: 5 * MINUTE,
  destinationCooldownMs: 24 * 60 * MINUTE,
  priceBandBps: 50,
  faucetAmountMinor: 10_000_000n,
  sandbox: { sanctioned: [], topUpLimitMinor: 10_000_000n, usdcConfirmMs: 2 * MINUTE },
};

export function resolveRails(partial: RailsConfig | undefined, mode: 'sandbox' | 'production'): RailsSettings {
  const s: RailsSettings = {
    ...DEFAULT_RAILS,
    adapters: mode === 'sandbox' ? 'sandbox' : 'none',
    ...partial,
    sandbox: { ...DEFAULT_RAILS.sandbox, ...partial?.sandbox },
  };
  if (s.adapters === 'sandbox' && mode === 'production') {
    throw new Error('rails.adapters "sandbox" is refused in production mode: the sandbox moves no real money; configure real adapters or "none"');
  }
  if (typeof s.adapters === 'object' && mode === 'production') {
    const simulated = s.adapters.providers.filter((a) => a.info.adapterType.startsWith('sandbox'));
    if (s.adapters.sandbox || simulated.length > 0) {
      throw new Error(`rails.adapters: the sandbox adapter${simulated.length === 1 ? '' : 's'} ${simulated.map((a) => a.info.id).join(', ') || '(sandbox world)'} ${simulated.length === 1 ? 'is' : 'are'} refused in production mode: the sandbox moves no real money`);
    }
  }
  for (const k of ['webhookToleranceMs', 'pollIntervalMs', 'reconcileIntervalMs', 'destinationCooldownMs'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new Error(`rails.${k} must be a non-negative integer of milliseconds`);
  }
  if (!Number.isInteger(s.priceBandBps) || s.priceBandBps < 0 || s.priceBandBps > 10_000) throw new Error('rails.priceBandBps must be an integer from 0 to 10000');
  if (typeof s.faucetAmountMinor !== 'bigint' || s.faucetAmountMinor <= 0n) throw new Error('rails.faucetAmountMinor must be a positive bigint');
  return s;
}
