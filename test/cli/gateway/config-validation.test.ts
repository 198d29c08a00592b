/**
 * `agentpay gateway start` refuses, before anything listens (exit 2, naming the setting
 * and where it came from), durations and counts that are not positive integers and
 * boolean environment variables it cannot read.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { resolveConfig } from '../../../src/gateway/config.js';
import { cli, json, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

function configFile(content: unknown): { dir: string; file: string } {
  const dir = tempDir();
  const file = join(dir, 'agentpay.json');
  writeFileSync(file, JSON.stringify(content));
  return { dir, file };
}

describe('gateway start configuration checks', () => {
  it('refuses a tokenTtlMs of 0 or less in the config file, naming the file and the key (exit 2), and starts nothing', async () => {
    const { dir, file } = configFile({ tokenTtlMs: -1 });
    const r = await cli(['gateway', 'start', '--config', file, '--port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'CONFIG_INVALID', message: `${file}: tokenTtlMs must be a positive integer`, details: { file, field: 'tokenTtlMs' } });
    expect(existsSync(join(dir, 'data'))).toBe(false);
    for (const bad of [0, 1.5, 2 ** 60]) {
      expect(() => gatewayStartOptions({ config: configFile({ tokenTtlMs: bad }).file }, dir, {})).toThrow('tokenTtlMs must be a positive integer');
    }
    expect(gatewayStartOptions({ config: configFile({ tokenTtlMs: 60_000 }).file }, dir, {}).config.tokenTtlMs).toBe(60_000);
  });

  it('refuses an out-of-range feeBps and non-positive rate limits in the config file', () => {
    const dir = tempDir();
    expect(() => gatewayStartOptions({ config: configFile({ feeBps: 20_000 }).file }, dir, {})).toThrow('feeBps must be from 0 to 10000');
    expect(() => gatewayStartOptions({ config: configFile({ feeBps: -1 }).file }, dir, {})).toThrow('feeBps must be from 0 to 10000');
    expect(() => gatewayStartOptions({ config: configFile({ rateLimit: { windowMs: 0 } }).file }, dir, {})).toThrow('rateLimit.windowMs must be a positive integer');
    expect(() => gatewayStartOptions({ config: configFile({ rateLimit: { signupMax: -3 } }).file }, dir, {})).toThrow('rateLimit.signupMax must be a positive integer');
  });

  it('takes accountLimits from the config file, and refuses unknown keys and non-positive values in it', () => {
    const dir = tempDir();
    const limits = { keysPerTenant: 20, loginBackoffMs: 5000 };
    expect(gatewayStartOptions({ config: configFile({ accountLimits: limits }).file }, dir, {}).config.accountLimits).toEqual(limits);
    expect(() => gatewayStartOptions({ config: configFile({ accountLimits: { keysPerTenant: 0 } }).file }, dir, {})).toThrow('accountLimits.keysPerTenant must be a positive integer');
    expect(() => gatewayStartOptions({ config: configFile({ accountLimits: { keyCap: 3 } }).file }, dir, {})).toThrow('accountLimits.keyCap is not a setting');
    expect(() => resolveConfig({ accountLimits: { resetMailsPerDay: -1 } })).toThrow('accountLimits.resetMailsPerDay must be a positive integer');
  });

  it('refuses AGENTPAY_TRUST_PROXY=maybe, naming the variable (exit 2), where oclif would read it as false', async () => {
    const dir = tempDir();
    const r = await cli(['gateway', 'start', '--port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir, env: { AGENTPAY_TRUST_PROXY: 'maybe' } });
    expect(r.exitCode).toBe(2);
    expect(json(r).error).toMatchObject({ code: 'CONFIG_INVALID', message: 'the environment variable AGENTPAY_TRUST_PROXY must be true or false (or 1/0, yes/no), got "maybe"' });
    expect(existsSync(join(dir, 'data'))).toBe(false);
    // AGENTPAY_TLS=maybe would otherwise silently mean --no-tls
    expect(() => gatewayStartOptions({}, dir, { AGENTPAY_TLS: 'maybe' })).toThrow('AGENTPAY_TLS must be true or false');
    for (const ok of ['true', 'FALSE', '1', '0', 'yes', 'no', 'y', 'n', '']) {
      expect(() => gatewayStartOptions({}, dir, { AGENTPAY_TRUST_PROXY: ok, AGENTPAY_TLS: ok, AGENTPAY_DEV_ECHO_TOKENS: ok })).not.toThrow();
    }
  });

  it('lists tokenTtlMs among the config file keys in --help', async () => {
    const r = await cli(['gateway', 'start', '--help'], { configDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('tokenTtlMs');
  });
});

describe('resolveConfig', () => {
  it('refuses durations that are not positive integers, tokenTtlMs included, and a non-boolean trustProxy', () => {
    expect(() => resolveConfig({ tokenTtlMs: -1 })).toThrow('tokenTtlMs must be a positive integer of milliseconds');
    expect(() => resolveConfig({ challengeTtlMs: 0 })).toThrow('challengeTtlMs must be a positive integer of milliseconds');
    expect(() => resolveConfig({ sweepIntervalMs: 2 ** 31 })).toThrow('sweepIntervalMs must be at most 2147483647');
    expect(() => resolveConfig({ trustProxy: 'maybe' as unknown as boolean })).toThrow('trustProxy must be true or false');
    expect(resolveConfig({ tokenTtlMs: 1000 }).tokenTtlMs).toBe(1000);
  });

  it('takes releaseUnsettledAfterMs (default 15 minutes) and still accepts its old name inFlightTtlMs; both at once must agree', () => {
    expect(resolveConfig({}).releaseUnsettledAfterMs).toBe(15 * 60 * 1000);
    expect(resolveConfig({ releaseUnsettledAfterMs: 60_000 }).releaseUnsettledAfterMs).toBe(60_000);
    const old = resolveConfig({ inFlightTtlMs: 120_000 });
    expect(old.releaseUnsettledAfterMs).toBe(120_000);
    expect(old.inFlightTtlMs).toBeUndefined();
    expect(resolveConfig({ inFlightTtlMs: 60_000, releaseUnsettledAfterMs: 60_000 }).releaseUnsettledAfterMs).toBe(60_000);
    expect(() => resolveConfig({ inFlightTtlMs: 60_000, releaseUnsettledAfterMs: 120_000 })).toThrow('inFlightTtlMs is the old name of releaseUnsettledAfterMs');
    expect(() => resolveConfig({ inFlightTtlMs: 0 })).toThrow('releaseUnsettledAfterMs must be a positive integer of milliseconds');
  });
});
