/**
 * `agentpay gateway start --redis URL` (AGENTPAY_REDIS_URL, config key `redis`) and the
 * payment rate limit settings: read from each source, a malformed URL refused before anything
 * starts naming where it was set (never the URL: it may hold a password), and a Redis that
 * cannot be reached refuses the start with REDIS_UNREACHABLE (exit 3).
 */
import net from 'node:net';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

function configFile(content: unknown): string {
  const file = join(tempDir(), 'agentpay.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('gateway start --redis and the payment rate limit', () => {
  it('reads the Redis URL and the payment limits from flags and the config file, flags first', () => {
    const dir = tempDir();
    expect(gatewayStartOptions({}, dir, {}).config.redis).toBeUndefined();
    expect(gatewayStartOptions({ redis: 'redis://127.0.0.1:6379' }, dir, {}).config.redis).toEqual({ url: 'redis://127.0.0.1:6379' });
    const file = configFile({ redis: 'rediss://cache.internal:6380/2', rateLimit: { paymentMax: 2000, paymentWindowMs: 500 } });
    const fromFile = gatewayStartOptions({ config: file }, dir, {});
    expect(fromFile.config.redis).toEqual({ url: 'rediss://cache.internal:6380/2' });
    expect(fromFile.config.rateLimit).toMatchObject({ paymentMax: 2000, paymentWindowMs: 500 });
    const flags = gatewayStartOptions({ config: file, redis: 'redis://other:6379', paymentRateLimit: 3000 }, dir, {});
    expect(flags.config.redis).toEqual({ url: 'redis://other:6379' });
    expect(flags.config.rateLimit).toMatchObject({ paymentMax: 3000, paymentWindowMs: 500 });
  });

  it('refuses a URL that is not redis:// naming where it was set, not the URL', async () => {
    const dir = tempDir();
    expect(() => gatewayStartOptions({ config: configFile({ redis: 'http://u:pw@x' }) }, dir, {})).toThrow(/agentpay.json: redis must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => gatewayStartOptions({ config: configFile({ rateLimit: { paymentMax: 0 } }) }, dir, {})).toThrow('rateLimit.paymentMax must be a positive integer');
    const r = await cli(['gateway', 'start', '--port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir, env: { AGENTPAY_REDIS_URL: 'localhost:6379:secretpw' } });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'USAGE', message: 'AGENTPAY_REDIS_URL must be a redis:// or rediss:// URL', details: { flag: '--redis', env: 'AGENTPAY_REDIS_URL' } });
    expect(r.stdout + r.stderr).not.toContain('secretpw');
    expect(existsSync(join(dir, 'data', 'gateway.json'))).toBe(false);
  });

  it('does not start when Redis cannot be reached: REDIS_UNREACHABLE (exit 3), the URL without its password', async () => {
    const server = net.createServer();
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((res) => server.close(() => res()));
    const dir = tempDir();
    const r = await cli(['gateway', 'start', '--port', '0', '--http-port', '0', '--data-dir', join(dir, 'data'), '--redis', `redis://:hunter2@127.0.0.1:${port}`, '--json'], { configDir, cwd: dir });
    expect(r.exitCode).toBe(3);
    expect(json(r).error).toMatchObject({ code: 'REDIS_UNREACHABLE', details: { flag: '--redis', redis: `redis://127.0.0.1:${port}` } });
    expect(json(r).error.message).toContain(`could not connect to Redis at redis://127.0.0.1:${port}`);
    expect(r.stdout + r.stderr).not.toContain('hunter2');
    expect(existsSync(join(dir, 'data', 'gateway.json'))).toBe(false);
  });

  it('documents --redis and the payment limit in --help', async () => {
    const r = await cli(['gateway', 'start', '--help'], { configDir });
    expect(r.stdout).toContain('--redis');
    expect(r.stdout).toContain('AGENTPAY_REDIS_URL');
    expect(r.stdout).toContain('--payment-rate-limit');
  });
});
