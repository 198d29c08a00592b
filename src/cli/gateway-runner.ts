/**
 * Runs a gateway in this process for `agentpay dev` and `agentpay gateway start`:
 * config validated once, logs (pino) on stderr, dev credentials in sandbox mode when
 * asked, DATA_DIR/gateway.lock from before it opens anything until it stops (one gateway
 * per data dir), DATA_DIR/gateway.json while it runs, and a graceful stop on SIGINT/SIGTERM.
 * The gateway itself is src/gateway/server.ts; this file only wires it to a process.
 */
import { resolve } from 'node:path';
import pino from 'pino';
import { ensureDevCredentials } from '../gateway/dev-credentials.js';
import { resolveConfig, type GatewayConfig } from '../gateway/config.js';
import { startGateway, type RunningGateway } from '../gateway/server.js';
import { RedisUnreachableError } from '../gateway/rate-counter.js';
import { CliError, EXIT, storageError, usageError } from './errors/index.js';
import { KeyEncryptionSettingError, keyEncryptionKeysFrom } from '../domain/payments/key-sealing.js';
import { DatabaseUnavailable, redactUrl } from '../store/errors.js';
import { lockGatewayDataDir, removeGatewayFile, writeGatewayFile } from './local-gateway.js';
import { colorsFor, prettyDestination, usePretty, type LogFormat } from './log-pretty.js';
import { settingAsSet, settingDetails, settingName, settingWithValue, type SettingSource } from './setting-source.js';

export interface RunGatewayOptions {
  dataDir: string;
  host?: string;
  port: number;
  /** plain-HTTP port that refuses everything with 403 INSECURE_TRANSPORT; null for none */
  httpPort: number | null;
  tls: boolean;
  config: Partial<GatewayConfig>;
  /** make (first start) or reuse the operator/workspace/provider dev keys; sandbox only */
  devCredentials: boolean;
  logLevel: string;
  /** pretty lines on a terminal, pino's JSON when piped (auto, the default), or either always */
  logFormat?: LogFormat;
  /** a PostgreSQL URL: the database of a fleet (docs/deploy.md); without it, SQLite in dataDir */
  database?: string;
  /** where these settings came from when not from their flags (environment, config file), for errors to name */
  sources?: Partial<Record<'host' | 'port' | 'httpPort' | 'tls' | 'database', SettingSource>>;
  /** where the Redis URL came from, to name it when Redis cannot be reached */
  redisSource?: SettingSource;
}

/** The ready line of `agentpay dev --json` (DESIGN.md); the dev keys only in sandbox mode. */
export interface ReadyInfo {
  baseUrl: string;
  httpUrl: string | null;
  caCertPath: string | null;
  dataDir: string;
  operatorKey?: string;
  workspace?: { id: string; apiKey: string };
  provider?: { id: string; apiKey: string; walletId: string };
}

export interface LocalGateway {
  ready: ReadyInfo;
  config: GatewayConfig;
  gateway: RunningGateway;
  log: pino.Logger;
  stop(): Promise<void>;
}

/** Config errors at boot are the person's to fix: say which setting and why. */
export function validateConfig(partial: Partial<GatewayConfig>): GatewayConfig {
  try {
    return resolveConfig(partial);
  } catch (e) {
    throw usageError(`invalid gateway configuration: ${(e as Error).message}`);
  }
}

export async function runGateway(opts: RunGatewayOptions): Promise<LocalGateway> {
  const dataDir = resolve(opts.dataDir);
  const config = validateConfig(opts.config);
  if (!opts.tls && !config.trustProxy) throw plainHttpWithoutProxy(opts.sources?.tls);
  // a key-encryption key that cannot be used is refused before the data dir is touched (startGateway reads it again)
  try {
    keyEncryptionKeysFrom(config.keyEncryption);
  } catch (e) {
    throw keyEncryptionError(e) ?? e;
  }
  try {
    // before the database, keys or certificate are touched: a second gateway on this data dir
    // would otherwise serve a certificate the CA on disk does not sign
    const unlock = lockGatewayDataDir(dataDir);
    try {
      return await startLocked(dataDir, config, opts, unlock);
    } catch (e) {
      unlock();
      throw e;
    }
  } catch (e) {
    if (e instanceof DatabaseUnavailable) throw databaseUnavailable(e, opts.sources?.database);
    // a file or the database in the data dir is the person's to fix: named, with this data dir
    throw storageError(e, dataDir) ?? e;
  }
}

/** TLS is off but no proxy is trusted; named where TLS was turned off, with the same way to trust the proxy. */
function plainHttpWithoutProxy(tls: SettingSource | undefined): CliError {
  const why = 'serves plain HTTP and is only for running behind a TLS-terminating proxy';
  if (!tls || tls.from === 'flag') return usageError(`--no-tls ${why}; add --trust-proxy`);
  const trust = tls.from === 'env' ? 'AGENTPAY_TRUST_PROXY=true' : `"trustProxy": true to ${tls.file}`;
  return usageError(`${settingAsSet(tls, false)} ${why}; add ${trust} (or --trust-proxy)`, undefined, settingDetails(tls));
}

async function startLocked(dataDir: string, config: GatewayConfig, opts: RunGatewayOptions, unlock: () => void): Promise<LocalGateway> {
  const stderr = pino.destination({ fd: 2, sync: true });
  const dest = usePretty(opts.logFormat ?? 'auto', process.stderr) ? prettyDestination(stderr, colorsFor(process.stderr)) : stderr;
  const log = pino({ level: opts.logLevel, base: { pid: process.pid } }, dest);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      dataDir,
      ...(opts.host ? { host: opts.host } : {}),
      port: opts.port,
      httpPort: opts.httpPort,
      tls: opts.tls,
      config,
      logger: { level: opts.logLevel, stream: dest },
      // each request's line also goes to DATA_DIR/logs/requests.jsonl, for agentpay logs tail
      requestLog: true,
      ...(opts.database ? { database: opts.database } : {}),
    });
  } catch (e) {
    throw listenError(e, opts) ?? redisError(e, opts.redisSource) ?? keyEncryptionError(e) ?? e;
  }

  let ready: ReadyInfo = { baseUrl: gateway.baseUrl, httpUrl: gateway.httpUrl, caCertPath: gateway.tls?.caCertPath ?? null, dataDir };
  try {
    if (opts.devCredentials && config.mode === 'sandbox') {
      const creds = await ensureDevCredentials(gateway.services.ctx, dataDir);
      ready = { ...ready, operatorKey: creds.operatorKey, workspace: creds.workspace, provider: creds.provider };
    }
    writeGatewayFile(dataDir, { baseUrl: gateway.baseUrl, httpUrl: gateway.httpUrl, pid: process.pid });
  } catch (e) {
    await gateway.close();
    throw e;
  }
  log.info({ baseUrl: ready.baseUrl, httpUrl: ready.httpUrl, instanceId: gateway.services.instanceId, mode: config.mode, dataDir, database: opts.database ? redactUrl(opts.database) : 'sqlite' }, 'gateway ready');

  let stopping: Promise<void> | undefined;
  return {
    ready,
    config,
    gateway,
    log,
    stop() {
      // everything in flight is already durable: each money movement is one committed transaction
      stopping ??= (async () => {
        removeGatewayFile(dataDir);
        try {
          await gateway.close();
        } finally {
          unlock();
        }
        log.info('gateway stopped');
      })();
      return stopping;
    },
  };
}

/** Redis named by --redis cannot be reached at start: the gateway does not start (src/gateway/rate-counter.ts). */
/** A key-encryption key setting that cannot be used: the person's to fix, named by its variable or config key. */
function keyEncryptionError(e: unknown): CliError | undefined {
  if (!(e instanceof KeyEncryptionSettingError)) return undefined;
  return usageError(e.message, 'docs/deploy.md § Signing keys and the key-encryption key', e.setting.startsWith('AGENTPAY_') ? { env: e.setting } : { field: e.setting });
}

function redisError(e: unknown, from: SettingSource | undefined): CliError | undefined {
  if (!(e instanceof RedisUnreachableError)) return undefined;
  const setting = from ? settingName(from) : '--redis';
  return new CliError('REDIS_UNREACHABLE', `${e.message} (${setting})`, {
    exit: EXIT.UNREACHABLE,
    tryNext: `start Redis or correct ${setting}; without it the rate limits count in this process only`,
    details: { ...(from ? settingDetails(from) : { flag: '--redis' }), redis: e.url },
  });
}

function listenError(e: unknown, opts: RunGatewayOptions): CliError | undefined {
  const err = e as NodeJS.ErrnoException & { port?: number };
  const port = err.port ?? opts.port;
  const http = port === opts.httpPort;
  // the port's setting as the person gave it: its flag, its environment variable or a key of the config file
  const portSource: SettingSource = (http ? opts.sources?.httpPort : opts.sources?.port) ?? { from: 'flag', flag: http ? '--http-port' : '--port' };
  const setPort = (n: string) => settingWithValue(portSource, n);
  const portDetails = portSource.from === 'flag' ? { port } : { port, ...settingDetails(portSource) };
  if (err.code === 'EADDRINUSE') {
    const from = portSource.from === 'flag' ? '' : ` (${settingName(portSource)})`;
    return new CliError('PORT_IN_USE', `port ${port}${from} is already in use`, { tryNext: `pick another with ${setPort('N')}, or ${setPort('0')} for a free one`, details: portDetails });
  }
  // only the listen itself: an unreadable file in the data dir is EACCES too
  if (err.code === 'EACCES' && err.syscall === 'listen') {
    const from = portSource.from === 'flag' ? '' : ` (${settingName(portSource)})`;
    return new CliError('PORT_NOT_ALLOWED', `not allowed to listen on port ${port}${from}`, { exit: EXIT.REFUSED, tryNext: `use a port above 1023 (${setPort('N')})`, details: portDetails });
  }
  // --host names no address of this machine, or no address at all: the person's to fix
  const host = opts.host ?? '127.0.0.1';
  const hostSource: SettingSource = opts.sources?.host ?? { from: 'flag', flag: '--host' };
  const named = settingAsSet(hostSource, host);
  const hostDetails = { ...settingDetails(hostSource), host, cause: err.code };
  const fix = hostSource.from === 'flag' ? '' : ` (set in ${hostSource.from === 'env' ? `the environment variable ${hostSource.env}` : hostSource.file})`;
  const otherHost = `give an address of this machine${fix}: 127.0.0.1 (this machine only), 0.0.0.0 (every interface), or one its network interfaces have (ip addr)`;
  if (err.code === 'EADDRNOTAVAIL') {
    return usageError(`${named} is not an address of this machine, so the gateway cannot listen on it`, otherHost, hostDetails);
  }
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.code === 'EAI_NONAME' || err.code === 'EAI_FAIL') {
    const why = err.code === 'EAI_AGAIN' ? 'could not be resolved now (the name server did not answer)' : 'does not resolve to an address';
    return usageError(`${named} ${why}`, `check its spelling, or ${otherHost}`, hostDetails);
  }
  return undefined;
}

/**
 * Resolves on the first SIGINT or SIGTERM. A second signal while stopping exits at once
 * (after removing gateway.json), for a person who does not want to wait.
 */
export function untilStopSignal(onForce: () => void): Promise<NodeJS.Signals> {
  return new Promise((res) => {
    const first = (signal: NodeJS.Signals) => {
      process.off('SIGINT', first);
      process.off('SIGTERM', first);
      const force = () => {
        onForce();
        process.exit(130);
      };
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      res(signal);
    };
    process.on('SIGINT', first);
    process.on('SIGTERM', first);
  });
}

/**
 * The PostgreSQL database could not be used: one error naming the setting it came from (never
 * the password: the store's message has it redacted). Exit 2 for a URL that is not one, 1 else.
 */
export function databaseUnavailable(e: DatabaseUnavailable, source: SettingSource = { from: 'flag', flag: '--database' }): CliError {
  const tryNext = {
    url: `correct ${settingName(source)}: postgres://user:password@host:5432/database`,
    connect: `check that PostgreSQL runs and accepts this user from here, or correct ${settingName(source)}`,
    newer: 'run the agentpay version that migrated this database (or newer), or give another database',
    migrate: 'run agentpay gateway migrate --database ... with the same URL, then start again',
  }[e.reason];
  return new CliError('DATABASE_ERROR', `${settingName(source)}: ${e.message}`, {
    exit: e.reason === 'url' ? EXIT.USAGE : EXIT.REFUSED,
    tryNext,
    details: { ...settingDetails(source), reason: e.reason },
  });
}
