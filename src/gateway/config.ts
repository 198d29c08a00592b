/** Gateway configuration, validated once at boot. */
import type { RailsConfig } from '../domain/rails/config.js';
import { DEFAULT_PAYMENTS } from '../domain/payments/config.js';
import { DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from '../domain/tenancy/auth-throttles.js';
import { mailFromProblem, smtpUrlProblem, type MailConfig } from './mail/settings.js';
import type { KeyEncryptionSettings } from '../domain/payments/key-sealing.js';
import { parseCidr } from '../domain/platform/webhooks/egress.js';
import { MIN_RETENTION_DAYS, RETENTION_DAYS_KEYS, type RetentionSettings } from '../domain/platform/retention.js';

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
    /**
     * payment operations (challenge, authorize, complete, fail): per key and per operation, each
     * with a counter of its own, apart from `max`, so that a busy seller's purchases do not spend
     * its general budget (a purchase costs the seller three gateway requests). Optional only for
     * the callers' sake: resolveConfig sets both (1000 per 1000 ms).
     */
    paymentMax?: number;
    paymentWindowMs?: number;
  };
  /**
   * Redis shared by every instance of a fleet: the rate limits count there, across instances.
   * Without it each gateway counts in its own process.
   */
  redis?: { url: string; /** default "agentpay:rl:" */ keyPrefix?: string };
  /**
   * GET /metrics (Prometheus text, docs/metrics.md): off (default; the route does not exist),
   * loopback (only connections from this machine that no proxy forwarded), or token (a request
   * with `authorization: Bearer TOKEN`, from anywhere)
   */
  metrics?: { mode: 'off' | 'loopback' | 'token'; token?: string };
  /**
   * per-address failed-login backoff, password-reset mail throttle and the cap on a tenant's
   * active keys (src/domain/tenancy/auth-throttles.ts, docs/api/tenancy.md); each unset one
   * has its default (DEFAULT_ACCOUNT_LIMITS)
   */
  accountLimits?: Partial<AccountLimits>;
  /** how long a signup or password-reset token stays valid */
  tokenTtlMs: number;
  /** how long a signed price challenge can be paid */
  challengeTtlMs: number;
  /** how long an authorized transaction waits for complete or fail before the sweeper refunds it */
  releaseUnsettledAfterMs: number;
  /** @deprecated the old name of `releaseUnsettledAfterMs`: resolveConfig still accepts it, and sets only the new name */
  inFlightTtlMs?: number;
  /** how often the expiry sweeper looks for such transactions */
  sweepIntervalMs: number;
  /** check every JSON answer against its route's response schema and fail one that differs (tests; plugins/responses.ts) */
  validateResponses: boolean;
  /** rail adapters and their settings (src/domain/rails/config.ts); default: sandbox adapters in sandbox mode, none in production */
  rails?: RailsConfig;
  /** mail over SMTP (src/gateway/mail/); without it, mail is appended to DATA_DIR/outbox.jsonl */
  mail?: MailConfig;
  /** webhook deliveries (docs/api/webhooks.md) */
  webhooks?: WebhooksConfig;
  /** how often the alert-mail duty sends what is due (default 5000 ms; 0: never, tests run it by hand) */
  alertMailIntervalMs?: number;
  /**
   * the key-encryption keys that seal the signing keys in the database (src/domain/payments/key-sealing.ts);
   * without them, startGateway reads AGENTPAY_KEY_ENCRYPTION_KEY (with _PREVIOUS) or AGENTPAY_KEY_ENCRYPTION_KEY_FILE
   */
  keyEncryption?: KeyEncryptionSettings;
  /** what the retention duty deletes, and when (src/domain/platform/retention.ts; docs/deploy.md § Retention) */
  retention?: Partial<RetentionSettings>;
}

export interface WebhooksConfig {
  /**
   * the key endpoint secrets are encrypted with: 32 bytes as hex or base64 (AGENTPAY_WEBHOOK_KEY);
   * startGateway fills it from the environment or DATA_DIR/webhooks/secret-box.key
   */
  secretKey?: string;
  /** how often the delivery duty looks for due deliveries (ms; default 2000, 0 never) */
  deliveryIntervalMs?: number;
  /** the hard deadline of one attempt: connecting, sending and the status line together (ms; default 10000) */
  timeoutMs?: number;
  /** attempts in flight at once (default 8); one tenant gets at most half of them */
  concurrency?: number;
  /**
   * CIDR ranges (or single addresses) deliveries may go to although they are internal
   * (private, loopback, link-local, …: src/domain/platform/webhooks/egress.ts); for operators with
   * receivers inside their network. Config file key `webhookEgressAllow`, env AGENTPAY_WEBHOOK_EGRESS_ALLOW.
   */
  egressAllow?: string[];
  /** extra CA certificates (PEM) trusted for https endpoints, beside the system's */
  ca?: string;
}

export const DEFAULT_CONFIG: GatewayConfig & { rateLimit: Required<GatewayConfig['rateLimit']> } = {
  mode: 'sandbox',
  feeBps: DEFAULT_PAYMENTS.feeBps,
  trustProxy: false,
  devEchoTokens: false,
  rateLimit: { max: 50, windowMs: 1000, signupMax: 10, signupWindowMs: 60_000, paymentMax: 1000, paymentWindowMs: 1000 },
  tokenTtlMs: 24 * 60 * 60 * 1000,
  challengeTtlMs: DEFAULT_PAYMENTS.challengeTtlMs,
  releaseUnsettledAfterMs: DEFAULT_PAYMENTS.releaseUnsettledAfterMs,
  sweepIntervalMs: DEFAULT_PAYMENTS.sweepIntervalMs,
  validateResponses: false,
};

/** The account limits in force: the config's, each unset one at its default. */
export function accountLimitsOf(config: Pick<GatewayConfig, 'accountLimits'>): AccountLimits {
  return { ...DEFAULT_ACCOUNT_LIMITS, ...config.accountLimits };
}

const MAX_TIMER_MS = 2 ** 31 - 1;
/** a metrics token shorter than this is refused: it is the only thing guarding the endpoint */
export const MIN_METRICS_TOKEN = 16;

/**
 * The rules of the settings, once: resolveConfig below and the CLI's check of a config file and its
 * flags (src/cli/gateway-config.ts) both decide with these, each in its own words.
 */
export const isGatewayMode = (v: unknown): v is GatewayConfig['mode'] => v === 'sandbox' || v === 'production';
/** The platform fee in basis points: an integer from 0 to 10000 (300 = 3%). */
export function feeBpsProblem(v: unknown): 'not-integer' | 'out-of-range' | undefined {
  if (!Number.isInteger(v)) return 'not-integer';
  return (v as number) >= 0 && (v as number) <= 10_000 ? undefined : 'out-of-range';
}
/** Durations (ms) and counts: 0 or less would expire everything at once or refuse every request. */
export const isPositiveInteger = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
export const isRedisUrl = (v: unknown): v is string => typeof v === 'string' && /^rediss?:\/\/./.test(v);
export const METRICS_MODES = ['off', 'loopback', 'token'] as const;
export const isMetricsMode = (v: unknown): v is (typeof METRICS_MODES)[number] => (METRICS_MODES as readonly unknown[]).includes(v);

/** Why a list of CIDR ranges (webhooks.egressAllow) is refused, or undefined. */
export function egressAllowProblem(v: unknown): string | undefined {
  if (!Array.isArray(v)) return 'must be a list of CIDR ranges, e.g. ["10.20.0.0/16"]';
  for (const c of v) {
    if (typeof c !== 'string') return `must hold strings, got ${JSON.stringify(c)}`;
    try {
      parseCidr(c);
    } catch (e) {
      return `: ${(e as Error).message}`;
    }
  }
  return undefined;
}

/** Why a retention section is refused (the text follows "retention"), or undefined. */
export function retentionProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return ' must be an object, e.g. {"webhookDeliveriesDays": 30}';
  const keep = v as Record<string, unknown>;
  for (const [k, x] of Object.entries(keep)) {
    if (k === 'intervalMs') {
      if (!Number.isSafeInteger(x) || (x as number) < 0 || (x as number) > MAX_TIMER_MS) return `.intervalMs must be an integer of milliseconds from 0 (never) to ${MAX_TIMER_MS}`;
    } else if ((RETENTION_DAYS_KEYS as readonly string[]).includes(k)) {
      if (!Number.isSafeInteger(x) || (x as number) < MIN_RETENTION_DAYS || (x as number) > 36_500) return `.${k} must be a whole number of days from ${MIN_RETENTION_DAYS} to 36500`;
    } else {
      return `.${k} is not a setting (known: intervalMs, ${RETENTION_DAYS_KEYS.join(', ')})`;
    }
  }
  return undefined;
}

export function resolveConfig(partial: Partial<GatewayConfig> = {}): GatewayConfig {
  // inFlightTtlMs is the old name of releaseUnsettledAfterMs, still accepted; both at once must agree
  const { inFlightTtlMs, ...given } = partial;
  if (inFlightTtlMs !== undefined) {
    if (given.releaseUnsettledAfterMs !== undefined && given.releaseUnsettledAfterMs !== inFlightTtlMs) {
      throw new Error('inFlightTtlMs is the old name of releaseUnsettledAfterMs; give one of them, not two different values');
    }
    given.releaseUnsettledAfterMs ??= inFlightTtlMs;
  }
  const cfg: GatewayConfig = { ...DEFAULT_CONFIG, ...given, rateLimit: { ...DEFAULT_CONFIG.rateLimit, ...given.rateLimit } };
  if (!isGatewayMode(cfg.mode)) throw new Error(`mode must be sandbox or production, got ${String(cfg.mode)}`);
  if (feeBpsProblem(cfg.feeBps)) throw new Error('feeBps must be an integer from 0 to 10000');
  if (cfg.mode === 'production' && cfg.devEchoTokens) throw new Error('--dev-echo-tokens is refused in production mode');
  // a duration of 0 or less would make every token or challenge expire as it is made
  for (const k of ['tokenTtlMs', 'challengeTtlMs', 'releaseUnsettledAfterMs', 'sweepIntervalMs'] as const) {
    if (!isPositiveInteger(cfg[k])) throw new Error(`${k} must be a positive integer of milliseconds`);
  }
  // node runs a longer timer interval after 1 ms instead: the sweeper would spin
  if (cfg.sweepIntervalMs > MAX_TIMER_MS) throw new Error(`sweepIntervalMs must be at most ${MAX_TIMER_MS}`);
  for (const [k, v] of Object.entries(cfg.rateLimit)) {
    if (!isPositiveInteger(v)) throw new Error(`rateLimit.${k} must be a positive integer`);
  }
  if (cfg.accountLimits !== undefined) {
    for (const [k, v] of Object.entries(cfg.accountLimits)) {
      if (!(k in DEFAULT_ACCOUNT_LIMITS)) throw new Error(`accountLimits.${k} is not a setting; the settings are ${Object.keys(DEFAULT_ACCOUNT_LIMITS).join(', ')}`);
      if (!isPositiveInteger(v)) throw new Error(`accountLimits.${k} must be a positive integer`);
    }
  }
  if (cfg.redis !== undefined) {
    const { url, keyPrefix } = cfg.redis;
    if (!isRedisUrl(url)) throw new Error('redis.url must be a redis:// or rediss:// URL');
    if (keyPrefix !== undefined && typeof keyPrefix !== 'string') throw new Error('redis.keyPrefix must be a string');
  }
  if (cfg.metrics !== undefined) {
    const { mode, token } = cfg.metrics;
    if (!isMetricsMode(mode)) throw new Error(`metrics.mode must be off, loopback or token, got ${JSON.stringify(mode)}`);
    if (mode === 'token' && (typeof token !== 'string' || token.length < MIN_METRICS_TOKEN)) throw new Error(`metrics.token must be at least ${MIN_METRICS_TOKEN} characters when metrics.mode is token`);
  }
  if (cfg.mail) {
    // the URL is never quoted: it may hold a password
    const url = smtpUrlProblem(cfg.mail.smtpUrl);
    if (url) throw new Error(`mail.smtpUrl ${url}`);
    const from = mailFromProblem(cfg.mail.from);
    if (from) throw new Error(`mail.from ${from}`);
  }
  const w = cfg.webhooks;
  if (w?.deliveryIntervalMs !== undefined && (!Number.isSafeInteger(w.deliveryIntervalMs) || w.deliveryIntervalMs < 0 || w.deliveryIntervalMs > MAX_TIMER_MS)) {
    throw new Error(`webhooks.deliveryIntervalMs must be an integer of milliseconds from 0 (never) to ${MAX_TIMER_MS}`);
  }
  if (w?.timeoutMs !== undefined && (!Number.isSafeInteger(w.timeoutMs) || w.timeoutMs <= 0 || w.timeoutMs > MAX_TIMER_MS)) {
    throw new Error('webhooks.timeoutMs must be a positive integer of milliseconds');
  }
  const k = cfg.keyEncryption;
  if (k?.keys !== undefined && (!Array.isArray(k.keys) || k.keys.some((x) => typeof x !== 'string'))) throw new Error('keyEncryption.keys must be a list of keys (strings), the first sealing');
  if (k?.file !== undefined && (typeof k.file !== 'string' || k.file === '')) throw new Error('keyEncryption.file must be the path of a file of key-encryption keys');
  if (w?.concurrency !== undefined && (!isPositiveInteger(w.concurrency) || w.concurrency > 256)) {
    throw new Error('webhooks.concurrency must be an integer from 1 to 256');
  }
  if (w?.egressAllow !== undefined) {
    const problem = egressAllowProblem(w.egressAllow);
    if (problem) throw new Error(`webhooks.egressAllow${problem.startsWith(':') ? '' : ' '}${problem}`);
  }
  if (cfg.retention !== undefined) {
    const problem = retentionProblem(cfg.retention);
    if (problem) throw new Error(`retention${problem}`);
  }
  if (typeof cfg.trustProxy !== 'boolean') throw new Error(`trustProxy must be true or false, got ${JSON.stringify(cfg.trustProxy)}`);
  return cfg;
}
