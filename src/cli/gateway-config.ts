/**
 * Configuration of `agentpay gateway start`: flags, then AGENTPAY_* environment
 * variables (oclif reads both into the same flag values), then an optional JSON config
 * file, then defaults. Checked once here, before anything listens, with errors that
 * name the setting.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { egressAllowProblem, retentionProblem, feeBpsProblem, isGatewayMode, isMetricsMode, isPositiveInteger, isRedisUrl, MIN_METRICS_TOKEN, type GatewayConfig } from '../gateway/config.js';
import { systemClock } from '../core/clock.js';
import { buildRails, checkRailsSection, RailsConfigError, type RailsSection } from '../rails/config.js';
import { CliError, usageError } from './errors/index.js';
import type { RetentionSettings } from '../domain/platform/retention.js';
import type { RunGatewayOptions } from './gateway-runner.js';
import { LOCAL_DATA_DIR } from './local-gateway.js';
import { LOG_FORMATS, type LogFormat } from './log-pretty.js';
import { mailFromProblem, smtpUrlProblem, type MailConfig } from '../gateway/mail/settings.js';
import { DEFAULT_ACCOUNT_LIMITS, type AccountLimits } from '../domain/tenancy/auth-throttles.js';
import { settingAsSet, settingDetails, settingName, settingWithValue, type SettingSource } from './setting-source.js';

/** The settings a config file may hold; flags of the same meaning override them. */
export interface GatewayFileConfig {
  mode?: 'sandbox' | 'production';
  host?: string;
  port?: number;
  /** null: no plain-HTTP listener */
  httpPort?: number | null;
  dataDir?: string;
  feeBps?: number;
  trustProxy?: boolean;
  tls?: boolean;
  devEchoTokens?: boolean;
  logLevel?: string;
  /** auto (readable on a terminal, JSON when piped), pretty or json */
  logFormat?: LogFormat;
  tokenTtlMs?: number;
  /** which rail adapters run: sandbox (simulated; sandbox mode only), none, or real adapters (src/rails/config.ts) */
  rails?: 'sandbox' | 'none' | RailsSection;
  rateLimit?: { max?: number; windowMs?: number; signupMax?: number; signupWindowMs?: number; paymentMax?: number; paymentWindowMs?: number };
  /** per-address login backoff, reset-mail throttle and the cap on a tenant's keys (docs/api/tenancy.md § Rate limits) */
  accountLimits?: Partial<AccountLimits>;
  /** redis:// URL of the Redis the rate limits of a fleet share */
  redis?: string;
  /** GET /metrics: off, loopback or token (with metricsToken or AGENTPAY_METRICS_TOKEN) */
  metrics?: 'off' | 'loopback' | 'token';
  metricsToken?: string;
  /** a PostgreSQL URL (postgres://user:password@host:5432/db); without it, SQLite in dataDir */
  database?: string;
  /** mail over SMTP: smtp://user:password@host:port (with mailFrom) */
  smtpUrl?: string;
  mailFrom?: string;
  /**
   * a file of key-encryption keys, one a line, the first sealing the signing keys in the database
   * (relative to this file; docs/deploy.md); else AGENTPAY_KEY_ENCRYPTION_KEY or _FILE
   */
  keyEncryptionKeyFile?: string;
  /** CIDR ranges webhook deliveries may go to although internal (env AGENTPAY_WEBHOOK_EGRESS_ALLOW, comma-separated) */
  webhookEgressAllow?: string[];
  /** what the retention duty deletes, and how often it runs (docs/deploy.md § Retention) */
  retention?: Partial<RetentionSettings>;
}

type Kind = 'string' | 'fee-bps' | 'positive-integer' | 'boolean' | 'port' | 'port-or-null' | 'mode' | 'rails' | 'log-format' | 'redis-url' | 'metrics' | 'cidr-list' | 'retention';
const FIELDS: Record<Exclude<keyof GatewayFileConfig, 'rateLimit' | 'accountLimits'>, Kind> = {
  mode: 'mode',
  host: 'string',
  port: 'port',
  httpPort: 'port-or-null',
  dataDir: 'string',
  feeBps: 'fee-bps',
  trustProxy: 'boolean',
  tls: 'boolean',
  devEchoTokens: 'boolean',
  logLevel: 'string',
  logFormat: 'log-format',
  tokenTtlMs: 'positive-integer',
  rails: 'rails',
  redis: 'redis-url',
  metrics: 'metrics',
  metricsToken: 'string',
  database: 'string',
  smtpUrl: 'string',
  mailFrom: 'string',
  keyEncryptionKeyFile: 'string',
  webhookEgressAllow: 'cidr-list',
  retention: 'retention',
};
const RATE_FIELDS = ['max', 'windowMs', 'signupMax', 'signupWindowMs', 'paymentMax', 'paymentWindowMs'] as const;

function checkValue(kind: Kind, v: unknown): string | undefined {
  switch (kind) {
    case 'string':
      return typeof v === 'string' && v ? undefined : 'must be a non-empty string';
    case 'fee-bps': {
      const problem = feeBpsProblem(v);
      return problem === 'not-integer' ? 'must be an integer' : problem ? 'must be from 0 to 10000 (basis points: 300 = 3%)' : undefined;
    }
    case 'positive-integer':
      return isPositiveInteger(v) ? undefined : 'must be a positive integer';
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'mode':
      return isGatewayMode(v) ? undefined : 'must be "sandbox" or "production"';
    case 'rails':
      return v === 'sandbox' || v === 'none' || (v !== null && typeof v === 'object' && !Array.isArray(v)) ? undefined : 'must be "sandbox", "none", or an object naming the adapters (stripe, screening)';
    case 'log-format':
      return (LOG_FORMATS as readonly unknown[]).includes(v) ? undefined : `must be ${LOG_FORMATS.map((f) => `"${f}"`).join(', ')}`;
    case 'metrics':
      return isMetricsMode(v) ? undefined : 'must be "off", "loopback" or "token"';
    case 'redis-url':
      return isRedisUrl(v) ? undefined : 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379';
    case 'cidr-list':
      return egressAllowProblem(v)?.replace(/^: /, 'has a bad entry: ');
    case 'retention': {
      const problem = retentionProblem(v);
      return problem && (problem.startsWith('.') ? `field ${problem.slice(1)}` : problem.trimStart());
    }
    case 'port-or-null':
      if (v === null) return undefined;
    // falls through
    case 'port':
      return Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535 ? undefined : `must be a port number from 0 to 65535${kind === 'port-or-null' ? ', or null for none' : ''}`;
  }
}


/**
 * oclif reads a boolean flag's variable as true for 1/true/y/yes and as false for ANY
 * other value, so AGENTPAY_TLS=maybe would silently mean --no-tls. Only the spellings
 * below are accepted; an empty variable counts as unset, as oclif treats it.
 */
const BOOLEAN_ENV = ['AGENTPAY_TRUST_PROXY', 'AGENTPAY_TLS', 'AGENTPAY_DEV_ECHO_TOKENS'] as const;
const ENV_TRUE = ['1', 'true', 'y', 'yes'];
const ENV_FALSE = ['0', 'false', 'n', 'no'];

export function checkBooleanEnv(env: NodeJS.ProcessEnv): void {
  for (const name of BOOLEAN_ENV) {
    const v = env[name];
    if (!v || [...ENV_TRUE, ...ENV_FALSE].includes(v.toLowerCase())) continue;
    throw new CliError('CONFIG_INVALID', `the environment variable ${name} must be true or false (or 1/0, yes/no), got ${JSON.stringify(v)}`, {
      exit: 2,
      details: { env: name },
    });
  }
}

/** `from`: the environment variable that named the file, when it was not --config */
export function readGatewayConfigFile(path: string, from?: string): GatewayFileConfig {
  if (!existsSync(path)) {
    if (!from) throw usageError(`--config: the file ${path} does not exist`);
    throw usageError(`${from}: the config file ${path} does not exist`, `correct ${from}, or unset it (unset ${from}) to start without a config file`, { flag: '--config', env: from });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CliError('CONFIG_INVALID', `${path} is not valid JSON: ${(e as Error).message}`, { exit: 2 });
  }
  const bad = (key: string, problem: string) => new CliError('CONFIG_INVALID', `${path}: ${key} ${problem}`, { exit: 2, details: { file: path, field: key } });
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('(top level)', 'must be a JSON object');
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'rateLimit') {
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad(key, 'must be an object');
      for (const [k, v] of Object.entries(value)) {
        if (!(RATE_FIELDS as readonly string[]).includes(k)) throw bad(`rateLimit.${k}`, `is not a setting (known: ${RATE_FIELDS.join(', ')})`);
        if (!isPositiveInteger(v)) throw bad(`rateLimit.${k}`, 'must be a positive integer');
      }
      continue;
    }
    if (key === 'accountLimits') {
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad(key, 'must be an object');
      const known = Object.keys(DEFAULT_ACCOUNT_LIMITS);
      for (const [k, v] of Object.entries(value)) {
        if (!known.includes(k)) throw bad(`accountLimits.${k}`, `is not a setting (known: ${known.join(', ')})`);
        if (!isPositiveInteger(v)) throw bad(`accountLimits.${k}`, 'must be a positive integer');
      }
      continue;
    }
    if (key === 'rails' && typeof value === 'object' && value !== null) {
      try {
        checkRailsSection(value);
      } catch (e) {
        if (e instanceof RailsConfigError) throw new CliError('CONFIG_INVALID', `${path}: ${e.message}`, { exit: 2, details: { file: path, field: e.field }, ...(e.hint ? { tryNext: e.hint } : {}) });
        throw e;
      }
      continue;
    }
    const kind = FIELDS[key as keyof typeof FIELDS];
    if (!kind) throw bad(key, `is not a setting (known: ${[...Object.keys(FIELDS), 'rateLimit', 'accountLimits'].join(', ')})`);
    const problem = checkValue(kind, value);
    if (problem) throw bad(key, problem);
  }
  return raw as GatewayFileConfig;
}

/** Flag (or environment) values; undefined means "not given". */
export interface GatewayStartInput {
  config?: string | undefined;
  mode?: 'sandbox' | 'production' | undefined;
  host?: string | undefined;
  port?: number | undefined;
  httpPort?: number | null | undefined;
  dataDir?: string | undefined;
  feeBps?: number | undefined;
  trustProxy?: boolean | undefined;
  tls?: boolean | undefined;
  devEchoTokens?: boolean | undefined;
  logLevel?: string | undefined;
  logFormat?: LogFormat | undefined;
  rails?: 'sandbox' | 'none' | undefined;
  rateLimit?: number | undefined;
  rateLimitWindowMs?: number | undefined;
  signupRateLimit?: number | undefined;
  signupRateLimitWindowMs?: number | undefined;
  paymentRateLimit?: number | undefined;
  paymentRateLimitWindowMs?: number | undefined;
  /** --redis: the rate limits count in this Redis, across every gateway that uses it */
  redis?: string | undefined;
  /** --metrics: who may GET /metrics */
  metrics?: 'off' | 'loopback' | 'token' | undefined;
  database?: string | undefined;
  smtpUrl?: string | undefined;
  mailFrom?: string | undefined;
  /** the flags whose value came from their environment variable (flag name -> variable), to name it in errors */
  fromEnv?: ReadonlyMap<string, string> | undefined;
}

/** The settings an error may have to name, with their flag and config file key. */
const SETTINGS = {
  mode: { flag: '--mode', key: 'mode' },
  host: { flag: '--host', key: 'host' },
  port: { flag: '--port', key: 'port' },
  httpPort: { flag: '--http-port', key: 'httpPort' },
  dataDir: { flag: '--data-dir', key: 'dataDir' },
  tls: { flag: '--tls', key: 'tls' },
  devEchoTokens: { flag: '--dev-echo-tokens', key: 'devEchoTokens' },
  logLevel: { flag: '--log-level', key: 'logLevel' },
  rails: { flag: '--rails', key: 'rails' },
  redis: { flag: '--redis', key: 'redis' },
  metrics: { flag: '--metrics', key: 'metrics' },
  database: { flag: '--database', key: 'database' },
  smtpUrl: { flag: '--smtp-url', key: 'smtpUrl' },
  mailFrom: { flag: '--mail-from', key: 'mailFrom' },
} as const;
type Setting = keyof typeof SETTINGS;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * `--data-dir ""` (an unset shell variable, say) would resolve to the working directory and
 * make it a data dir (database, keys, mode file): refused. `--data-dir .` says so on purpose.
 */
export function checkDataDirFlag(value: string | undefined, env?: string): void {
  if (value !== undefined && value.trim() === '') {
    if (env) {
      throw usageError(`the environment variable ${env} (read for --data-dir) must not be blank: it names the directory for the database, keys and certificate`, `set it to a directory, e.g. ${env}=/var/lib/agentpay, or unset it (unset ${env}) for the default .agentpay`, { flag: '--data-dir', env });
    }
    throw usageError('--data-dir must not be empty: it names the directory for the database, keys and certificate', 'give a directory, e.g. --data-dir .agentpay (or --data-dir . for this one)', { flag: '--data-dir' });
  }
}

/**
 * --smtp-url and --mail-from: both or neither, each checked, errors naming where it was set.
 * The URL is never repeated in an error: it may hold the SMTP password.
 */
function mailSettings(smtpUrl: string | undefined, from: string | undefined, source: (s: 'smtpUrl' | 'mailFrom') => SettingSource): MailConfig | undefined {
  if (smtpUrl === undefined && from === undefined) return undefined;
  if (smtpUrl === undefined) {
    throw usageError(`${settingName(source('mailFrom'))} is set but no SMTP server is: mail needs both`, 'add --smtp-url smtp://user:password@host:587 (env AGENTPAY_SMTP_URL, config key smtpUrl), or drop the from address to keep mail in DATA_DIR/outbox.jsonl', settingDetails(source('mailFrom')));
  }
  if (from === undefined) {
    throw usageError(`${settingName(source('smtpUrl'))} is set but no from address is: mail needs both`, 'add --mail-from "Agentpay <no-reply@example.com>" (env AGENTPAY_MAIL_FROM, config key mailFrom)', settingDetails(source('smtpUrl')));
  }
  const urlProblem = smtpUrlProblem(smtpUrl);
  if (urlProblem) throw usageError(`${settingName(source('smtpUrl'))} ${urlProblem}`, undefined, settingDetails(source('smtpUrl')));
  const fromProblem = mailFromProblem(from);
  if (fromProblem) throw usageError(`${settingName(source('mailFrom'))} ${fromProblem}`, undefined, settingDetails(source('mailFrom')));
  return { smtpUrl, from };
}

export function gatewayStartOptions(input: GatewayStartInput, cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): RunGatewayOptions {
  checkBooleanEnv(env);
  const fromEnv = input.fromEnv ?? new Map<string, string>();
  checkDataDirFlag(input.dataDir, fromEnv.get('data-dir'));
  const filePath = input.config ? resolve(cwd, input.config) : undefined;
  const file = filePath ? readGatewayConfigFile(filePath, fromEnv.get('config')) : {};
  const pick = <T>(flag: T | undefined, fromFile: T | undefined, fallback: T): T => (flag !== undefined ? flag : fromFile !== undefined ? fromFile : fallback);
  /** where a setting's value comes from: its flag (or the flag's default), its environment variable, or the file */
  const source = (setting: Setting): SettingSource => {
    const { flag, key } = SETTINGS[setting];
    if (input[setting] !== undefined) {
      const variable = fromEnv.get(flag.slice(2));
      return variable ? { from: 'env', flag, env: variable, text: env[variable] } : { from: 'flag', flag };
    }
    if (filePath && file[key] !== undefined) return { from: 'file', flag, file: filePath, key };
    return { from: 'flag', flag };
  };

  const rate = {
    ...file.rateLimit,
    ...(input.rateLimit !== undefined ? { max: input.rateLimit } : {}),
    ...(input.rateLimitWindowMs !== undefined ? { windowMs: input.rateLimitWindowMs } : {}),
    ...(input.signupRateLimit !== undefined ? { signupMax: input.signupRateLimit } : {}),
    ...(input.signupRateLimitWindowMs !== undefined ? { signupWindowMs: input.signupRateLimitWindowMs } : {}),
    ...(input.paymentRateLimit !== undefined ? { paymentMax: input.paymentRateLimit } : {}),
    ...(input.paymentRateLimitWindowMs !== undefined ? { paymentWindowMs: input.paymentRateLimitWindowMs } : {}),
  };
  const redis = redisSetting(input.redis ?? file.redis, source('redis'));
  const feeBps = input.feeBps ?? file.feeBps;
  const mode = pick(input.mode, file.mode, 'production');
  const rails = input.rails ?? file.rails;
  if (rails === 'sandbox' && mode === 'production') {
    const railsFrom = source('rails');
    const modeFrom = source('mode');
    if (railsFrom.from === 'flag' && modeFrom.from === 'flag') {
      throw usageError('the sandbox rails (simulated processor, chain and bank) run only in sandbox mode: use --rails none or --mode sandbox');
    }
    throw usageError(
      `the sandbox rails (simulated processor, chain and bank) run only in sandbox mode, but ${settingAsSet(railsFrom, 'sandbox')} asks for them and the mode is production (${modeFrom.from === 'flag' && input.mode === undefined ? 'the default' : settingAsSet(modeFrom, 'production')})`,
      `change one: ${settingWithValue(railsFrom, 'none')}, or ${settingWithValue(modeFrom, 'sandbox')}`,
      { ...settingDetails(railsFrom) },
    );
  }
  const devEchoTokens = pick(input.devEchoTokens, file.devEchoTokens, false);
  const echoFrom = source('devEchoTokens');
  // refused by the gateway's own config check too; named here when it was not --dev-echo-tokens
  if (devEchoTokens && mode === 'production' && echoFrom.from !== 'flag') {
    const modeFrom = source('mode');
    throw usageError(
      `${settingAsSet(echoFrom, true)} is refused in production mode (${modeFrom.from === 'flag' && input.mode === undefined ? 'the default' : settingAsSet(modeFrom, 'production')}): it would put signup and password-reset tokens in API responses`,
      `remove it from ${echoFrom.from === 'env' ? 'the environment (unset ' + echoFrom.env + ')' : echoFrom.file}, or use sandbox mode: ${settingWithValue(modeFrom, 'sandbox')}`,
      settingDetails(echoFrom),
    );
  }
  const mail = mailSettings(input.smtpUrl ?? file.smtpUrl, input.mailFrom ?? file.mailFrom, source);
  const egressAllow = egressAllowSetting(env, file.webhookEgressAllow);
  const config: Partial<GatewayConfig> = {
    mode,
    ...(mail ? { mail } : {}),
    trustProxy: pick(input.trustProxy, file.trustProxy, false),
    devEchoTokens,
    ...(feeBps !== undefined ? { feeBps } : {}),
    ...(file.tokenTtlMs !== undefined ? { tokenTtlMs: file.tokenTtlMs } : {}),
    ...(typeof rails === 'string' ? { rails: { adapters: rails } } : {}),
    ...(typeof rails === 'object' ? { rails: realRails(rails, mode, env, filePath!) } : {}),
    ...(Object.keys(rate).length ? { rateLimit: rate as GatewayConfig['rateLimit'] } : {}),
    ...(file.accountLimits ? { accountLimits: file.accountLimits } : {}),
    ...(redis ? { redis: { url: redis.url } } : {}),
    ...metricsSetting(input.metrics ?? file.metrics, source('metrics'), env.AGENTPAY_METRICS_TOKEN || file.metricsToken),
    ...(file.keyEncryptionKeyFile ? { keyEncryption: { file: resolve(filePath!, '..', file.keyEncryptionKeyFile) } } : {}),
    ...(egressAllow ? { webhooks: { egressAllow } } : {}),
    ...(file.retention ? { retention: file.retention } : {}),
  };
  const logLevel = pick(input.logLevel, file.logLevel, 'info');
  if (!LOG_LEVELS.includes(logLevel)) {
    const from = source('logLevel');
    throw usageError(
      `${settingName(from)} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`,
      from.from === 'env' ? `correct ${from.env}, or unset it (unset ${from.env}) for the default, info` : from.from === 'file' ? `correct "${from.key}" in ${from.file}` : undefined,
      settingDetails(from),
    );
  }
  const host = pick(input.host, file.host, '127.0.0.1');
  // the settings that can still be refused when the gateway starts listening, named by their source
  const sources: NonNullable<RunGatewayOptions['sources']> = {};
  for (const setting of ['host', 'port', 'httpPort', 'tls', 'database'] as const) {
    const from = source(setting);
    if (from.from !== 'flag') sources[setting] = from;
  }
  return {
    dataDir: resolve(cwd, pick(input.dataDir, file.dataDir, LOCAL_DATA_DIR)),
    host,
    port: pick(input.port, file.port, 4402),
    httpPort: pick(input.httpPort, file.httpPort, 4080),
    tls: pick(input.tls, file.tls, true),
    config,
    ...(input.database ?? file.database ? { database: (input.database ?? file.database)! } : {}),
    devCredentials: false,
    logLevel,
    logFormat: pick(input.logFormat, file.logFormat, 'auto'),
    ...(Object.keys(sources).length ? { sources } : {}),
    ...(redis ? { redisSource: redis.from } : {}),
  };
}

/** AGENTPAY_WEBHOOK_EGRESS_ALLOW (comma-separated CIDR ranges) over the file's webhookEgressAllow. */
function egressAllowSetting(env: NodeJS.ProcessEnv, fromFile: string[] | undefined): string[] | undefined {
  const text = env.AGENTPAY_WEBHOOK_EGRESS_ALLOW;
  if (text === undefined || text.trim() === '') return fromFile;
  const list = text.split(',').map((x) => x.trim()).filter(Boolean);
  const problem = egressAllowProblem(list);
  if (problem) {
    throw usageError(`the environment variable AGENTPAY_WEBHOOK_EGRESS_ALLOW ${problem.replace(/^: /, 'has a bad entry: ')}`, 'give CIDR ranges separated by commas, e.g. AGENTPAY_WEBHOOK_EGRESS_ALLOW=10.20.0.0/16,fd12:3456::/48', { env: 'AGENTPAY_WEBHOOK_EGRESS_ALLOW' });
  }
  return list;
}

/** GET /metrics as set; token mode needs a token of MIN_METRICS_TOKEN characters, from the environment or the file (never a flag: ps shows those). */
function metricsSetting(mode: 'off' | 'loopback' | 'token' | undefined, from: SettingSource, token: string | undefined): Partial<GatewayConfig> {
  if (mode === undefined || mode === 'off') return {};
  if (mode === 'loopback') return { metrics: { mode } };
  if (!token || token.length < MIN_METRICS_TOKEN) {
    throw usageError(
      `${settingAsSet(from, 'token')} needs a metrics token of at least ${MIN_METRICS_TOKEN} characters`,
      'set AGENTPAY_METRICS_TOKEN (or "metricsToken" in the config file), e.g. AGENTPAY_METRICS_TOKEN=$(openssl rand -hex 24)',
      settingDetails(from),
    );
  }
  return { metrics: { mode, token } };
}

/** The Redis URL, checked; an error names where it was set, never the URL (it may hold a password). */
function redisSetting(url: string | undefined, from: SettingSource): { url: string; from: SettingSource } | undefined {
  if (url === undefined || (from.from === 'env' && url === '')) return undefined;
  if (!isRedisUrl(url)) {
    throw usageError(`${settingName(from)} must be a redis:// or rediss:// URL`, 'e.g. redis://127.0.0.1:6379 (or rediss:// for TLS); leave it out to count rate limits in this process', settingDetails(from));
  }
  return { url, from };
}

/** The rails section's adapters, secrets read from files or the environment; refused naming the key. */
function realRails(section: RailsSection, mode: 'sandbox' | 'production', env: NodeJS.ProcessEnv, file: string): NonNullable<GatewayConfig['rails']> {
  try {
    return buildRails(section, { mode, env, clock: systemClock, baseDir: resolve(file, '..') });
  } catch (e) {
    if (e instanceof RailsConfigError) throw new CliError('CONFIG_INVALID', `${file}: ${e.message}`, { exit: 2, details: { file, field: e.field }, ...(e.hint ? { tryNext: e.hint } : {}) });
    throw e;
  }
}
