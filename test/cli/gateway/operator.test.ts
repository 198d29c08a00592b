/**
 * A production gateway's operators, and what a data directory's mode protects: the first
 * operator key is made with `agentpay gateway operator-key` on the machine that holds the data
 * directory (operators do not sign up), and a sandbox data directory, with its simulated money
 * and dev keys, is never served in production (nor the other way round).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { cli, json, startGatewayProcess, removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();
const START = ['gateway', 'start', '--port', '0', '--http-port', '0', '--json'];

describe('agentpay gateway operator-key', () => {
  it('makes an operator key for a running production gateway, shown once; it decides verifications', async () => {
    const dataDir = join(tempDir(), 'prod');
    const gw = await startGatewayProcess([...START, '--data-dir', dataDir], { configDir });
    try {
      const made = await cli(['gateway', 'operator-key', '--data-dir', dataDir, '--name', 'alice', '--json'], { configDir });
      expect(made.exitCode, made.stderr).toBe(0);
      const { apiKey } = json(made);
      expect(apiKey).toMatchObject({ key: expect.stringMatching(/^ap_o_/), name: 'alice', scopes: expect.arrayContaining(['operator']) });
      // only its hash is stored (sqlite-only: the file's bytes; test/tenancy/secrets-at-rest.test.ts reads the rows on both backends)
      if (process.env.AGENTPAY_TEST_BACKEND !== 'postgres') expect(readFileSync(join(dataDir, 'agentpay.db')).includes(Buffer.from(apiKey.key))).toBe(false);

      const ca = readFileSync(gw.ready.caCertPath!, 'utf8');
      const operator = new AgentpayClient({ gatewayUrl: gw.ready.baseUrl, ca, apiKey: apiKey.key });
      const seller = await new AgentpayClient({ gatewayUrl: gw.ready.baseUrl, ca }).signup.start({
        kind: 'provider', name: 'Weather Co', email: 'ops@weather.test', password: 'long enough password', website: 'https://weather.test',
      });
      expect(seller.signup.id).toMatch(/^sgn_/);
      expect((await operator.providers.list()).map((p) => p.id)).toEqual([]); // not verified by email yet: no provider
      expect((await operator.auth.whoami()).tenant.kind).toBe('operator');
    } finally {
      expect((await gw.stop()).exitCode).toBe(0);
    }
  });

  // sqlite-only: a data dir without agentpay.db; with --database (the postgres project) the database is not in the data dir
  it.skipIf(process.env.AGENTPAY_TEST_BACKEND === 'postgres')('refuses a directory without a gateway database, naming it (exit 1)', async () => {
    const dir = join(tempDir(), 'nothing-here');
    const r = await cli(['gateway', 'operator-key', '--data-dir', dir, '--json'], { configDir });
    expect(r.exitCode).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'DATA_DIR_NOT_FOUND', details: { dataDir: dir } });
  });
});

describe("a data directory's mode", () => {
  it('is sandbox for good once agentpay dev ran on it: production refuses to serve its simulated money', async () => {
    const dataDir = join(tempDir(), 'sandbox');
    const dev = await startGatewayProcess(['dev', '--port', '0', '--http-port', '0', '--json', '--data-dir', dataDir], { configDir });
    const stopped = await dev.stop();
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(readFileSync(join(dataDir, 'mode'), 'utf8')).toBe('sandbox\n');

    const r = await cli([...START, '--data-dir', dataDir], { configDir });
    expect(r.exitCode).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('is a sandbox data directory'), details: { recordedMode: 'sandbox', mode: 'production' } });
  });

  it('is production for good once a production gateway ran on it: sandbox shortcuts never run there', async () => {
    const dataDir = join(tempDir(), 'prod');
    const gw = await startGatewayProcess([...START, '--data-dir', dataDir], { configDir });
    expect((await gw.stop()).exitCode).toBe(0);
    const r = await cli(['dev', '--port', '0', '--http-port', '0', '--json', '--data-dir', dataDir], { configDir });
    expect(r.exitCode).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'CONFLICT', details: { recordedMode: 'production', mode: 'sandbox' } });
  });
});
