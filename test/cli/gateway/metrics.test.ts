/**
 * `agentpay gateway start --metrics off|loopback|token` (AGENTPAY_METRICS, config key
 * `metrics`), the token from AGENTPAY_METRICS_TOKEN or the config key `metricsToken`, never
 * a flag. The endpoint itself: test/gateway/metrics.test.ts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const TOKEN = 'a'.repeat(16);

function configFile(content: unknown): string {
  const file = join(tempDir(), 'agentpay.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('gateway start --metrics', () => {
  it('is off by default; loopback and token from the flag, the environment or the config file', () => {
    const dir = tempDir();
    expect(gatewayStartOptions({}, dir, {}).config.metrics).toBeUndefined();
    expect(gatewayStartOptions({ metrics: 'off' }, dir, {}).config.metrics).toBeUndefined();
    expect(gatewayStartOptions({ metrics: 'loopback' }, dir, {}).config.metrics).toEqual({ mode: 'loopback' });
    expect(gatewayStartOptions({ metrics: 'token' }, dir, { AGENTPAY_METRICS_TOKEN: TOKEN }).config.metrics).toEqual({ mode: 'token', token: TOKEN });
    expect(gatewayStartOptions({ config: configFile({ metrics: 'token', metricsToken: TOKEN }) }, dir, {}).config.metrics).toEqual({ mode: 'token', token: TOKEN });
    // the flag wins over the file
    expect(gatewayStartOptions({ config: configFile({ metrics: 'token', metricsToken: TOKEN }), metrics: 'loopback' }, dir, {}).config.metrics).toEqual({ mode: 'loopback' });
    expect(() => gatewayStartOptions({ config: configFile({ metrics: 'public' }) }, dir, {})).toThrow('metrics must be "off", "loopback" or "token"');
  });

  it('refuses token mode without a token of 16 characters, naming where the mode was set (exit 2), and starts nothing', async () => {
    const dir = tempDir();
    expect(() => gatewayStartOptions({ metrics: 'token' }, dir, { AGENTPAY_METRICS_TOKEN: 'short' })).toThrow('--metrics token needs a metrics token of at least 16 characters');
    const r = await cli(['gateway', 'start', '--port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir, env: { AGENTPAY_METRICS: 'token' } });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', message: 'AGENTPAY_METRICS=token needs a metrics token of at least 16 characters', details: { flag: '--metrics', env: 'AGENTPAY_METRICS' } });
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('documents --metrics in --help', async () => {
    const r = await cli(['gateway', 'start', '--help'], { configDir });
    expect(r.stdout).toContain('--metrics');
    expect(r.stdout).toContain('AGENTPAY_METRICS_TOKEN');
  });
});
