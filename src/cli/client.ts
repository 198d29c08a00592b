/**
 * Which gateway, key and CA a command uses, and the API client built from them.
 * Each field is taken from the first source that has it:
 *   flags (--gateway-url, --api-key, --ca; then --data-dir with --as)
 *   > environment (AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA)
 *   > the profile (--profile, AGENTPAY_PROFILE, or the current one)
 *   > a local dev gateway in the nearest .agentpay (this directory or a parent; with --as).
 * Old names (--base-url, AGENTPAY_BASE_URL) still work, with a notice (old-names.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentpayClient } from 'agentpay-sdk/client';
import { CliError, EXIT, usageError } from './errors/index.js';
import { findLocalDataDir, gatewayNotRunning, localConnection, runningGateway, type DevRole } from './local-gateway.js';
import { envSetting } from './old-names.js';
import { closeAtEnd } from './open-connections.js';
import { configPath, loadProfiles, profileNotFound } from './profile.js';

export interface ConnectionFlags {
  profile?: string | undefined;
  'gateway-url'?: string | undefined;
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
  /** the saved profile that gave the gateway (URL, CA), and the config file holding it: errors name them */
  gatewayProfile?: { name: string; path: string };
  /** the data dir consulted (--data-dir or the nearest .agentpay), if any */
  dataDir?: string;
  /** the environment variable the gateway URL came from (AGENTPAY_GATEWAY_URL, or an old name) */
  urlEnv?: string;
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
export function resolveConnection(flags: ConnectionFlags, opts: { env?: NodeJS.ProcessEnv; cwd?: string; home?: string; optionalProfile?: boolean } = {}): Connection {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const as = flags.as ?? 'workspace';
  const layers: Layer[] = [{ source: 'flag', baseUrl: flags['gateway-url'], apiKey: flags['api-key'], ca: flags.ca && resolve(cwd, flags.ca) }];
  const conn: Connection = { sources: {} };

  if (flags['data-dir']) {
    const local = localConnection(resolve(cwd, flags['data-dir']), as);
    // asking for a data dir means its gateway: never fall through to another source's URL
    if (!local.baseUrl && !flags['gateway-url']) throw gatewayNotRunning(local.dataDir);
    conn.dataDir = local.dataDir;
    layers.push({ source: 'data-dir', ...local });
  }
  const urlEnv = envSetting(env, 'AGENTPAY_GATEWAY_URL');
  if (urlEnv) conn.urlEnv = urlEnv.from;
  layers.push({ source: 'env', baseUrl: urlEnv?.value, apiKey: env.AGENTPAY_API_KEY, ca: env.AGENTPAY_CA && resolve(cwd, env.AGENTPAY_CA) });

  const file = loadProfiles(env);
  const asked = flags.profile ?? env.AGENTPAY_PROFILE;
  const name = asked ?? file.current;
  const p = name ? file.profiles[name] : undefined;
  if (name && !p && asked && !opts.optionalProfile) throw profileNotFound(name, file);
  // a profile being saved (login, signup --profile NEW) is on the current profile's gateway, with its own key
  const current = name && !p && file.current ? file.profiles[file.current] : undefined;
  const gatewayOf = p ?? current;
  let profileLayer: Layer | undefined;
  if (gatewayOf) {
    if (p) conn.profile = name;
    // a profile saved from a dev gateway follows it across restarts on new ports
    const live = gatewayOf.dataDir ? runningGateway(gatewayOf.dataDir) : undefined;
    if (gatewayOf.dataDir) conn.profileDataDir = gatewayOf.dataDir;
    conn.gatewayProfile = { name: p ? name! : file.current!, path: configPath(env) };
    profileLayer = { source: 'profile', baseUrl: live?.baseUrl ?? gatewayOf.baseUrl, apiKey: p?.apiKey, ca: gatewayOf.ca };
  }
  // the profile named ranks above ./.agentpay; the current profile's gateway, lent to a profile being
  // saved, only below it (docs/cli.md: "from the flags, the environment or ./.agentpay as usual, else
  // from the current profile")
  if (p && profileLayer) layers.push(profileLayer);

  // the nearest .agentpay comes last: it is not even looked for when the sources above give the gateway and the key
  const complete = layers.some((l) => l.baseUrl) && layers.some((l) => l.apiKey);
  const localDir = !flags['data-dir'] && !complete ? findLocalDataDir(cwd, opts.home) : undefined;
  if (localDir) {
    const local = localConnection(localDir, as);
    conn.dataDir ??= local.dataDir;
    layers.push({ source: 'local', ...local });
  }
  if (!p && profileLayer) layers.push(profileLayer);

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

const EXAMPLE_URL = 'https://127.0.0.1:4402';
const LOCAL_CA = "a local gateway's is DATA_DIR/tls/ca.pem";

/**
 * Where the connection's gateway URL or CA came from, as an error names it (the flag, the
 * environment variable, the profile in its config file, a data dir's file), and how to correct it there.
 */
function sourceOf(conn: Connection, field: 'baseUrl' | 'ca'): { name: string; fix: string; details: Record<string, string> } {
  const url = field === 'baseUrl';
  switch (conn.sources[field]) {
    case 'env': {
      const env = url ? (conn.urlEnv ?? 'AGENTPAY_GATEWAY_URL') : 'AGENTPAY_CA';
      const what = url ? `a gateway URL such as ${EXAMPLE_URL}` : `the gateway's CA certificate (${LOCAL_CA})`;
      return { name: env, fix: `set ${env} to ${what}, or unset it (unset ${env})`, details: { env } };
    }
    case 'profile': {
      const { name, path } = conn.gatewayProfile!;
      const flag = url ? '--gateway-url URL' : '--ca PATH';
      return {
        name: `"${field}" of profile "${name}" in ${path}`,
        fix: `correct it in ${path}, or save the profile again: agentpay login --profile ${name} ${flag} --api-key KEY`,
        details: { profile: name, path, field },
      };
    }
    case 'data-dir':
    case 'local': {
      const dir = conn.dataDir!;
      return { name: url ? join(dir, 'gateway.json') : join(dir, 'tls', 'ca.pem'), fix: `restart the gateway on it: npx agentpay dev --data-dir ${dir}`, details: { dataDir: dir } };
    }
    default:
      return url
        ? { name: '--gateway-url', fix: `pass one like --gateway-url ${EXAMPLE_URL}`, details: { flag: '--gateway-url' } }
        : { name: '--ca', fix: `pass the gateway's CA with --ca PATH (${LOCAL_CA})`, details: { flag: '--ca' } };
  }
}

/** The gateway's URL, or an error saying how to get one. */
export function requireBaseUrl(conn: Connection): string {
  if (!conn.baseUrl) {
    if (conn.dataDir) throw gatewayNotRunning(conn.dataDir);
    throw new CliError('NO_GATEWAY', 'no gateway configured', {
      exit: EXIT.UNREACHABLE,
      tryNext: 'log in to one: agentpay login --gateway-url URL --api-key KEY, or start a local one: npx agentpay dev',
    });
  }
  let url: URL | undefined;
  try {
    url = new URL(conn.baseUrl);
  } catch {
    // reported below, with where it came from
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    const from = sourceOf(conn, 'baseUrl');
    const problem = url ? 'must start with https://' : 'is not a URL';
    throw usageError(`the gateway URL ${JSON.stringify(conn.baseUrl)} from ${from.name} ${problem}`, from.fix, from.details);
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

/** The CA certificate at `path`; `conn` (whose CA it is) names where a missing one was set. */
export function readCa(path: string, conn?: Connection): string {
  if (!existsSync(path)) {
    const from = conn ? sourceOf(conn, 'ca') : undefined;
    const named = from && from.name !== '--ca' ? ` (from ${from.name})` : '';
    throw new CliError('CA_NOT_FOUND', `the CA certificate ${path}${named} does not exist`, {
      exit: EXIT.UNREACHABLE,
      tryNext: from?.fix ?? `pass the gateway's CA with --ca PATH (${LOCAL_CA})`,
      ...(named ? { details: from!.details } : {}),
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
  return closeAtEnd(new AgentpayClient({ gatewayUrl: baseUrl, env: false, ...(apiKey ? { apiKey } : {}), ...(conn.ca ? { ca: readCa(conn.ca, conn) } : {}) }));
}
