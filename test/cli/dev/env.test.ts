/**
 * Issue 17 part 6 against a real `agentpay dev`: `agentpay dev env` prints what a seller or a
 * buyer in another terminal needs; the CLI finds .agentpay in a parent directory (as git finds
 * .git); old setting names still work with a one-line notice.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, json, removeTempDirs, startGatewayProcess, tempDir, type GatewayProcess } from '../helpers.js';
import { exportLines } from '../../../src/cli/dev-env.js';
import { findLocalDataDir } from '../../../src/cli/local-gateway.js';

const configDir = tempDir();
const project = tempDir('agentpay-project-');
const dataDir = join(project, '.agentpay');
const nested = join(project, 'my-seller', 'src', 'deep');
mkdirSync(nested, { recursive: true });
let dev: GatewayProcess;

beforeAll(async () => {
  dev = await startGatewayProcess(['dev', '--json', '--port', '0', '--http-port', '0'], { configDir, cwd: project });
});
afterAll(async () => {
  await dev?.stop();
  removeTempDirs();
});

/** The variables `eval "$(agentpay dev env …)"` sets, as bash itself reads them. */
function evalInBash(exports: string): Record<string, string> {
  const out = execFileSync('bash', ['-c', `${exports}\nenv -0`], { env: { PATH: process.env.PATH! } }).toString();
  return Object.fromEntries(out.split('\0').filter((l) => l.startsWith('AGENTPAY_')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

describe('agentpay dev env', () => {
  it('the data dir the gateway took by default is ./.agentpay of where it started', () => {
    expect(dev.ready.dataDir).toBe(dataDir);
  });

  it('--role seller, from a nested subdirectory: exports the gateway URL, the CA and the provider key', async () => {
    const r = await cli(['dev', 'env', '--role', 'seller'], { configDir, cwd: nested });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    expect(evalInBash(r.stdout)).toEqual({
      AGENTPAY_GATEWAY_URL: dev.ready.baseUrl,
      AGENTPAY_CA: join(dataDir, 'tls', 'ca.pem'),
      AGENTPAY_API_KEY: dev.ready.provider!.apiKey,
    });
  });

  it('--role buyer (the default): the workspace key and a dev agent wallet whose key file is 0600; the same wallet next time', async () => {
    const first = await cli(['dev', 'env'], { configDir, cwd: nested });
    expect(first.exitCode).toBe(0);
    const env = evalInBash(first.stdout);
    expect(Object.keys(env).sort()).toEqual(['AGENTPAY_API_KEY', 'AGENTPAY_CA', 'AGENTPAY_GATEWAY_URL', 'AGENTPAY_PRIVATE_KEY_FILE', 'AGENTPAY_WALLET_ID']);
    expect(env.AGENTPAY_API_KEY).toBe(dev.ready.workspace!.apiKey);
    expect(env.AGENTPAY_WALLET_ID).toMatch(/^wal_/);
    expect(env.AGENTPAY_PRIVATE_KEY_FILE).toBe(join(dataDir, 'dev-agent.pem'));
    expect(statSync(env.AGENTPAY_PRIVATE_KEY_FILE!).mode & 0o777).toBe(0o600);
    expect(readFileSync(env.AGENTPAY_PRIVATE_KEY_FILE!, 'utf8')).toContain('PRIVATE KEY');

    // the exported settings alone drive the CLI (no data dir found: run from a directory outside the project)
    const elsewhere = mkdtempSync(join(tmpdir(), 'agentpay-elsewhere-'));
    const wallet = json(await cli(['wallets', 'show', env.AGENTPAY_WALLET_ID!, '--json'], { configDir, cwd: elsewhere, env }));
    expect(wallet).toMatchObject({ wallet: { id: env.AGENTPAY_WALLET_ID, ownerType: 'agent' } });
    const funded = await cli(['wallets', 'fund', env.AGENTPAY_WALLET_ID!, '--amount', '1000', '--json'], { configDir, cwd: elsewhere, env });
    expect(funded.exitCode).toBe(0);

    const again = json(await cli(['dev', 'env', '--json'], { configDir, cwd: project }));
    expect(again).toEqual({ role: 'buyer', dataDir, env });
  });

  it('prints exports even into a pipe; --shell fish and powershell', async () => {
    const fish = await cli(['dev', 'env', '--role', 'seller', '--shell', 'fish'], { configDir, cwd: nested });
    expect(fish.stdout).toContain(`set -gx AGENTPAY_GATEWAY_URL '${dev.ready.baseUrl}'`);
    const ps = await cli(['dev', 'env', '--role', 'seller', '--shell', 'powershell'], { configDir, cwd: nested });
    expect(ps.stdout).toContain(`$env:AGENTPAY_GATEWAY_URL = '${dev.ready.baseUrl}'`);
    expect(exportLines({ X: "it's" }, 'sh')).toBe(`export X='it'\\''s'`);
    expect(evalInBash(exportLines({ AGENTPAY_X: "a'b $HOME `x`" }, 'sh'))).toEqual({ AGENTPAY_X: "a'b $HOME `x`" });
  });

  it('without a running gateway: an error on stderr and nothing on stdout for eval to run', async () => {
    const empty = tempDir();
    const r = await cli(['dev', 'env'], { configDir, cwd: empty });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error GATEWAY_NOT_RUNNING: no gateway is running on the data dir .*\.agentpay/m);
    const asJson = await cli(['dev', 'env', '--json'], { configDir, cwd: empty });
    expect(json(asJson)).toMatchObject({ error: { code: 'GATEWAY_NOT_RUNNING' } });
  });
});

describe('the CLI finds .agentpay in a parent directory', () => {
  it('a command run in a nested subdirectory uses the dev gateway of the project above', async () => {
    const me = json(await cli(['whoami', '--json'], { configDir, cwd: nested }));
    expect(me).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
    const seller = json(await cli(['whoami', '--as', 'provider', '--json'], { configDir, cwd: nested }));
    expect(seller).toMatchObject({ tenant: { id: dev.ready.provider!.id } });
  });

  it('an explicit --data-dir still wins over the one found', async () => {
    const other = join(tempDir(), 'none');
    const r = await cli(['whoami', '--data-dir', other, '--json'], { configDir, cwd: nested });
    expect(json(r)).toMatchObject({ error: { code: 'GATEWAY_NOT_RUNNING' } });
  });

  it('stops after the home directory when it starts inside it, else at the filesystem root; skips a .agentpay that is no gateway data dir', () => {
    expect(findLocalDataDir(nested, '/nonexistent-home')).toBe(dataDir);
    expect(findLocalDataDir(nested, join(project, 'my-seller'))).toBeUndefined(); // home is below the project
    expect(findLocalDataDir(nested, project)).toBe(dataDir); // home itself is searched
    const decoy = join(project, 'my-seller', '.agentpay');
    mkdirSync(decoy);
    expect(existsSync(decoy)).toBe(true);
    expect(findLocalDataDir(nested, '/nonexistent-home')).toBe(dataDir);
  });
});

describe('old names still work, with a one-line notice', () => {
  const settings = () => ({ AGENTPAY_CA: join(dataDir, 'tls', 'ca.pem'), AGENTPAY_API_KEY: dev.ready.workspace!.apiKey });

  it('AGENTPAY_GATEWAY_URL is the name; AGENTPAY_BASE_URL still works with a notice on stderr', async () => {
    const elsewhere = tempDir();
    const now = await cli(['whoami', '--json'], { configDir, cwd: elsewhere, env: { ...settings(), AGENTPAY_GATEWAY_URL: dev.ready.baseUrl } });
    expect(json(now)).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
    expect(now.stderr).toBe('');
    const old = await cli(['whoami', '--json'], { configDir, cwd: elsewhere, env: { ...settings(), AGENTPAY_BASE_URL: dev.ready.baseUrl } });
    expect(json(old)).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
    expect(old.stderr).toBe('notice: AGENTPAY_BASE_URL is the old name of AGENTPAY_GATEWAY_URL; it still works, but use AGENTPAY_GATEWAY_URL');
  });

  it('with both set, the new name wins and the notice says the old one is ignored', async () => {
    const r = await cli(['whoami', '--json'], { configDir, cwd: tempDir(), env: { ...settings(), AGENTPAY_GATEWAY_URL: dev.ready.baseUrl, AGENTPAY_BASE_URL: 'https://127.0.0.1:1' } });
    expect(json(r)).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
    expect(r.stderr).toBe('notice: AGENTPAY_BASE_URL is the old name of AGENTPAY_GATEWAY_URL; it still works, but use AGENTPAY_GATEWAY_URL (AGENTPAY_BASE_URL is ignored: AGENTPAY_GATEWAY_URL is set)');
  });

  it('a bad URL under the old name is reported under the old name', async () => {
    const r = await cli(['whoami', '--json'], { configDir, cwd: tempDir(), env: { ...settings(), AGENTPAY_BASE_URL: 'not-a-url' } });
    expect(json(r)).toMatchObject({ error: { code: 'USAGE', details: { env: 'AGENTPAY_BASE_URL' } } });
  });

  it('--gateway-url is the flag; --base-url still works with a notice', async () => {
    const ca = ['--ca', join(dataDir, 'tls', 'ca.pem'), '--api-key', dev.ready.workspace!.apiKey];
    const now = await cli(['whoami', '--gateway-url', dev.ready.baseUrl, ...ca, '--json'], { configDir, cwd: tempDir() });
    expect(json(now)).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
    expect(now.stderr).toBe('');
    for (const args of [['--base-url', dev.ready.baseUrl], [`--base-url=${dev.ready.baseUrl}`]]) {
      const old = await cli(['whoami', ...args, ...ca, '--json'], { configDir, cwd: tempDir() });
      expect(json(old)).toMatchObject({ tenant: { id: dev.ready.workspace!.id } });
      expect(old.stderr).toBe('notice: --base-url is the old name of --gateway-url; it still works, but use --gateway-url');
    }
  });
});
