/**
 * Five gateway processes started at once on a fresh PostgreSQL database (not even migrated),
 * each with a data directory of its own and the same key-encryption key (AGENTPAY_KEY_ENCRYPTION_KEY):
 * they share nothing but the database. They end with one signing key, current, sealed in the
 * database; each signs challenges that the others verify (an authorization on another instance,
 * and offline against the public key another instance serves); after rotations on all five at
 * once there is again exactly one current key, which each instance loads from the database and
 * signs with. Runs when AGENTPAY_TEST_DATABASE_URL is set.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519, verifyObject } from '../../src/core/ed25519.js';
import { kekId } from '../../src/domain/payments/key-sealing.js';
import type { DevCredentials } from '../../src/gateway/dev-credentials.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';
import { signProof, type Buyer } from '../payments/helpers.js';
import { newCapability, newTenant, startInstance } from './helpers.js';

const REPLICAS = 5;

interface Instance {
  child: ChildProcess;
  baseUrl: string;
  ca: string;
  dataDir: string;
  creds?: DevCredentials;
}

let db: TestDatabase;
let store: PgStore;
const kek = randomBytes(32).toString('base64');
const instances: Instance[] = [];
const dirs: string[] = [];

async function start(withCreds: boolean): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-fleet-keys-'));
  dirs.push(dataDir);
  // a long tick: the duties are not what this file is about
  const env = { ...process.env, AGENTPAY_KEY_ENCRYPTION_KEY: kek, AGENTPAY_KEY_ENCRYPTION_KEY_PREVIOUS: '', AGENTPAY_KEY_ENCRYPTION_KEY_FILE: '' };
  const i = await startInstance({ dataDir, database: db.url, tickMs: 60_000, withCreds, env });
  return { child: i.child, baseUrl: i.baseUrl, ca: readFileSync(i.caCertPath, 'utf8'), dataDir, ...(i.creds ? { creds: i.creds } : {}) };
}

const client = (i: number, apiKey?: string) => {
  const at = instances[i % REPLICAS]!;
  return new AgentpayClient({ gatewayUrl: at.baseUrl, ca: at.ca, ...(apiKey ? { apiKey } : {}) });
};

async function newSeller(): Promise<{ apiKey: string; capabilityId: string }> {
  const t = await newTenant(store, 'provider', 'Key Fleet Seller');
  return { apiKey: t.apiKey, capabilityId: await newCapability(store, t.id, 1n, 'key fleet capability') };
}

async function newBuyer(creds: DevCredentials): Promise<Buyer> {
  const pair = generateEd25519();
  const w = await client(0, creds.workspace.apiKey).wallets.create({ ownerType: 'agent', ownerId: `agent-${randomBytes(3).toString('hex')}`, publicKeyPem: pair.publicKeyPem });
  await client(1, creds.workspace.apiKey).wallets.fund(w.id, '1000');
  return { walletId: w.id, ...pair };
}

/** Each instance signs a challenge; the next one verifies it offline with the key it serves, and authorizes a payment on it. */
async function eachSignsTheOthersVerify(seller: { apiKey: string; capabilityId: string }, buyer: Buyer, keyId: string) {
  for (let i = 0; i < REPLICAS; i++) {
    const challenge = await client(i, seller.apiKey).payments.challenge(seller.capabilityId);
    expect(challenge.signingKeyId).toBe(keyId);
    const served = await client(i + 1).platform.receiptKey(challenge.signingKeyId);
    expect(verifyObject(served.publicKeyPem, challenge as unknown as Record<string, unknown>)).toBe(true);
    const auth = await client(i + 1, seller.apiKey).payments.authorize({ capabilityId: seller.capabilityId, payment: signProof(challenge, buyer) });
    expect(auth.transactionId).toMatch(/./);
  }
}

describe.skipIf(!pgEnabled())(`${REPLICAS} gateways started at once on a fresh PostgreSQL database, sharing nothing else`, () => {
  beforeAll(async () => {
    db = await createTestDatabase('agentpay_fleet_keys');
    instances.push(...(await Promise.all(Array.from({ length: REPLICAS }, (_, i) => start(i === 0)))));
    store = await PgStore.open({ url: db.url });
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await Promise.all(instances.map((i) => new Promise<void>((res) => {
      if (i.child.exitCode !== null || i.child.signalCode !== null) return res();
      i.child.once('exit', () => res());
      i.child.send('stop');
    })));
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  it('end with one signing key, current, sealed in the database; no instance has a keys/ directory', async () => {
    const keys = await store.read((r) => r.signingKeys.all());
    expect(keys.map((k) => k.status)).toEqual(['current']);
    expect(await store.read((r) => r.signingKeys.privateKey(keys[0]!.id))).toMatch(new RegExp(`^v1\\.${kekId(Buffer.from(kek, 'base64'))}\\.`));
    for (const i of instances) expect(existsSync(join(i.dataDir, 'keys'))).toBe(false);
    const served = await Promise.all(instances.map((_, i) => client(i).platform.publicKey()));
    expect(new Set(served.map((s) => s.signingKeyId))).toEqual(new Set([keys[0]!.id]));
  });

  it('each signs challenges that the others verify', async () => {
    const creds = instances[0]!.creds!;
    const [seller, buyer] = await Promise.all([newSeller(), newBuyer(creds)]);
    const [key] = await store.read((r) => r.signingKeys.all());
    await eachSignsTheOthersVerify(seller, buyer, key!.id);
  }, 120_000);

  it('rotations on all five at once leave one current key, which each loads from the database and signs with', async () => {
    const creds = instances[0]!.creds!;
    const before = (await store.read((r) => r.signingKeys.current()))!.id;
    const rotated = await Promise.all(instances.map((_, i) => client(i, creds.operatorKey).platform.rotateKeys()));
    const keys = await store.read((r) => r.signingKeys.all());
    expect(keys).toHaveLength(1 + REPLICAS);
    const current = keys.filter((k) => k.status === 'current');
    expect(current).toHaveLength(1);
    expect(rotated.map((k) => k.signingKeyId)).toContain(current[0]!.id);
    expect(keys.find((k) => k.id === before)!.status).toBe('retired');
    // GET /v1/platform/public-key follows the database at once (the timer would, within 30 s)
    const served = await Promise.all(instances.map((_, i) => client(i).platform.publicKey()));
    expect(new Set(served.map((s) => s.signingKeyId))).toEqual(new Set([current[0]!.id]));
    for (const i of instances) expect(existsSync(join(i.dataDir, 'keys'))).toBe(false);
    const [seller, buyer] = await Promise.all([newSeller(), newBuyer(creds)]);
    await eachSignsTheOthersVerify(seller, buyer, current[0]!.id);
  }, 120_000);
});
