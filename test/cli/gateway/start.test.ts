/**
 * `agentpay gateway start`: production mode by default, config from flags over a JSON
 * file, checked once before anything listens, and no dev credentials.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { cli, json, startGatewayProcess, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

describe('agentpay gateway start', () => {
  it('starts in production mode from a config file, prints the ready line without dev keys, and stops on SIGTERM', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const file = join(dir, 'agentpay.json');
    // the file asks for port 4402 and no plain listener; the --port flag wins over the file
    writeFileSync(file, JSON.stringify({ port: 4402, httpPort: null, dataDir, feeBps: 250, rateLimit: { max: 100 } }));
    const gw = await startGatewayProcess(['gateway', 'start', '--config', file, '--port', '0', '--json'], { configDir, cwd: dir });
    try {
      expect(gw.ready).toEqual({ baseUrl: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/), httpUrl: null, caCertPath: join(dataDir, 'tls', 'ca.pem'), dataDir });
      expect(gw.ready.baseUrl).not.toBe('https://127.0.0.1:4402');
      expect(existsSync(join(dataDir, 'dev-credentials.json'))).toBe(false);
      const health = await new AgentpayClient({ gatewayUrl: gw.ready.baseUrl, ca: readFileSync(gw.ready.caCertPath!, 'utf8') }).platform.health();
      expect(health.status).toBe('ok');
    } finally {
      const stopped = await gw.stop();
      expect(stopped.exitCode).toBe(0);
    }
    expect(existsSync(join(dataDir, 'gateway.json'))).toBe(false);
  });

  it('names the bad setting of a config file and starts nothing (exit 2)', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ feeBps: '300' }));
    const r = await cli(['gateway', 'start', '--config', file, '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'CONFIG_INVALID', message: `${file}: feeBps must be an integer` });
    writeFileSync(file, JSON.stringify({ rateLimits: {} }));
    const unknown = await cli(['gateway', 'start', '--config', file, '--data-dir', join(dir, 'data')], { configDir, cwd: dir });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('rateLimits is not a setting');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('refuses --no-tls without --trust-proxy, and --dev-echo-tokens in production mode', async () => {
    const dir = tempDir();
    const noTls = await cli(['gateway', 'start', '--no-tls', '--port', '0', '--data-dir', join(dir, 'data')], { configDir, cwd: dir });
    expect(noTls.exitCode).toBe(2);
    expect(noTls.stderr).toContain('--no-tls');
    expect(noTls.stderr).toContain('--trust-proxy');
    const echo = await cli(['gateway', 'start', '--dev-echo-tokens', '--port', '0', '--data-dir', join(dir, 'data')], { configDir, cwd: dir });
    expect(echo.exitCode).toBe(2);
    expect(echo.stderr).toContain('--dev-echo-tokens is refused in production mode');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('chooses the rail adapters from --rails or the file, and refuses the sandbox rails in production', async () => {
    const dir = tempDir();
    const file = join(dir, 'rails.json');
    writeFileSync(file, JSON.stringify({ mode: 'sandbox', rails: 'none' }));
    expect(gatewayStartOptions({ config: file }, dir).config.rails).toEqual({ adapters: 'none' });
    expect(gatewayStartOptions({ config: file, rails: 'sandbox' }, dir).config.rails).toEqual({ adapters: 'sandbox' });
    expect(gatewayStartOptions({ mode: 'sandbox' }, dir).config.rails).toBeUndefined(); // the mode's default
    writeFileSync(file, JSON.stringify({ rails: 'stripe' }));
    expect(() => gatewayStartOptions({ config: file }, dir)).toThrow(`${file}: rails must be "sandbox", "none", or an object naming the adapters (stripe, screening)`);
    const r = await cli(['gateway', 'start', '--rails', 'sandbox', '--port', '0', '--data-dir', join(dir, 'data')], { configDir, cwd: dir });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('the sandbox rails');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});
