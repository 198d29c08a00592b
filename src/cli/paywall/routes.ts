/**
 * Which requests `agentpay proxy` sells, and with which capability: the route table built from
 * `--capability` and the `--config` file, and the one lookup the proxy makes per request.
 *
 * A config file (JSON):
 *
 *   { "upstream": "http://127.0.0.1:8080",
 *     "routes": { "GET /forecast": "cap_…", "POST /reports/*": "cap_…", "/users/:id/history": "cap_…",
 *                 "GET /health": "free" },
 *     "unknownRoutes": "reject" }
 *
 * A route key is `METHOD /path` or `/path` (any method); in the path `:name` matches one segment and a
 * final `*` matches the rest (anything, slashes included); a GET route also takes HEAD. Its value is a capability id (the price
 * is the capability's, set on the gateway) or "free" (forwarded as is). The first route that matches,
 * in the file's order, wins. A request no route matches is sold with `--capability` when given, else
 * answered 404 without reaching the upstream ("reject", the default), or forwarded free ("pass",
 * `--pass-unknown`). Pure: no I/O, no HTTP.
 */
import { usageError } from '../errors/index.js';

export type RouteTarget = { kind: 'paid'; capabilityId: string } | { kind: 'free' };

export interface Route {
  /** the key as written in the config file, e.g. "GET /forecast" */
  key: string;
  /** upper case; undefined: any method */
  method: string | undefined;
  pattern: string;
  target: RouteTarget;
  matches(method: string, path: string): boolean;
}

/** What happens to a request no route matches. */
export type Otherwise = RouteTarget | { kind: 'reject' };

export interface RouteTable {
  routes: Route[];
  otherwise: Otherwise;
}

/** Where a capability id came from, for the messages that name it. */
export interface CapabilitySource {
  capabilityId: string;
  /** "--capability", or `route "GET /x" of proxy.json` */
  from: string;
}

/** The parsed config file. */
export interface ProxyConfig {
  upstream?: string;
  routes: Array<{ key: string; value: string }>;
  unknownRoutes?: 'reject' | 'pass';
}

const FREE = 'free';
const METHOD = /^[A-Z]+$/;
const CAPABILITY_ID = /^cap_[A-Za-z0-9_-]+$/;

/** A config file's problem, naming the file and the field. */
const configError = (file: string, field: string, problem: string, fix: string) =>
  usageError(`${file}: ${field} ${problem}`, fix, { file, field, flag: '--config' });

/** Parses and checks the text of a config file; `file` is how messages name it. */
export function parseProxyConfig(text: string, file: string): ProxyConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw usageError(`${file} is not JSON: ${(e as Error).message}`, 'fix the file (see docs/cli.md, "agentpay proxy")', { file, flag: '--config' });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw usageError(`${file} must hold a JSON object with "routes"`, '{"routes": {"GET /forecast": "cap_…", "GET /health": "free"}}', { file, flag: '--config' });
  }
  const o = doc as Record<string, unknown>;
  const known = new Set(['upstream', 'routes', 'unknownRoutes']);
  for (const k of Object.keys(o)) {
    if (!known.has(k)) throw configError(file, `"${k}"`, 'is not a setting of the proxy', 'the settings are "upstream", "routes" and "unknownRoutes"; remove it');
  }
  if (o.upstream !== undefined && typeof o.upstream !== 'string') throw configError(file, '"upstream"', 'must be a URL string', '"upstream": "http://127.0.0.1:8080"');
  if (o.unknownRoutes !== undefined && o.unknownRoutes !== 'reject' && o.unknownRoutes !== 'pass') {
    throw configError(file, '"unknownRoutes"', `is ${JSON.stringify(o.unknownRoutes)}`, 'use "reject" (404, the default) or "pass" (forward free)');
  }
  const routes = o.routes;
  if (typeof routes !== 'object' || routes === null || Array.isArray(routes) || Object.keys(routes).length === 0) {
    throw configError(file, '"routes"', 'must be an object with at least one route', '"routes": {"GET /forecast": "cap_…", "GET /health": "free"}');
  }
  const list = Object.entries(routes as Record<string, unknown>).map(([key, value]) => {
    if (typeof value !== 'string') throw configError(file, `routes["${key}"]`, 'must be a capability id (cap_…) or "free"', `"${key}": "cap_…"`);
    return { key, value };
  });
  return {
    routes: list,
    ...(typeof o.upstream === 'string' ? { upstream: o.upstream } : {}),
    ...(o.unknownRoutes !== undefined ? { unknownRoutes: o.unknownRoutes as 'reject' | 'pass' } : {}),
  };
}

/** A path pattern as a matcher: `:name` one segment, a final `*` the rest. */
function pathMatcher(pattern: string): (path: string) => boolean {
  const rest = pattern.endsWith('*');
  const fixed = rest ? pattern.slice(0, -1) : pattern;
  const parts = fixed.split('/').map((seg) => (seg.startsWith(':') && seg.length > 1 ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  const re = new RegExp(`^${parts.join('/')}${rest ? '.*' : ''}$`);
  return (path) => re.test(path);
}

/** One route of the file, checked. */
function route(key: string, value: string, file: string): Route {
  const m = /^\s*(?:(\S+)\s+)?(\S+)\s*$/.exec(key);
  const method = m?.[1]?.toUpperCase();
  const pattern = m?.[2];
  if (!m || !pattern || !pattern.startsWith('/') || (method !== undefined && method !== '*' && !METHOD.test(method))) {
    throw configError(file, `route "${key}"`, 'is not "METHOD /path" or "/path"', 'e.g. "GET /forecast", "POST /reports/*" or "/users/:id" (any method)');
  }
  if (pattern.slice(0, -1).includes('*')) throw configError(file, `route "${key}"`, 'has a * before its end', 'a * matches the rest of the path and goes last: "/reports/*"');
  if (value !== FREE && !CAPABILITY_ID.test(value)) {
    throw configError(file, `routes["${key}"]`, `is ${JSON.stringify(value)}, not a capability id (cap_…) or "free"`, 'agentpay capabilities list shows your capability ids');
  }
  const anyMethod = method === undefined || method === '*';
  const matchPath = pathMatcher(pattern);
  return {
    key,
    method: anyMethod ? undefined : method,
    pattern,
    target: value === FREE ? { kind: 'free' } : { kind: 'paid', capabilityId: value },
    // HEAD goes with GET (a sold GET route refuses it with 405; a free one forwards it)
    matches: (reqMethod, path) => (anyMethod || reqMethod.toUpperCase() === method || (method === 'GET' && reqMethod.toUpperCase() === 'HEAD')) && matchPath(path),
  };
}

/**
 * The table from the flags and the file. `capability`: the capability that sells every route
 * (without a file), or every route the file does not list (with one).
 */
export function routeTable(o: { capability?: string | undefined; config?: ProxyConfig | undefined; configFile?: string | undefined; passUnknown?: boolean | undefined }): RouteTable {
  if (o.capability !== undefined && !CAPABILITY_ID.test(o.capability)) {
    throw usageError(`--capability ${JSON.stringify(o.capability)} is not a capability id (cap_…)`, 'agentpay capabilities list shows your capability ids; agentpay publish makes one', { flag: '--capability' });
  }
  if (!o.config) {
    if (o.capability === undefined) {
      throw usageError('nothing to sell: pass --capability CAP_ID (every route) or --config FILE (routes and their capabilities)', 'agentpay proxy --upstream http://127.0.0.1:8080 --capability cap_…', { flag: '--capability' });
    }
    if (o.passUnknown) throw usageError('--pass-unknown needs --config: without a file every route is sold with --capability', 'drop --pass-unknown, or list your routes in --config FILE', { flag: '--pass-unknown' });
    return { routes: [], otherwise: { kind: 'paid', capabilityId: o.capability } };
  }
  const file = o.configFile ?? 'the config file';
  const routes = o.config.routes.map((r) => route(r.key, r.value, file));
  const pass = o.passUnknown === true || o.config.unknownRoutes === 'pass';
  if (o.capability !== undefined && pass) {
    throw usageError(`--capability sells the routes ${file} does not list, and ${o.passUnknown ? '--pass-unknown' : '"unknownRoutes": "pass"'} would forward them free`, 'keep one of the two', { flag: '--capability' });
  }
  const otherwise: Otherwise = o.capability !== undefined ? { kind: 'paid', capabilityId: o.capability } : pass ? { kind: 'free' } : { kind: 'reject' };
  return { routes, otherwise };
}

/** The route a request takes (undefined: none matched) and what to do with it. */
export function lookup(table: RouteTable, method: string, path: string): { route: Route | undefined; target: Otherwise } {
  const route = table.routes.find((r) => r.matches(method, path));
  return { route, target: route ? route.target : table.otherwise };
}

/** Every capability the table sells, once each, with where it was named. */
export function capabilitiesOf(table: RouteTable, configFile?: string): CapabilitySource[] {
  const seen = new Map<string, string>();
  for (const r of table.routes) {
    if (r.target.kind === 'paid' && !seen.has(r.target.capabilityId)) seen.set(r.target.capabilityId, `route "${r.key}" of ${configFile ?? 'the config file'}`);
  }
  if (table.otherwise.kind === 'paid' && !seen.has(table.otherwise.capabilityId)) seen.set(table.otherwise.capabilityId, '--capability');
  return [...seen].map(([capabilityId, from]) => ({ capabilityId, from }));
}
