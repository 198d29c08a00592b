/**
 * The platform routes: health, the challenge-signing public key, receipt keys by id,
 * and rotation by the operator. Private halves stay in DATA_DIR/keys (0600), never in
 * the database, and survive a restart.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyFromSeed, signObject, verifyObject } from '../../src/core/ed25519.js';
import { ManualClock } from '../../src/core/clock.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { sqliteOf, startTestGateway, testBackend, type TestGateway } from '../helpers/gateway.js';

const clock = new ManualClock(Date.UTC(2026, 4, 1, 12, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t?.close();
});

async function refusal(p: Promise<unknown>): Promise<AgentpayError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(AgentpayError);
  return e as AgentpayError;
}

const challenge = { capabilityId: 'cap_1', providerId: 'prv_1', amountMinor: '100', currency: 'USD', nonce: 'n1', expiresAt: '2030-01-01T00:00:00.000Z', payTo: 'wal_1' };

describe('GET /health', () => {
  it('answers without a key: status ok, the current signing key id as instance, the gateway time', async () => {
    const health = await t.client().platform.health();
    expect(health).toEqual({ status: 'ok', instance: t.gw.services.signingKeys.currentKeyId, instanceId: t.gw.services.instanceId, time: '2026-05-01T12:00:00.000Z' });
    expect(health.instance).toMatch(/^sk_/);
  });
});

describe('GET /v1/platform/public-key', () => {
  it('answers without a key with the PEM and id of the key that signs challenges', async () => {
    const { publicKeyPem, signingKeyId } = await t.client().platform.publicKey();
    expect(signingKeyId).toBe((await t.client().platform.health()).instance);
    expect(publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const signed = t.gw.services.signingKeys.sign(challenge);
    expect(signed.signingKeyId).toBe(signingKeyId);
    expect(verifyObject(publicKeyPem, signed)).toBe(true);
  });
});

describe('GET /v1/platform/receipt-keys/:keyId', () => {
  it('answers the current key by id, without a key', async () => {
    const { publicKeyPem, signingKeyId } = await t.client().platform.publicKey();
    const key = await t.client().platform.receiptKey(signingKeyId);
    expect(key).toMatchObject({ keyId: signingKeyId, publicKeyPem, status: 'current', retiredAt: null });
  });

  it('answers 404 NOT_FOUND for an unknown key id', async () => {
    const e = await refusal(t.client().platform.receiptKey('sk_doesnotexist'));
    expect(e.status).toBe(404);
    expect(e.code).toBe('NOT_FOUND');
    expect(e.message).toContain('sk_doesnotexist');
  });

  it('lets a page on any origin read the public keys (access-control-allow-origin: *), and no other route', async () => {
    const http = t.client().http;
    const { signingKeyId } = await t.client().platform.publicKey();
    for (const path of ['/v1/platform/public-key', `/v1/platform/receipt-keys/${signingKeyId}`, '/v1/platform/receipt-keys/sk_doesnotexist']) {
      const res = await http.raw('GET', path, { apiKey: null, headers: { origin: 'https://shop.example' } });
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
    }
    const other = await http.raw('GET', '/health', { apiKey: null, headers: { origin: 'https://shop.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('POST /v1/platform/keys/rotate', () => {
  it('refuses a workspace key with 403 naming the scope operator, and a missing key with 401', async () => {
    const before = await t.client().platform.publicKey();
    const e = await refusal(t.workspace.platform.rotateKeys());
    expect(e.status).toBe(403);
    expect(e.code).toBe('FORBIDDEN');
    expect(e.message).toContain('operator');
    expect(e.details).toMatchObject({ scope: 'operator' });
    expect((await refusal(t.provider.platform.rotateKeys())).status).toBe(403);
    expect((await refusal(t.client().platform.rotateKeys())).code).toBe('UNAUTHORIZED');
    expect(await t.client().platform.publicKey()).toEqual(before);
  });

  it('switches health and the public key to a new key at once; the old key stays retrievable as retired', async () => {
    const old = await t.client().platform.publicKey();
    const signedBefore = t.gw.services.signingKeys.sign(challenge);
    clock.advance(60_000);

    const rotated = await t.operator.platform.rotateKeys();
    expect(rotated.signingKeyId).not.toBe(old.signingKeyId);
    expect(rotated.publicKeyPem).not.toBe(old.publicKeyPem);
    expect((await t.client().platform.health()).instance).toBe(rotated.signingKeyId);
    expect(await t.client().platform.publicKey()).toEqual(rotated);

    const retired = await t.client().platform.receiptKey(old.signingKeyId);
    expect(retired).toMatchObject({ keyId: old.signingKeyId, publicKeyPem: old.publicKeyPem, status: 'retired', retiredAt: '2026-05-01T12:01:00.000Z' });
    expect(await t.client().platform.receiptKey(rotated.signingKeyId)).toMatchObject({ status: 'current', publicKeyPem: rotated.publicKeyPem });

    // what the old key signed still verifies with the key fetched by its id, and only with it
    expect(signedBefore.signingKeyId).toBe(old.signingKeyId);
    expect(verifyObject(retired.publicKeyPem, signedBefore)).toBe(true);
    expect(verifyObject(rotated.publicKeyPem, signedBefore)).toBe(false);
    // and new signatures use the new key
    const signedAfter = t.gw.services.signingKeys.sign(challenge);
    expect(signedAfter.signingKeyId).toBe(rotated.signingKeyId);
    expect(verifyObject(rotated.publicKeyPem, signedAfter)).toBe(true);
  });
});

// without a key-encryption key only SQLite keeps them in files; a sandbox on PostgreSQL keeps them in the
// database, and with a key sealed there on either backend (test/gateway/signing-key-storage.test.ts)
describe.runIf(testBackend() === 'sqlite')('private signing keys', () => {
  it('are 0600 files in DATA_DIR/keys (directory 0700), one per key id, matching the published keys', async () => {
    const dir = join(t.dataDir, 'keys');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir).sort();
    const ids = (sqliteOf(t.gw).prepare('select id from signing_keys order by id').all() as Array<{ id: string }>).map((r) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(files).toEqual(ids.map((id) => `${id}.pem`).sort());
    for (const id of ids) {
      const path = join(dir, `${id}.pem`);
      expect(statSync(path).mode & 0o777, path).toBe(0o600);
      const pem = readFileSync(path, 'utf8');
      expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      const { publicKeyPem } = await t.client().platform.receiptKey(id);
      expect(verifyObject(publicKeyPem, { ...challenge, signature: signObject(pem, challenge) })).toBe(true);
    }
  });

  it('never reach the database, its WAL or its journal', () => {
    const dir = join(t.dataDir, 'keys');
    const seeds = readdirSync(dir).map((f) => {
      const der = Buffer.from(readFileSync(join(dir, f), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
      const seed = der.subarray(der.length - 32);
      privateKeyFromSeed(seed); // it is the seed: this would throw otherwise
      return seed;
    });
    // SQLite: the database's files, byte for byte; PostgreSQL: every row of every table, as text
    const stored: [string, Buffer][] = testBackend() === 'sqlite'
      ? readdirSync(t.dataDir).filter((f) => f.startsWith('agentpay.db')).map((f) => [f, readFileSync(join(t.dataDir, f))])
      : (sqliteOf(t.gw).prepare("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'").all() as { name: string }[])
          .map(({ name }) => [name, Buffer.from(JSON.stringify(sqliteOf(t.gw).prepare(`SELECT * FROM "${name}"`).all(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)))]);
    expect(stored.map(([f]) => f)).toContain(testBackend() === 'sqlite' ? 'agentpay.db' : 'signing_keys');
    for (const [f, bytes] of stored) {
      expect(bytes.includes('PRIVATE KEY'), f).toBe(false);
      for (const seed of seeds) {
        expect(bytes.includes(seed), `${f} holds a private seed`).toBe(false);
        expect(bytes.includes(seed.toString('base64')), `${f} holds a private seed (base64)`).toBe(false);
        expect(bytes.includes(seed.toString('hex')), `${f} holds a private seed (hex)`).toBe(false);
      }
    }
  });
});

describe('a restart on the same data directory', () => {
  it('keeps the current key, and the retired ones stay retrievable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-platform-'));
    try {
      const first = await startTestGateway({ dataDir });
      const initial = await first.client().platform.publicKey();
      const rotated = await first.operator.platform.rotateKeys();
      const signed = first.gw.services.signingKeys.sign(challenge);
      await first.close();

      const second = await startTestGateway({ dataDir });
      try {
        expect(await second.client().platform.publicKey()).toEqual(rotated);
        expect((await second.client().platform.health()).instance).toBe(rotated.signingKeyId);
        expect((await second.client().platform.receiptKey(initial.signingKeyId)).status).toBe('retired');
        const signedAgain = second.gw.services.signingKeys.sign(challenge);
        expect(signedAgain).toEqual(signed); // same key, deterministic ed25519
        expect(verifyObject((await second.client().platform.receiptKey(signed.signingKeyId)).publicKeyPem, signed)).toBe(true);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
