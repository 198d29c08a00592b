/**
 * What `agentpay proxy` does with its flags: checks them (each problem names its flag or the
 * config file's field), starts the paywall (./server.ts), prints the ready line and runs until
 * SIGINT or SIGTERM, then stops taking requests and lets those in flight finish and settle.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, EXIT, usageError } from '../errors/index.js';
import { moneyText } from '../output.js';
import { parseProxyConfig, routeTable, type ProxyConfig } from './routes.js';
import { startPaywall, type Price, type RunningPaywall } from './server.js';

export const DEFAULT_LISTEN = '127.0.0.1:8402';

export interface PaywallFlags {
  upstream?: string | undefined;
  capability?: string | undefined;
  config?: string | undefined;
  listen: string;
  'pass-unknown'?: boolean | undefined;
  /** seconds; 0: no limit */
  timeout: number;
  'public-url'?: string | undefined;
  network?: string | undefined;
  'cors-origin'?: string | undefined;
}

/** `host:port`, `[v6]:port` or a bare port (on 127.0.0.1). */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(value) ?? (/^\d+$/.test(value) ? [value, undefined, '127.0.0.1', value] : null);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw usageError(`--listen ${JSON.stringify(value)} is not HOST:PORT`, `e.g. --listen ${DEFAULT_LISTEN} (port 0: any free port; 0.0.0.0:PORT for every interface)`, { flag: '--listen' });
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** An http(s) URL, with an optional base path; `from` names where it was set. */
export function parseUpstream(value: string, from: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  const problem = !url ? 'is not a URL'
    : url.protocol !== 'http:' && url.protocol !== 'https:' ? 'must start with http:// or https://'
      : url.search || url.hash ? 'must not have a query or fragment (requests keep their own)'
        : url.username || url.password ? 'must not hold credentials (the request headers go as received)' : undefined;
  if (problem) throw usageError(`the upstream ${JSON.stringify(value)} (${from}) ${problem}`, 'e.g. --upstream http://127.0.0.1:8080 (the API to put behind the paywall)', { flag: from.startsWith('--') ? from : '--config' });
  return url!;
}

function readConfig(path: string): ProxyConfig {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError('FILE_ERROR', `--config ${path} cannot be read (${code === 'ENOENT' ? 'no such file' : code ?? (e as Error).message})`, {
      exit: EXIT.USAGE,
      tryNext: 'pass the path of a JSON file like {"routes": {"GET /forecast": "cap_…", "GET /health": "free"}}',
      details: { flag: '--config', path },
    });
  }
  return parseProxyConfig(text, path);
}

/** Everything startPaywall needs from the flags and the config file, checked. */
export function paywallSettings(f: PaywallFlags) {
  const config = f.config !== undefined ? readConfig(f.config) : undefined;
  const table = routeTable({ capability: f.capability, config, configFile: f.config, passUnknown: f['pass-unknown'] });
  const upstreamText = f.upstream ?? config?.upstream;
  if (upstreamText === undefined) {
    throw usageError('no upstream: pass --upstream URL, the API to put behind the paywall', 'agentpay proxy --upstream http://127.0.0.1:8080 --capability cap_…', { flag: '--upstream' });
  }
  const upstream = parseUpstream(upstreamText, f.upstream !== undefined ? '--upstream' : `"upstream" of ${f.config}`);
  const listen = parseListen(f.listen);
  if (f['public-url'] !== undefined) parseUpstream(f['public-url'], '--public-url');
  if (f.network !== undefined && !/^agentpay:[a-z0-9-]+$/.test(f.network)) {
    throw usageError(`--network ${JSON.stringify(f.network)} is not an agentpay network`, 'agentpay:sandbox (the default) or agentpay:live for a production gateway', { flag: '--network' });
  }
  return { table, upstream, listen, configFile: f.config };
}

/** The ready line's routes: each rule, and what happens to the rest. */
export function routeSummary(settings: ReturnType<typeof paywallSettings>, prices: Price[]) {
  const price = (capabilityId: string) => prices.find((p) => p.capabilityId === capabilityId);
  const sold = (capabilityId: string) => ({ capabilityId, amountMinor: price(capabilityId)?.amountMinor, currency: price(capabilityId)?.currency });
  const routes = settings.table.routes.map((r) => ({ route: r.key, ...(r.target.kind === 'paid' ? sold(r.target.capabilityId) : { free: true }) }));
  const o = settings.table.otherwise;
  const otherRoutes = o.kind === 'paid' ? sold(o.capabilityId) : o.kind === 'free' ? 'pass' : 'reject';
  return { routes, otherRoutes };
}

/** Resolves on the first SIGINT or SIGTERM. */
function signalled(): Promise<string> {
  return new Promise((resolve) => {
    const on = (s: string) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

export interface RunOutput {
  json: boolean;
  /** a line for people, on stderr */
  note(line: string): void;
}

export interface GatewaySettings {
  gatewayUrl: string;
  apiKey: string;
  ca?: string | undefined;
}

/**
 * Starts the paywall, prints that it is ready, and serves until a signal. The flags are checked
 * before `gatewayOf` resolves the gateway, so a usage error is told first.
 */
export async function runPaywall(f: PaywallFlags, gatewayOf: () => GatewaySettings, out: RunOutput): Promise<void> {
  const settings = paywallSettings(f);
  const gateway = gatewayOf();
  const running: RunningPaywall = await startPaywall({
    upstream: settings.upstream,
    table: settings.table,
    configFile: settings.configFile,
    host: settings.listen.host,
    port: settings.listen.port,
    ...gateway,
    timeoutMs: f.timeout * 1000,
    publicUrl: f['public-url'],
    network: f.network,
    corsOrigin: f['cors-origin'],
    log: (line) => out.note(line),
  });
  const { routes, otherRoutes } = routeSummary(settings, running.prices);
  if (out.json) {
    process.stdout.write(JSON.stringify({ url: running.url, upstream: settings.upstream.toString(), gatewayUrl: gateway.gatewayUrl, routes, otherRoutes }) + '\n');
  }
  const priceText = (r: { amountMinor?: string | undefined; currency?: string | undefined; capabilityId: string }) =>
    `${r.capabilityId}, ${r.amountMinor !== undefined && r.currency ? moneyText(r.amountMinor, r.currency) : '?'} a call`;
  out.note(`agentpay proxy: ${running.url} -> ${settings.upstream.toString()} (gateway ${gateway.gatewayUrl})`);
  for (const r of routes) out.note(`  ${r.route}  ${'free' in r ? 'free' : priceText(r)}`);
  out.note(`  any other route  ${typeof otherRoutes === 'object' ? priceText(otherRoutes) : otherRoutes === 'pass' ? 'free (--pass-unknown)' : '404, not forwarded (--pass-unknown forwards them free)'}`);
  out.note('Ready (Ctrl-C to stop)');
  const signal = await signalled();
  out.note(`agentpay proxy: ${signal}, stopping (calls in flight finish first)`);
  await running.close();
}
