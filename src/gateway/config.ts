/** Gateway configuration, validated once at boot. */
import type { RailsConfig } from '../domain/rails/config.js';

export interface GatewayConfig {
  mode: 'sandbox' | 'production';
  /** platform fee in basis points; 300 = 3% */
  feeBps: number;
  /** honour x-forwarded-proto from a TLS-terminating proxy */
  trustProxy: boolean;
  /** signup and password-reset responses include the token (sandbox only) */
  devEchoTokens: boolean;
  rateLimit: {
    /** requests per window per key (per IP without a key) */
    max: number;
    windowMs: number;
    /** signup and password-recovery routes, per IP */
    signupMax: number;
    signupWindowMs: number;
  };
  /** how long a signup or password-reset token stays valid */
  tokenTtlMs: number;
  /** how long a signed price challenge can be paid */
  challengeTtlMs: number;
  /** how long an authorized transaction waits for complete or fail before the sweeper refunds it */
  inFlightTtlMs: number;
  /** how often the expiry sweeper looks for such transactions */
  sweepIntervalMs: number;
  /** check every JSON answer against its route's response schema and fail one that differs (tests; plugins/responses.ts) */
  validateResponses: boolean;
  /** rail adapters and their settings (src/domain/rails/config.ts); default: sandbox adapters in sandbox mode, none in production */
  rails?: RailsConfig;
}

export const DEFAULT_CONFIG: GatewayConfig = {
  mode: 'sandbox',
  feeBps: 300,
  trustProxy: false,
  devEchoTokens: false,
  rateLimit: { max: 50, windowMs: 1000, signupMax: 10, signupWindowMs: 60_000 },
  tokenTtlMs: 24 * 60 * 60 * 1000,
  challengeTtlMs: 5 * 60 * 1000,
  inFlightTtlMs: 15 * 60 * 1000,
  sweepIntervalMs: 30 * 1000,
  validateResponses: false,
};

const MAX_TIMER_MS = 2 ** 31 - 1;

export function resolveConfig(partial: Partial<GatewayConfig> = {}): GatewayConfig {
  const cfg: GatewayConfig = { ...DEFAULT_CONFIG, ...partial, rateLimit: { ...DEFAULT_CONFIG.rateLimit, ...partial.rateLimit } };
  if (cfg.mode !== 'sandbox' && cfg.mode !== 'production') throw new Error(`mode must be sandbox or production, got ${String(cfg.mode)}`);
  if (!Number.isInteger(cfg.feeBps) || cfg.feeBps < 0 || cfg.feeBps > 10_000) throw new Error('feeBps must be an integer from 0 to 10000');
  if (cfg.mode === 'production' && cfg.devEchoTokens) throw new Error('--dev-echo-tokens is refused in production mode');
  // a duration of 0 or less would make every token or challenge expire as it is made
  for (const k of ['tokenTtlMs', 'challengeTtlMs', 'inFlightTtlMs', 'sweepIntervalMs'] as const) {
    if (!Number.isSafeInteger(cfg[k]) || cfg[k] <= 0) throw new Error(`${k} must be a positive integer of milliseconds`);
  }
  // node runs a longer timer interval after 1 ms instead: the sweeper would spin
  if (cfg.sweepIntervalMs > MAX_TIMER_MS) throw new Error(`sweepIntervalMs must be at most ${MAX_TIMER_MS}`);
  for (const [k, v] of Object.entries(cfg.rateLimit)) {
    if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`rateLimit.${k} must be a positive integer`);
  }
  if (typeof cfg.trustProxy !== 'boolean') throw new Error(`trustProxy must be true or false, got ${JSON.stringify(cfg.trustProxy)}`);
  return cfg;
}
