/**
 * `agentpay dev` as a real child process, as DESIGN.md fixes it: one JSON ready line,
 * HTTPS with its own CA, a plain-HTTP port that refuses, dev credentials kept in a
 * 0600 file, GET /metrics for this machine only, a graceful stop on SIGTERM, and a restart that keeps everything.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { cli, json, startGatewayProcess, removeTempDirs, tempDir, type GatewayProcess, type ReadyLine } from '../helpers.js';

const configDir = tempDir();
const dataDir = join(tempDir(), 'data');
const DEV = ['dev', '--json', '--port', '0', '--http-port', '0', '--data-dir', dataDir];
let dev: GatewayProcess;
let walletId: string;

beforeAll(async () => {
  dev = await startGatewayProcess(DEV, { configDir });
});
afterAll(async () => {
  await dev?.stop();
  removeTempDirs();
});

const run = (args: string[]) => cli([...args, '--data-dir', dataDir, '--json'], { configDir });

describe('agentpay dev --json', () => {
  it('prints a ready line with the URLs, CA, data dir and the dev keys', () => {
    const r = dev.ready;
    expect(Object.keys(r)).toEqual(['baseUrl', 'httpUrl', 'caCertPath', 'dataDir', 'operatorKey', 'workspace', 'provider']);
    expect(r.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(r.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(r.baseUrl).not.toBe('https://127.0.0.1:4402'); // --port 0 picked a free one
    expect(r.caCertPath).toBe(join(dataDir, 'tls', 'ca.pem'));
    expect(readFileSync(r.caCertPath!, 'utf8')).toContain('BEGIN CERTIFICATE');
    expect(r.dataDir).toBe(dataDir);
    expect(r.operatorKey).toMatch(/^ap_o_/);
    expect(r.workspace).toEqual({ id: expect.stringMatching(/^wsp_/), apiKey: expect.stringMatching(/^ap_w_/) });
    expect(r.provider).toEqual({ id: expect.stringMatching(/^prv_/), apiKey: expect.stringMatching(/^ap_p_/), walletId: expect.stringMatching(/^wal_/) });
  });

  it('answers /health over HTTPS when the CA is trusted, and refuses plain HTTP with 403 INSECURE_TRANSPORT', async () => {
    const ca = readFileSync(dev.ready.caCertPath!, 'utf8');
    const health = await new AgentpayClient({ gatewayUrl: dev.ready.baseUrl, ca }).platform.health();
    expect(health.status).toBe('ok');
    const plain = await fetch(`${dev.ready.httpUrl}/health`);
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as { error: { code: string } }).error.code).toBe('INSECURE_TRANSPORT');
  });

  it('serves GET /metrics to this machine without a token, and not to a client behind a proxy', async () => {
    const ca = readFileSync(dev.ready.caCertPath!, 'utf8');
    const scrape = (headers: Record<string, string> = {}) =>
      new Promise<{ status: number; type: string; body: string }>((done, fail) => {
        const req = httpsRequest(`${dev.ready.baseUrl}/metrics`, { ca, headers }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => done({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
        });
        req.on('error', fail).end();
      });
    const metrics = await scrape();
    expect(metrics.status, metrics.body).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.body).toMatch(/^# HELP agentpay_/m);
    // forwarded by a proxy on this machine: as if there were no such route
    const proxied = await scrape({ 'x-forwarded-for': '203.0.113.7' });
    expect(proxied.status).toBe(404);
    expect(JSON.parse(proxied.body).error.code).toBe('NOT_FOUND');
  });

  it('keeps the dev credentials in a 0600 file and says where it listens in gateway.json', () => {
    expect(statSync(join(dataDir, 'dev-credentials.json')).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
    expect(creds.workspace).toEqual(dev.ready.workspace);
    expect(JSON.parse(readFileSync(join(dataDir, 'gateway.json'), 'utf8'))).toEqual({ baseUrl: dev.ready.baseUrl, httpUrl: dev.ready.httpUrl, pid: dev.pid });
    expect(statSync(join(dataDir, 'gateway.json')).mode & 0o777).toBe(0o600);
  });

  it('serves the CLI through --data-dir: a wallet is created and funded', async () => {
    const keyFile = join(tempDir(), 'agent.pem');
    const created = await run(['wallets', 'create', '--owner-type', 'agent', '--owner-id', 'dev-agent', '--generate-key', '--key-file', keyFile]);
    expect(created.exitCode, created.stderr).toBe(0);
    walletId = json(created).wallet.id;
    const funded = await run(['wallets', 'fund', walletId, '--amount', '1250']);
    expect(funded.exitCode, funded.stderr).toBe(0);
    expect(json(funded).balance).toEqual({ balanceMinor: '1250', availableMinor: '1250', currency: 'USD' });
  });

  it('lets login --data-dir --as save a dev key as a profile', async () => {
    const r = await cli(['login', '--data-dir', dataDir, '--as', 'provider', '--profile', 'seller', '--json'], { configDir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).whoami.tenant.id).toBe(dev.ready.provider!.id);
  });

  it('stops on SIGTERM with exit 0 and removes gateway.json; a restart keeps ids, keys, wallets and balances', async () => {
    const first = dev.ready;
    const stopped = await dev.stop();
    expect(stopped.exitCode).toBe(0);
    expect(stopped.stdout.trim().split('\n')).toHaveLength(1); // exactly one line on stdout
    // the logs, on stderr, name the scheme the gateway really serves
    expect(stopped.stderr).toContain(`Server listening at ${first.baseUrl}`);
    expect(stopped.stderr).not.toContain(`Server listening at ${first.baseUrl.replace('https:', 'http:')}`);
    expect(existsSync(join(dataDir, 'gateway.json'))).toBe(false);

    const down = await run(['wallets', 'balance', walletId]);
    expect(down.exitCode).toBe(3);
    expect(json(down).error.code).toBe('GATEWAY_NOT_RUNNING');

    dev = await startGatewayProcess(DEV, { configDir });
    const again: ReadyLine = dev.ready;
    expect(again.operatorKey).toBe(first.operatorKey);
    expect(again.workspace).toEqual(first.workspace);
    expect(again.provider).toEqual(first.provider);
    expect(again.caCertPath).toBe(first.caCertPath);

    const balance = await run(['wallets', 'balance', walletId]);
    expect(balance.exitCode, balance.stderr).toBe(0);
    expect(json(balance)).toEqual({ balanceMinor: '1250', availableMinor: '1250', currency: 'USD' });
    const ledger = json(await run(['wallets', 'ledger', walletId]));
    expect(ledger.entries.map((e: { amountMinor: string }) => e.amountMinor)).toEqual(['1250']);

    // the profile saved from the data dir follows the gateway to its new port
    const me = await cli(['whoami', '--json'], { configDir });
    expect(me.exitCode, me.stderr).toBe(0);
    expect(json(me)).toMatchObject({ tenant: { id: first.provider!.id }, baseUrl: again.baseUrl, profile: 'seller' });
  });

  it('refuses a second gateway on the same data dir', async () => {
    const r = await cli([...DEV], { configDir });
    expect(r.exitCode).toBe(1);
    // with --json the error is the envelope on stdout, not a ready line
    expect(json(r).error).toMatchObject({ code: 'GATEWAY_RUNNING', message: expect.stringContaining(`a gateway is already running on ${dataDir}`) });
  });

  it('refuses --dev-echo-tokens in production mode with a clear error, before starting anything', async () => {
    const other = join(tempDir(), 'data');
    const r = await cli(['dev', '--mode', 'production', '--dev-echo-tokens', '--port', '0', '--http-port', '0', '--data-dir', other], { configDir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error USAGE: --dev-echo-tokens is refused in production mode/);
    // stdout is a pipe: the failure is also the error envelope there (and no ready line)
    expect(json(r)).toEqual({ error: { code: 'USAGE', message: expect.stringMatching(/^--dev-echo-tokens is refused in production mode/), details: expect.any(Object) } });
    expect(existsSync(other)).toBe(false);
  });
});
