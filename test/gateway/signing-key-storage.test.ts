/**
 * Where a gateway keeps its signing keys' private halves, as startGateway chooses and logs it
 * (src/gateway/server.ts): sealed in the database with the operator's key-encryption key; a KEK
 * of the wrong length stops the start naming the setting; a restart with another KEK stops with
 * the KEK the keys need; an existing keys/ directory is imported at the first start with a KEK
 * (logged, files left); without a KEK, DATA_DIR/keys as before (SQLite), or, on PostgreSQL, in
 * clear for a sandbox fleet (warned) and keys/ for production (warned). Runs on the test backend
 * (AGENTPAY_TEST_BACKEND).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { kekId } from '../../src/domain/payments/key-sealing.js';
import type { GatewayConfig } from '../../src/gateway/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { testBackend } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
const onPg = testBackend() === 'postgres';

/** a data directory and, on PostgreSQL, a database, shared by the starts of one test */
async function place(): Promise<{ dataDir: string; database?: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-key-storage-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (!onPg) return { dataDir };
  const db: TestDatabase = await createTestDatabase('agentpay_test', { migrated: true });
  cleanup.push(() => db.drop());
  return { dataDir, database: db.url };
}

async function start(at: { dataDir: string; database?: string }, config: Partial<GatewayConfig>, lines: Record<string, unknown>[] = []): Promise<RunningGateway> {
  const stream = new Writable({
    write(c: Buffer, _e, done) {
      for (const l of c.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const gw = await startGateway({ ...at, port: 0, httpPort: null, tls: false, signingKeyRefreshMs: 0, logger: { level: 'info', stream }, config: { trustProxy: true, ...config } });
  cleanup.push(() => gw.close());
  return gw;
}
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('started'); }, (e: unknown) => e as Error);
const kek = () => randomBytes(32).toString('base64');
const logged = (lines: Record<string, unknown>[], text: string) => lines.find((l) => typeof l.msg === 'string' && l.msg.includes(text));

describe(`signing key storage at start (${testBackend()})`, () => {
  it('a key-encryption key of the wrong length stops the start, naming the setting; nothing is made', async () => {
    const at = await place();
    const e = await failure(start(at, { keyEncryption: { keys: [randomBytes(16).toString('hex')] } }));
    expect(e.message).toBe('keyEncryption.keys[0]: a key-encryption key must be 32 random bytes as 64 hex characters or base64 (got 16 bytes of hex); make one with: openssl rand -base64 32');
    expect(readdirSync(at.dataDir)).toEqual([]);
  });

  it('with a KEK: sealed in the database, no keys/ directory, logged with the KEK id (never the KEK); a restart with another KEK is refused naming the one needed', async () => {
    const at = await place();
    const k = kek();
    const lines: Record<string, unknown>[] = [];
    const gw = await start(at, { keyEncryption: { keys: [k] } }, lines);
    const id = gw.services.signingKeys.currentKeyId;
    expect(await gw.store.read((r) => r.signingKeys.privateKey(id))).toMatch(/^v1\.kek_/);
    expect(existsSync(join(at.dataDir, 'keys'))).toBe(false);
    expect(logged(lines, 'signing keys are kept in the database, sealed')).toMatchObject({ level: 30, signingKeyId: id, keyEncryptionKeyId: kekId(Buffer.from(k, 'base64')) });
    const all = JSON.stringify(lines);
    expect(all).not.toContain(k);
    expect(all).not.toContain('PRIVATE KEY');
    expect(all).not.toContain((await gw.store.read((r) => r.signingKeys.privateKey(id)))!);
    // the public key route answers the public half only
    const res = await gw.app.inject({ method: 'GET', url: '/v1/platform/public-key', headers: { 'x-forwarded-proto': 'https' } });
    expect(Object.keys(res.json() as object).sort()).toEqual(['publicKeyPem', 'signingKeyId']);
    await cleanup.pop()!();

    const other = kek();
    const e = await failure(start(at, { keyEncryption: { keys: [other] } }));
    expect(e.message).toContain(`the private key of signing key ${id} is sealed with key-encryption key ${kekId(Buffer.from(k, 'base64'))}, which is not one this gateway was given (it has ${kekId(Buffer.from(other, 'base64'))})`);
    // the right one, as the previous beside a new one, reads and re-seals it
    const again: Record<string, unknown>[] = [];
    const gw2 = await start(at, { keyEncryption: { keys: [other, k] } }, again);
    expect(gw2.services.signingKeys.currentKeyId).toBe(id);
    expect(logged(again, 'sealed 1 signing key(s) again')).toMatchObject({ signingKeyIds: [id], keyEncryptionKeyId: kekId(Buffer.from(other, 'base64')) });
  });

  it('imports an existing keys/ directory at the first start with a KEK, logs it, and leaves the files', async () => {
    const at = await place();
    // production: without a KEK the keys are files on either backend
    const before = await start(at, { mode: 'production' });
    const id = before.services.signingKeys.currentKeyId;
    expect(await before.store.read((r) => r.signingKeys.privateKey(id))).toBeNull();
    await cleanup.pop()!();
    expect(readdirSync(join(at.dataDir, 'keys'))).toEqual([`${id}.pem`]);

    const lines: Record<string, unknown>[] = [];
    const gw = await start(at, { mode: 'production', keyEncryption: { keys: [kek()] } }, lines);
    expect(gw.services.signingKeys.currentKeyId).toBe(id);
    expect(await gw.store.read((r) => r.signingKeys.privateKey(id))).toMatch(/^v1\.kek_/);
    expect(logged(lines, 'imported 1 signing key(s) from DATA_DIR/keys into the database; the files are left in place')).toMatchObject({ level: 30, signingKeyIds: [id], sealed: true });
    expect(readdirSync(join(at.dataDir, 'keys'))).toEqual([`${id}.pem`]);
  });

  it.runIf(!onPg)('SQLite without a KEK keeps DATA_DIR/keys as before, and warns of nothing', async () => {
    const at = await place();
    const lines: Record<string, unknown>[] = [];
    const gw = await start(at, {}, lines);
    const id = gw.services.signingKeys.currentKeyId;
    expect(readdirSync(join(at.dataDir, 'keys'))).toEqual([`${id}.pem`]);
    expect(await gw.store.read((r) => r.signingKeys.privateKey(id))).toBeNull();
    expect(lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('signing keys are kept'))).toEqual([]);
  });

  it.runIf(onPg)('PostgreSQL without a KEK: a sandbox keeps them in the database unsealed and warns; production keeps DATA_DIR/keys and warns that every instance needs it', async () => {
    const sandbox = await place();
    const lines: Record<string, unknown>[] = [];
    const gw = await start(sandbox, { mode: 'sandbox' }, lines);
    const id = gw.services.signingKeys.currentKeyId;
    expect(await gw.store.read((r) => r.signingKeys.privateKey(id))).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(existsSync(join(sandbox.dataDir, 'keys'))).toBe(false);
    expect(logged(lines, 'signing keys are kept in the database unsealed')).toMatchObject({ level: 40, signingKeyId: id });

    const production = await place();
    const plines: Record<string, unknown>[] = [];
    const p = await start(production, { mode: 'production' }, plines);
    expect(readdirSync(join(production.dataDir, 'keys'))).toEqual([`${p.services.signingKeys.currentKeyId}.pem`]);
    expect(logged(plines, 'every instance on this database needs that same directory')).toMatchObject({ level: 40 });
  });
});
