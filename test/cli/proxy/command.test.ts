/**
 * `agentpay proxy` as people run it: the built binary, its flags and environment, the ready line
 * on stdout, one line per request on stderr, a clean stop on SIGTERM, and usage errors that name
 * the flag. The upstream is a plain node:http server (./upstream.ts); the gateway the real test
 * gateway, on SQLite or PostgreSQL (AGENTPAY_TEST_BACKEND).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../../packages/sdk/src/buyer/index.js';
import { fundedAgent, publish } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cli, gatewayEnv, removeTempDirs, spawnCli, tempDir } from '../helpers.js';
import { startUpstream, type Upstream } from './upstream.js';

let t: TestGateway;
let upstream: Upstream;
let configDir: string;
let cap: string;

beforeAll(async () => {
  t = await startTestGateway();
  cap = await publish(t, '100', 'Forecast behind agentpay proxy');
  upstream = await startUpstream();
  configDir = tempDir();
});
afterAll(async () => {
  await upstream?.close();
  await t?.close();
  removeTempDirs();
});

interface Ready {
  url: string;
  upstream: string;
  gatewayUrl: string;
  routes: Array<{ route: string; capabilityId?: string; amountMinor?: string; currency?: string; free?: true }>;
  otherRoutes: unknown;
}

describe('agentpay proxy (the binary)', () => {
  it('prints one ready line with --json, sells through the gateway in the environment, logs each request, and stops on SIGTERM', async () => {
    const file = join(configDir, 'proxy.json');
    writeFileSync(file, JSON.stringify({ upstream: upstream.url, routes: { 'GET /forecast': cap, 'GET /health': 'free' } }));
    const proc = spawnCli(['proxy', '--config', file, '--listen', '127.0.0.1:0', '--json'], { configDir, env: gatewayEnv(t, t.creds.provider.apiKey) });
    try {
      await proc.waitFor('stdout', '\n', 60_000);
      const ready = JSON.parse(proc.stdout().split('\n')[0]!) as Ready;
      expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(ready).toMatchObject({
        upstream: `${upstream.url}/`,
        gatewayUrl: t.baseUrl,
        routes: [{ route: 'GET /forecast', capabilityId: cap, amountMinor: '100', currency: 'USD' }, { route: 'GET /health', free: true }],
        otherRoutes: 'reject',
      });

      expect((await fetch(`${ready.url}/forecast`)).status).toBe(402);
      const a = await fundedAgent(t, '500');
      const res = await createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem }).fetch(`${ready.url}/forecast?city=Porto`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ city: 'Porto' });
      expect(res.receipt?.status).toBe('success');
      expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('400');
      await proc.waitFor('stderr', 'GET /forecast 200 paid 100 USD minor units');
      expect(proc.stderr()).toContain('Ready (Ctrl-C to stop)');
      expect(proc.stderr()).toContain('GET /forecast  cap_');
    } finally {
      const end = await proc.stop('SIGTERM');
      expect(end.exitCode).toBe(0);
      expect(end.stdout.trim().split('\n')).toHaveLength(1); // the ready line only
    }
  });

  it("takes a local gateway's provider key, not its workspace key, when the key comes from --data-dir", async () => {
    const proc = spawnCli(['proxy', '--upstream', upstream.url, '--capability', cap, '--listen', '127.0.0.1:0', '--json', '--gateway-url', t.baseUrl, '--ca', join(t.dataDir, 'tls', 'ca.pem'), '--data-dir', t.dataDir], { configDir });
    try {
      await proc.waitFor('stdout', '\n', 60_000);
      const ready = JSON.parse(proc.stdout().split('\n')[0]!) as Ready;
      expect(ready.otherRoutes).toMatchObject({ capabilityId: cap, amountMinor: '100' });
      expect((await fetch(`${ready.url}/anything`)).status).toBe(402);
    } finally {
      expect((await proc.stop('SIGTERM')).exitCode).toBe(0);
    }
  });

  it('names the flag of every problem with what it was given, before it listens', async () => {
    const env = gatewayEnv(t, t.creds.provider.apiKey);
    const run = (args: string[]) => cli(['proxy', ...args], { configDir, env });

    const nothing = await run(['--upstream', upstream.url]);
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('--capability CAP_ID');

    const noUpstream = await run(['--capability', cap]);
    expect(noUpstream.exitCode).toBe(2);
    expect(noUpstream.stderr).toContain('--upstream');

    const badUpstream = await run(['--capability', cap, '--upstream', 'ftp://example']);
    expect(badUpstream.exitCode).toBe(2);
    expect(badUpstream.stderr).toContain('(--upstream) must start with http:// or https://');

    const badListen = await run(['--capability', cap, '--upstream', upstream.url, '--listen', 'localhost']);
    expect(badListen.exitCode).toBe(2);
    expect(badListen.stderr).toContain('--listen "localhost" is not HOST:PORT');

    const missing = await run(['--upstream', upstream.url, '--config', 'nope.json']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('--config nope.json cannot be read (no such file)');

    const bad = join(configDir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ routes: { 'GET /x': 'forecast' } }));
    const badRoute = await run(['--upstream', upstream.url, '--config', bad]);
    expect(badRoute.exitCode).toBe(2);
    expect(badRoute.stderr).toContain(`${bad}: routes["GET /x"] is "forecast", not a capability id (cap_…) or "free"`);

    const inUse = await run(['--upstream', upstream.url, '--capability', cap, '--listen', upstream.host]);
    expect(inUse.exitCode).toBe(2);
    expect(inUse.stderr).toContain(`error LISTEN_FAILED: --listen ${upstream.host} is in use`);

    const unknownCap = await run(['--upstream', upstream.url, '--capability', 'cap_nosuchthing', '--listen', '127.0.0.1:0']);
    expect(unknownCap.exitCode).toBe(1);
    expect(unknownCap.stderr).toContain('error CAPABILITY_NOT_FOUND: capability cap_nosuchthing (--capability) cannot be sold');
  });

  it('documents itself in --help', async () => {
    const help = await cli(['proxy', '--help'], { configDir });
    expect(help.exitCode).toBe(0);
    for (const text of ['--upstream', '--capability', '--config', '--listen', '--pass-unknown', '--timeout', 'AGENTPAY_API_KEY', '402']) expect(help.stdout).toContain(text);
  });
});
