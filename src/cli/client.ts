/**
 * Which gateway, key and CA a command uses, and the API client built from them.
 * Each field is taken from the first source that has it:
 *   flags (--base-url, --api-key, --ca; then --data-dir with --as)
 *   > environment (AGENTPAY_BASE_URL, AGENTPAY_API_KEY, AGENTPAY_CA)
 *   > the profile (--profile, AGENTPAY_PROFILE, or the current one)
 *   > a local dev gateway in ./.agentpay (with --as).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentpayClient } from '../sdk/client/index.js';
import { CliError, EXIT, usageError } from './errors.js';
import { gatewayNotRunning, isGatewayDataDir, LOCAL_DATA_DIR, localConnection, runningGateway, type DevRole } from './local-gateway.js';
import { loadProfiles, profileNotFound } from './profile.js';

export interface ConnectionFlags {
  profile?: string | undefined;
  'base-url'?: string | undefined;
  'api-key'?: string | undefined;
  ca?: string | undefined;
  'data-dir'?: string | undefined;
  as?: DevRole | undefined;
}

export type Source = 'flag' | 'data-dir' | 'env' | 'profile' | 'local';

export interface Connection {
  baseUrl?: string;
  apiKey?: string;
  /** path of the CA certificate to trust */
  ca?: string;
  /** the profile consulted, if any */
  profile?: string;
  /** the data dir whose gateway the profile in use follows (a profile saved from a local gateway) */
  profileDataDir?: string;
  /** the data dir consulted (--data-dir or ./.agentpay), if any */
  dataDir?: string;
  sources: Partial<Record<'baseUrl' | 'apiKey' | 'ca', Source>>;
}

interface Layer {
  source: Source;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  ca?: string | undefined;
}

/**
 * `optionalProfile`: a profile named but not saved is skipped instead of refused (login
 * and signup are how a profile gets saved under that name).
 */
export function resolveConnection(flags: ConnectionFlags, opts: { env?: NodeJS.ProcessEnv; cwd?: string; optionalProfile?: boolean } = {}): Connection {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const as = flags.as ?? 'workspace';
  const layers: Layer[] = [{ source: 'flag', baseUrl: flags['base-url'], apiKey: flags['api-key'], ca: flags.ca && resolve(cwd, flags.ca) }];
  const conn: Connection = { sources: {} };

  if (flags['data-dir']) {
    const local = localConnection(resolve(cwd, flags['data-dir']), as);
    // asking for a data dir means its gateway: never fall through to another source's URL
    if (!local.baseUrl && !flags['base-url']) throw gatewayNotRunning(local.dataDir);
    conn.dataDir = local.dataDir;
    layers.push({ source: 'data-dir', ...local });
  }
  layers.push({ source: 'env', baseUrl: env.AGENTPAY_BASE_URL, apiKey: env.AGENTPAY_API_KEY, ca: env.AGENTPAY_CA && resolve(cwd, env.AGENTPAY_CA) });

  const file = loadProfiles(env);
  const asked = flags.profile ?? env.AGENTPAY_PROFILE;
  const name = asked ?? file.current;
  const p = name ? file.profiles[name] : undefined;
  if (name && !p && asked && !opts.optionalProfile) throw profileNotFound(name, file);
  // a profile being saved (login, signup --profile NEW) is on the current profile's gateway, with its own key
  const current = name && !p && file.current ? file.profiles[file.current] : undefined;
  const gatewayOf = p ?? current;
  if (gatewayOf) {
    if (p) conn.profile = name;
    // a profile saved from a dev gateway follows it across restarts on new ports
    const live = gatewayOf.dataDir ? runningGateway(gatewayOf.dataDir) : undefined;
    if (gatewayOf.dataDir) conn.profileDataDir = gatewayOf.dataDir;
    layers.push({ source: 'profile', baseUrl: live?.baseUrl ?? gatewayOf.baseUrl, apiKey: p?.apiKey, ca: gatewayOf.ca });
  }

  // ./.agentpay comes last: it is not even read when the sources above give the gateway and the key
  const localDir = join(cwd, LOCAL_DATA_DIR);
  const complete = layers.some((l) => l.baseUrl) && layers.some((l) => l.apiKey);
  if (!flags['data-dir'] && !complete && isGatewayDataDir(localDir)) {
    const local = localConnection(localDir, as);
    conn.dataDir ??= local.dataDir;
    layers.push({ source: 'local', ...local });
  }

  for (const field of ['baseUrl', 'apiKey'] as const) {
    const layer = layers.find((l) => l[field]);
    if (layer) {
      conn[field] = layer[field]!;
      conn.sources[field] = layer.source;
    }
  }
  // --as picks a dev key of a data dir; a key from a flag, the environment or a profile ranks above
  // ./.agentpay, and would silently win over what --as asked for
  const keySource = conn.sources.apiKey;
  if (flags.as && (keySource === 'flag' || keySource === 'env' || keySource === 'profile')) {
    const from = { flag: 'the --api-key flag', env: 'AGENTPAY_API_KEY', profile: `profile "${conn.profile}"` }[keySource];
    throw usageError(
      `--as ${flags.as} picks a dev key of a local gateway's data dir, but the key in use comes from ${from}`,
      `use that gateway's ${flags.as} key: --data-dir DIR --as ${flags.as} (e.g. --data-dir .agentpay)${keySource === 'flag' ? ' without --api-key' : ''}; or drop --as`,
      { flag: '--as' },
    );
  }
  // A CA replaces the system's trusted roots, so a saved or local one only goes with its own
  // gateway URL; a CA given by flag or env applies to whatever gateway is used.
  const urlLayer = layers.find((l) => l.baseUrl);
  const caLayer = layers.find((l) => l.ca && (l.source === 'flag' || l.source === 'env' || l === urlLayer));
  if (caLayer) {
    conn.ca = caLayer.ca!;
    conn.sources.ca = caLayer.source;
  }
  return conn;
}

/** The gateway's URL, or an error saying how to get one. */
export function requireBaseUrl(conn: Connection): string {
  if (!conn.baseUrl) {
    if (conn.dataDir) throw gatewayNotRunning(conn.dataDir);
    throw new CliError('NO_GATEWAY', 'no gateway configured', {
      exit: EXIT.UNREACHABLE,
      tryNext: 'log in to one: agentpay login --base-url URL --api-key KEY, or start a local one: npx agentpay dev',
    });
  }
  let url: URL;
  try {
    url = new URL(conn.baseUrl);
  } catch {
    throw usageError(`the gateway URL ${JSON.stringify(conn.baseUrl)} (from ${conn.sources.baseUrl}) is not a URL`, 'pass one like --base-url https://127.0.0.1:4402');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw usageError(`the gateway URL must start with https://, got ${conn.baseUrl}`);
  }
  return conn.baseUrl;
}

export function requireApiKey(conn: Connection): string {
  if (!conn.apiKey) {
    throw new CliError('NOT_AUTHENTICATED', 'no API key: this command needs one', {
      exit: EXIT.UNAUTHENTICATED,
      tryNext: 'log in: agentpay login (or pass --api-key, or set AGENTPAY_API_KEY)',
    });
  }
  return conn.apiKey;
}

export function readCa(path: string): string {
  if (!existsSync(path)) {
    throw new CliError('CA_NOT_FOUND', `the CA certificate ${path} does not exist`, {
      exit: EXIT.UNREACHABLE,
      tryNext: "pass the gateway's CA with --ca PATH (a local gateway's is DATA_DIR/tls/ca.pem)",
    });
  }
  return readFileSync(path, 'utf8');
}

/**
 * A client for the resolved gateway. With `auth` (the default) an API key is required;
 * without, none is sent (signup and account routes are public).
 */
export function makeClient(conn: Connection, opts: { auth?: boolean; apiKey?: string } = {}): AgentpayClient {
  const baseUrl = requireBaseUrl(conn);
  const apiKey = opts.apiKey ?? (opts.auth === false ? undefined : requireApiKey(conn));
  return new AgentpayClient({ baseUrl, ...(apiKey ? { apiKey } : {}), ...(conn.ca ? { ca: readCa(conn.ca) } : {}) });
}
