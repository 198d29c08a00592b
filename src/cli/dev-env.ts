/**
 * `agentpay dev env`: the settings a seller or a buyer in another terminal needs to use the
 * running dev gateway, as shell exports (or JSON). Names are those of docs/configuration.md.
 * The values include API keys: they go to stdout for the person who asked, and are never logged.
 * The buyer's agent wallet is made on first use (a key pair in DATA_DIR/dev-agent.pem, 0600,
 * its public half registered on a new agent wallet of the dev workspace) and reused after.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentpayClient } from 'agentpay-sdk/client';
import { AgentpayError } from 'agentpay-sdk/errors';
import { writeFileAtomic } from '../core/files.js';
import { generateEd25519 } from '../core/ed25519.js';
import { readDevCredentials } from '../gateway/dev-credentials.js';
import { CliError } from './errors/index.js';
import { caPath, findLocalDataDir, gatewayNotRunning, LOCAL_DATA_DIR, runningGateway } from './local-gateway.js';
import { closeAtEnd } from './open-connections.js';

export const ENV_ROLES = ['seller', 'buyer'] as const;
export type EnvRole = (typeof ENV_ROLES)[number];
export const SHELLS = ['sh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

/** The variables, in the order printed. */
export type DevEnv = Record<string, string>;

const agentFile = (dataDir: string) => join(dataDir, 'dev-agent.json');
const agentKeyFile = (dataDir: string) => join(dataDir, 'dev-agent.pem');

/** The data dir `dev env` reads: --data-dir, else the nearest .agentpay. */
export function envDataDir(flag: string | undefined, cwd: string = process.cwd()): string {
  return resolve(cwd, flag ?? findLocalDataDir(cwd) ?? LOCAL_DATA_DIR);
}

export async function devEnv(dataDir: string, role: EnvRole): Promise<DevEnv> {
  const running = runningGateway(dataDir);
  if (!running) throw gatewayNotRunning(dataDir);
  const creds = readDevCredentials(dataDir);
  if (!creds) {
    throw new CliError('NO_DEV_CREDENTIALS', `the gateway on ${dataDir} has no dev keys (it runs in production mode, or as gateway start)`, {
      exit: 1,
      tryNext: 'run a sandbox dev gateway: npx agentpay dev; or set AGENTPAY_GATEWAY_URL, AGENTPAY_CA and AGENTPAY_API_KEY yourself',
      details: { dataDir },
    });
  }
  const ca = caPath(dataDir);
  const env: DevEnv = { AGENTPAY_GATEWAY_URL: running.baseUrl, ...(existsSync(ca) ? { AGENTPAY_CA: ca } : {}) };
  if (role === 'seller') return { ...env, AGENTPAY_API_KEY: creds.provider.apiKey };
  const caPem = env.AGENTPAY_CA ? readFileSync(env.AGENTPAY_CA, 'utf8') : undefined;
  const workspace = closeAtEnd(new AgentpayClient({ gatewayUrl: running.baseUrl, apiKey: creds.workspace.apiKey, env: false, ...(caPem ? { ca: caPem } : {}) }));
  const agent = await devAgent(dataDir, workspace);
  return { ...env, AGENTPAY_API_KEY: creds.workspace.apiKey, AGENTPAY_WALLET_ID: agent.walletId, AGENTPAY_PRIVATE_KEY_FILE: agent.keyFile };
}

/** The dev agent wallet of this data dir, made on first use; a saved one the gateway no longer has is made again. */
async function devAgent(dataDir: string, workspace: AgentpayClient): Promise<{ walletId: string; keyFile: string }> {
  const keyFile = agentKeyFile(dataDir);
  let saved: { walletId?: unknown } | undefined;
  try {
    saved = JSON.parse(readFileSync(agentFile(dataDir), 'utf8')) as { walletId?: unknown };
  } catch {
    saved = undefined;
  }
  if (saved && typeof saved.walletId === 'string' && existsSync(keyFile)) {
    try {
      await workspace.wallets.get(saved.walletId);
      return { walletId: saved.walletId, keyFile };
    } catch (e) {
      if (!(e instanceof AgentpayError && e.status === 404)) throw e;
    }
  }
  const pair = generateEd25519();
  const wallet = await workspace.wallets.create({ ownerType: 'agent', ownerId: 'dev-agent', publicKeyPem: pair.publicKeyPem });
  writeFileAtomic(keyFile, pair.privateKeyPem, { mode: 0o600 });
  writeFileAtomic(agentFile(dataDir), JSON.stringify({ walletId: wallet.id, keyFile }) + '\n', { mode: 0o600 });
  return { walletId: wallet.id, keyFile };
}

/** A value quoted for the shell: single quotes, which no dev value holds, escaped anyway. */
function quote(value: string, shell: Shell): string {
  if (shell === 'powershell') return `'${value.replace(/'/g, "''")}'`;
  if (shell === 'fish') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The exports, one line each, for `eval "$(agentpay dev env)"` (or fish's `| source`, PowerShell's `| Invoke-Expression`). */
export function exportLines(env: DevEnv, shell: Shell): string {
  return Object.entries(env)
    .map(([k, v]) => (shell === 'fish' ? `set -gx ${k} ${quote(v, shell)}` : shell === 'powershell' ? `$env:${k} = ${quote(v, shell)}` : `export ${k}=${quote(v, shell)}`))
    .join('\n');
}
