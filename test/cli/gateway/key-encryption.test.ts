/**
 * `agentpay gateway start` with a key-encryption key (docs/deploy.md § Signing keys): one of the
 * wrong length, or given two ways, is a usage error naming the variable or config key (exit 2),
 * before the data directory is made; a key file named in the config file (relative to it) seals
 * the signing key in the database, and no keys/ directory is made.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kekId } from '../../../src/domain/payments/key-sealing.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { PgStore } from '../../../src/store/pg/pg-store.js';
import { databaseOfDataDir } from '../../helpers/pg.js';
import { testBackend } from '../../helpers/gateway.js';
import { cli, json, removeTempDirs, startGatewayProcess, tempDir } from '../helpers.js';

afterAll(removeTempDirs);
const configDir = tempDir();

describe('gateway start and the key-encryption key', () => {
  it('refuses a key of the wrong length in AGENTPAY_KEY_ENCRYPTION_KEY, naming it (exit 2), and makes no data directory', async () => {
    const dir = tempDir();
    const r = await cli(['gateway', 'start', '--port', '0', '--http-port', '0', '--data-dir', join(dir, 'data'), '--json'], { configDir, cwd: dir, env: { AGENTPAY_KEY_ENCRYPTION_KEY: randomBytes(16).toString('base64') } });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(json(r).error).toMatchObject({
      code: 'USAGE',
      message: 'AGENTPAY_KEY_ENCRYPTION_KEY: a key-encryption key must be 32 random bytes as 64 hex characters or base64 (got 16 bytes); make one with: openssl rand -base64 32',
      details: { env: 'AGENTPAY_KEY_ENCRYPTION_KEY' },
    });
    expect(r.stdout + r.stderr).not.toContain('bug');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('a key file named in the config file seals the signing key in the database; the variable as well is refused', async () => {
    const dir = tempDir();
    const kek = randomBytes(32).toString('hex');
    writeFileSync(join(dir, 'kek'), `${kek}\n`, { mode: 0o600 });
    const file = join(dir, 'agentpay.json');
    writeFileSync(file, JSON.stringify({ mode: 'sandbox', keyEncryptionKeyFile: 'kek' }));
    const dataDir = join(dir, 'data');

    const twice = await cli(['gateway', 'start', '--config', file, '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--json'], { configDir, cwd: dir, env: { AGENTPAY_KEY_ENCRYPTION_KEY: kek } });
    expect(twice.exitCode, twice.stderr).toBe(2);
    expect(json(twice).error).toMatchObject({ code: 'USAGE', message: `the key-encryption keys are given twice (keyEncryptionKeyFile (${join(dir, 'kek')}) and AGENTPAY_KEY_ENCRYPTION_KEY); give them one way` });

    const gw = await startGatewayProcess(['gateway', 'start', '--config', file, '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--json'], { configDir, cwd: dir });
    const { exitCode, stderr } = await gw.stop();
    expect(exitCode, stderr).toBe(0);
    expect(stderr).toContain(kekId(Buffer.from(kek, 'hex')));
    expect(stderr).not.toContain(kek);
    expect(existsSync(join(dataDir, 'keys'))).toBe(false);
    // the data dir's database: its SQLite file, or on the postgres project the database the binary was given (backendEnv)
    const store = testBackend() === 'postgres' ? await PgStore.open({ url: (await databaseOfDataDir(dataDir)).url }) : new SqliteStore({ path: join(dataDir, 'agentpay.db') });
    try {
      const current = (await store.read((r) => r.signingKeys.current()))!;
      expect(await store.read((r) => r.signingKeys.privateKey(current.id))).toMatch(new RegExp(`^v1\\.${kekId(Buffer.from(kek, 'hex'))}\\.`));
    } finally {
      await store.close();
    }
  });
});
