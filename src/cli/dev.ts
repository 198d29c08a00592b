/**
 * `agentpay dev`: a gateway on this machine, as fixed in DESIGN.md. Sandbox mode makes
 * (first start) or reuses an operator key, a workspace and a verified provider. GET /metrics is
 * served to loopback clients without a token.
 */
import { relative, resolve } from 'node:path';
import { usageError } from './errors/index.js';
import { checkDataDirFlag } from './gateway-config.js';
import { runGateway, type LocalGateway, type ReadyInfo } from './gateway-runner.js';
import { findLocalDataDir } from './local-gateway.js';
import type { LogFormat } from './log-pretty.js';

export interface DevOptions {
  port: number;
  httpPort: number;
  dataDir: string;
  mode: 'sandbox' | 'production';
  devEchoTokens: boolean;
  quiet: boolean;
  logFormat?: LogFormat;
  /** a PostgreSQL URL instead of SQLite in the data dir */
  database?: string | undefined;
  /** the environment variable --database was read from, if it was */
  databaseFromEnv?: string | undefined;
}

export async function startDev(opts: DevOptions): Promise<LocalGateway> {
  checkDataDirFlag(opts.dataDir);
  if (opts.mode === 'production' && opts.devEchoTokens) {
    throw usageError('--dev-echo-tokens is refused in production mode: it would put signup and password-reset tokens in API responses', 'drop --dev-echo-tokens, or use --mode sandbox');
  }
  return runGateway({
    dataDir: opts.dataDir,
    port: opts.port,
    httpPort: opts.httpPort,
    tls: true,
    // GET /metrics without a token, to this machine only (docs/metrics.md § agentpay dev)
    config: { mode: opts.mode, devEchoTokens: opts.devEchoTokens, metrics: { mode: 'loopback' } },
    devCredentials: true,
    logLevel: opts.quiet ? 'warn' : 'info',
    ...(opts.logFormat ? { logFormat: opts.logFormat } : {}),
    ...(opts.database ? { database: opts.database } : {}),
    ...(opts.databaseFromEnv ? { sources: { database: { from: 'env' as const, flag: '--database', env: opts.databaseFromEnv } } } : {}),
  });
}

/** The JSON ready line of DESIGN.md, keys in its order. */
export function readyLine(r: ReadyInfo): string {
  const line: Record<string, unknown> = { baseUrl: r.baseUrl, httpUrl: r.httpUrl, caCertPath: r.caCertPath, dataDir: r.dataDir };
  if (r.operatorKey) Object.assign(line, { operatorKey: r.operatorKey, workspace: r.workspace, provider: r.provider });
  return JSON.stringify(line);
}

/**
 * The web dashboard's URL (docs/dashboard.md). With a key, the URL signs that key in: the key
 * is in the fragment, which a browser never sends, so no request line or log of the gateway
 * holds it; the page moves it into the tab's sessionStorage and removes it from the address bar.
 * Printed only in the banner for the person at the terminal, which shows the same key anyway.
 */
export function dashboardUrl(baseUrl: string, apiKey?: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/${apiKey ? `#key=${encodeURIComponent(apiKey)}` : ''}`;
}

/** What a person sees when the gateway is ready: where it is, how to trust it, the keys, what to do next. */
export function devBanner(r: ReadyInfo, mode: string, cwd: string = process.cwd()): string {
  // the data dir other commands here find by themselves (the nearest .agentpay) needs no flag
  const found = findLocalDataDir(cwd);
  const isDefaultDir = found !== undefined && resolve(found) === resolve(r.dataDir);
  const rel = relative(cwd, r.dataDir) || '.';
  const dirFlag = isDefaultDir ? '' : ` --data-dir ${rel}`;
  const lines = [
    `agentpay dev: ${mode} gateway ready`,
    '',
    `  HTTPS        ${r.baseUrl}`,
    ...(r.httpUrl ? [`  plain HTTP   ${r.httpUrl}  (answers 403 INSECURE_TRANSPORT)`] : []),
    `  CA           ${r.caCertPath}`,
    `               trust it with --ca, --data-dir, or NODE_EXTRA_CA_CERTS=${r.caCertPath}`,
    `  data dir     ${r.dataDir}`,
  ];
  if (!(r.operatorKey && r.workspace && r.provider)) lines.push(`  dashboard    ${dashboardUrl(r.baseUrl)}`);
  if (r.operatorKey && r.workspace && r.provider) {
    lines.push(
      '',
      `  operator     key ${r.operatorKey}`,
      `  workspace    ${r.workspace.id}  key ${r.workspace.apiKey}`,
      `  provider     ${r.provider.id}  key ${r.provider.apiKey}  settlement wallet ${r.provider.walletId}`,
      '',
      `  dashboard    ${dashboardUrl(r.baseUrl, r.workspace.apiKey)}`,
      '               (signs the workspace in; trust the CA above in the browser, or accept its warning)',
      '',
      `Next, in another terminal in this directory (the CLI finds ${isDefaultDir ? (rel.startsWith('..') ? rel : `./${rel}`) : 'the gateway through --data-dir'}):`,
      `  eval "$(npx agentpay dev env --role buyer${dirFlag})"     # gateway URL, CA and keys as AGENTPAY_* variables`,
      `  npx agentpay wallets create --owner-type agent --owner-id my-agent --generate-key --key-file my-agent.pem${dirFlag}`,
      `  npx agentpay wallets fund WALLET_ID --amount 1000${dirFlag}`,
    );
  }
  lines.push('', 'Press Ctrl-C to stop.');
  return lines.join('\n');
}
