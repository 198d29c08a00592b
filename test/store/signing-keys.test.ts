/**
 * The platform's signing keys in the database, on both backends (src/domain/payments/signing-keys.ts):
 * sealed with a key-encryption key (KEK) and opened by another instance that has only the
 * database; refused with a clear error under a wrong KEK; re-sealed when the KEK rotates;
 * imported from DATA_DIR/keys; and made once however many instances start or rotate at once.
 * Each "instance" here is a SigningKeys on a store of its own (PostgreSQL: a pool of its own)
 * and a keys directory of its own.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { verifyObject } from '../../src/core/ed25519.js';
import { randomIds } from '../../src/core/ids.js';
import { KEK_ENV, KEK_FILE_ENV, KEK_PREVIOUS_ENV, KeyEncryptionKeys, kekId, keyEncryptionKeysFrom, parseKek } from '../../src/domain/payments/key-sealing.js';
import { SigningKeys, privateKeyDir, type KeyStorage } from '../../src/domain/payments/signing-keys.js';
import type { Store } from '../../src/store/store.js';
import { storeBackends } from '../helpers/store-backends.js';

const challenge = { capabilityId: 'cap_1', priceMinor: '100', nonce: 'n1' };
const newKek = () => randomBytes(32);
const sealed = (...keks: Buffer[]): KeyStorage => ({ kind: 'sealed', keks: new KeyEncryptionKeys(keks) });

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'agentpay-signing-keys-'));
  dirs.push(d);
  return d;
};

describe.each(storeBackends('signing-keys'))('signing keys in the database on $name', (backend) => {
  const stores: Store[] = [];
  const clock = new ManualClock(1_800_000_000_000);
  beforeEach(() => backend.setup());
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await backend.teardown();
  });

  /** one instance: a store of its own on the shared database, and its own data directory */
  async function instance(storage: KeyStorage, dataDir = newDir()) {
    const store = await backend.open();
    stores.push(store);
    const keys = new SigningKeys({ store, clock, ids: randomIds }, privateKeyDir(dataDir), storage);
    return { keys, store, dataDir };
  }
  const storedOf = (store: Store, id: string) => store.read((r) => r.signingKeys.privateKey(id));

  it('seals the private key (never a PEM in the database, no keys/ file); another instance with only the database and the KEK signs with it', async () => {
    const kek = newKek();
    const a = await instance(sealed(kek));
    await a.keys.init();
    const id = a.keys.currentKeyId;
    const stored = (await storedOf(a.store, id))!;
    expect(stored).toMatch(new RegExp(`^v1\\.${kekId(kek)}\\.`));
    expect(stored).not.toContain('PRIVATE KEY');
    expect(existsSync(join(a.dataDir, 'keys'))).toBe(false);
    // the public record carries no private half
    expect(Object.keys((await a.keys.publicKey(id))!).sort()).toEqual(['createdAt', 'id', 'publicKeyPem', 'retiredAt', 'status']);
    expect(Object.keys((await a.store.read((r) => r.signingKeys.current()))!)).not.toContain('privateKey');

    const b = await instance(sealed(kek));
    await b.keys.init();
    expect(b.keys.currentKeyId).toBe(id);
    expect(verifyObject(a.keys.currentPublicKeyPem, b.keys.sign(challenge))).toBe(true);
    expect(verifyObject(b.keys.currentPublicKeyPem, a.keys.sign(challenge))).toBe(true);
    expect((await a.store.read((r) => r.signingKeys.all())).length).toBe(1);
  });

  it('a sealed key does not open on another row: the key id is its associated data', async () => {
    const kek = newKek();
    const a = await instance(sealed(kek));
    await a.keys.init();
    const first = a.keys.currentKeyId;
    const second = (await a.keys.rotate()).id;
    const sealedFirst = (await storedOf(a.store, first))!;
    // an attacker with write access to the table moves the old key onto the current row
    expect(await a.store.tx((r) => r.signingKeys.replacePrivateKey(second, sealedFirst, null))).toBe(false); // not what is stored
    const now = (await storedOf(a.store, second))!;
    expect(await a.store.tx((r) => r.signingKeys.replacePrivateKey(second, sealedFirst, now))).toBe(true);
    const b = await instance(sealed(kek));
    await expect(b.keys.init()).rejects.toThrow(`the sealed private key of signing key ${second} does not open with key-encryption key ${kekId(kek)}: it was changed or damaged in the database`);
  });

  it('another KEK, or none, is refused at init with a message naming the KEK the key needs and the setting', async () => {
    const kek = newKek();
    const a = await instance(sealed(kek));
    await a.keys.init();
    const id = a.keys.currentKeyId;
    const other = newKek();
    const wrong = await instance(sealed(other));
    const err = await wrong.keys.init().then(() => undefined, (e: unknown) => e as { message: string; details: unknown });
    expect(err?.message).toBe(
      `the private key of signing key ${id} is sealed with key-encryption key ${kekId(kek)}, which is not one this gateway was given (it has ${kekId(other)}); ` +
        `give that key as ${KEK_ENV} or ${KEK_PREVIOUS_ENV} (or in the key file), as every instance on this database has`,
    );
    expect(err?.details).toEqual({ signingKeyId: id, keyEncryptionKeyId: kekId(kek), given: [kekId(other)] });
    expect(err?.message).not.toContain(kek.toString('base64'));
    const none = await instance({ kind: 'clear' });
    await expect(none.keys.init()).rejects.toThrow(`the private key of signing key ${id} is sealed with a key-encryption key, and this gateway was given none; set AGENTPAY_KEY_ENCRYPTION_KEY`);
    // nothing was made in its place
    expect((await a.store.read((r) => r.signingKeys.all())).map((k) => k.id)).toEqual([id]);
  });

  it('KEK rotation: the new KEK first and the old one beside it re-seals every key at start; then the new one alone reads them, the old one alone does not', async () => {
    const old = newKek();
    const a = await instance(sealed(old));
    await a.keys.init();
    const first = a.keys.currentKeyId;
    clock.advance(1000);
    const second = (await a.keys.rotate()).id;

    const fresh = newKek();
    // phase 1 of docs/deploy.md: the new KEK read beside the old one, which still seals
    const reading = await instance(sealed(old, fresh));
    await reading.keys.init();
    expect(reading.keys.report.resealed).toEqual([]);
    // phase 2: the new one seals, the old one is read: the start seals both again
    const b = await instance(sealed(fresh, old));
    await b.keys.init();
    expect(b.keys.report.resealed.sort()).toEqual([first, second].sort());
    for (const id of [first, second]) expect(await storedOf(b.store, id)).toMatch(new RegExp(`^v1\\.${kekId(fresh)}\\.`));
    expect(b.keys.currentKeyId).toBe(second);
    // a phase-1 instance still reads them; a second phase-2 start has nothing left to do
    const again = await instance(sealed(fresh, old));
    await again.keys.init();
    expect(again.keys.report).toEqual({ imported: [], resealed: [], skipped: [] });
    // phase 3: the old KEK is dropped
    const c = await instance(sealed(fresh));
    await c.keys.init();
    expect(verifyObject(a.keys.currentPublicKeyPem, c.keys.sign(challenge))).toBe(true);
    const stale = await instance(sealed(old));
    await expect(stale.keys.init()).rejects.toThrow(`is sealed with key-encryption key ${kekId(fresh)}, which is not one this gateway was given (it has ${kekId(old)})`);
  });

  it('imports the private keys of an existing keys/ directory at the first start with a KEK, sealed, and leaves the files', async () => {
    const dataDir = newDir();
    const before = await instance({ kind: 'files' }, dataDir);
    await before.keys.init();
    const first = before.keys.currentKeyId;
    clock.advance(1000);
    const second = (await before.keys.rotate()).id;
    expect(await storedOf(before.store, second)).toBeNull();
    const files = readdirSync(join(dataDir, 'keys')).sort();
    expect(files).toEqual([`${first}.pem`, `${second}.pem`].sort());

    const kek = newKek();
    const a = await instance(sealed(kek), dataDir);
    await a.keys.init();
    expect(a.keys.report.imported.sort()).toEqual([first, second].sort());
    for (const id of [first, second]) expect(await storedOf(a.store, id)).toMatch(new RegExp(`^v1\\.${kekId(kek)}\\.`));
    expect(readdirSync(join(dataDir, 'keys')).sort()).toEqual(files);
    // another instance, without that directory, now signs with the imported key
    const b = await instance(sealed(kek));
    await b.keys.init();
    expect(b.keys.currentKeyId).toBe(second);
    expect(verifyObject(before.keys.currentPublicKeyPem, b.keys.sign(challenge))).toBe(true);
    // a second start imports nothing again
    const again = await instance(sealed(kek), dataDir);
    await again.keys.init();
    expect(again.keys.report.imported).toEqual([]);
  });

  it('an instance without the keys/ file of a key not yet imported says which instance must start to import it', async () => {
    const before = await instance({ kind: 'files' });
    await before.keys.init();
    const id = before.keys.currentKeyId;
    const b = await instance(sealed(newKek()));
    await expect(b.keys.init()).rejects.toThrow(
      `the private key of signing key ${id} is not in the database, nor in this data directory (keys/${id}.pem); start the instance whose data directory holds keys/${id}.pem once, which imports it, or restore that file from a backup`,
    );
  });

  it('a damaged keys/ file of the current key stops the import, naming the file; nothing is imported', async () => {
    const dataDir = newDir();
    const before = await instance({ kind: 'files' }, dataDir);
    await before.keys.init();
    const id = before.keys.currentKeyId;
    writeFileSync(join(dataDir, 'keys', `${id}.pem`), 'not a key\n');
    const a = await instance(sealed(newKek()), dataDir);
    await expect(a.keys.init()).rejects.toThrow(`the private key file of signing key ${id} (keys/${id}.pem in the data directory) is not a private key`);
    expect(await storedOf(a.store, id)).toBeNull();
  });

  it('without a KEK (a sandbox fleet) keys are stored as PEM; a KEK given later seals them at start', async () => {
    const a = await instance({ kind: 'clear' });
    await a.keys.init();
    const id = a.keys.currentKeyId;
    expect(await storedOf(a.store, id)).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const b = await instance({ kind: 'clear' });
    await b.keys.init();
    expect(verifyObject(a.keys.currentPublicKeyPem, b.keys.sign(challenge))).toBe(true);
    const kek = newKek();
    const c = await instance(sealed(kek));
    await c.keys.init();
    expect(c.keys.report.resealed).toEqual([id]);
    expect(await storedOf(c.store, id)).toMatch(new RegExp(`^v1\\.${kekId(kek)}\\.`));
  });

  it('eight instances starting at once on a fresh database make one current key, and all sign with it', async () => {
    const kek = newKek();
    const all = await Promise.all(Array.from({ length: 8 }, () => instance(sealed(kek))));
    await Promise.all(all.map((i) => i.keys.init()));
    const rows = await all[0]!.store.read((r) => r.signingKeys.all());
    expect(rows.map((k) => k.status)).toEqual(['current']);
    expect(new Set(all.map((i) => i.keys.currentKeyId))).toEqual(new Set([rows[0]!.id]));
    for (const i of all) expect(verifyObject(rows[0]!.publicKeyPem, i.keys.sign(challenge))).toBe(true);
  });

  it('without a KEK, instances sharing one keys/ directory and starting at once make one key and leave one file', async () => {
    const dataDir = newDir();
    const all = await Promise.all(Array.from({ length: 5 }, () => instance({ kind: 'files' }, dataDir)));
    await Promise.all(all.map((i) => i.keys.init()));
    const rows = await all[0]!.store.read((r) => r.signingKeys.all());
    expect(rows.map((k) => k.status)).toEqual(['current']);
    expect(readdirSync(join(dataDir, 'keys'))).toEqual([`${rows[0]!.id}.pem`]);
    for (const i of all) expect(verifyObject(rows[0]!.publicKeyPem, i.keys.sign(challenge))).toBe(true);
  });

  it('rotations on several instances at once leave exactly one current key, the others retired', async () => {
    const kek = newKek();
    const all = await Promise.all(Array.from({ length: 5 }, () => instance(sealed(kek))));
    for (const i of all) await i.keys.init();
    const made = await Promise.all(all.map((i) => i.keys.rotate()));
    const rows = await all[0]!.store.read((r) => r.signingKeys.all());
    expect(rows).toHaveLength(6);
    expect(rows.filter((k) => k.status === 'current')).toHaveLength(1);
    expect(made.map((k) => k.id)).toContain(rows.find((k) => k.status === 'current')!.id);
    // the database refuses a second current key whatever the caller does
    const [one] = await all[0]!.store.read((r) => r.signingKeys.all());
    await expect(all[0]!.store.tx((r) => r.signingKeys.insert({ ...one!, id: 'sk_second_current', status: 'current', retiredAt: null }))).rejects.toThrow();
  });
});

describe('key-encryption key settings', () => {
  const b64 = randomBytes(32).toString('base64');
  const hex = randomBytes(32).toString('hex');

  it('takes 32 bytes as hex or base64, and names the setting and the length otherwise', () => {
    expect(parseKek(hex, KEK_ENV)).toHaveLength(32);
    expect(parseKek(b64, KEK_ENV)).toHaveLength(32);
    expect(() => parseKek(randomBytes(16).toString('base64'), KEK_ENV)).toThrow(
      `${KEK_ENV}: a key-encryption key must be 32 random bytes as 64 hex characters or base64 (got 16 bytes); make one with: openssl rand -base64 32`,
    );
    expect(() => parseKek('not a key!', KEK_ENV)).toThrow(`${KEK_ENV}: a key-encryption key must be 32 random bytes`);
  });

  it('reads the environment: the sealing key first, then the previous ones; or a file, one a line', () => {
    const prev = randomBytes(32).toString('base64');
    const keks = keyEncryptionKeysFrom(undefined, { [KEK_ENV]: b64, [KEK_PREVIOUS_ENV]: ` ${hex} , ${prev}` })!;
    expect(keks.ids).toEqual([kekId(Buffer.from(b64, 'base64')), kekId(Buffer.from(hex, 'hex')), kekId(Buffer.from(prev, 'base64'))]);
    expect(keks.sealingId).toBe(keks.ids[0]);
    expect(() => keyEncryptionKeysFrom(undefined, { [KEK_ENV]: b64, [KEK_PREVIOUS_ENV]: 'abc' })).toThrow(`${KEK_PREVIOUS_ENV} (key 1): a key-encryption key must be 32 random bytes`);
    expect(() => keyEncryptionKeysFrom(undefined, { [KEK_PREVIOUS_ENV]: hex })).toThrow(`${KEK_PREVIOUS_ENV} is set but ${KEK_ENV} is not`);
    expect(keyEncryptionKeysFrom(undefined, {})).toBeUndefined();

    const file = join(newDir(), 'kek');
    writeFileSync(file, `# rotated 2026-12\n${hex}\n\n${b64}\n`, { mode: 0o600 });
    expect(keyEncryptionKeysFrom({ file }, {})!.ids).toEqual([kekId(Buffer.from(hex, 'hex')), kekId(Buffer.from(b64, 'base64'))]);
    expect(keyEncryptionKeysFrom(undefined, { [KEK_FILE_ENV]: file })!.sealingId).toBe(kekId(Buffer.from(hex, 'hex')));
    expect(() => keyEncryptionKeysFrom({ file }, { [KEK_ENV]: b64 })).toThrow(`the key-encryption keys are given twice (keyEncryptionKeyFile (${file}) and ${KEK_ENV}); give them one way`);
    writeFileSync(file, '# nothing yet\n');
    expect(() => keyEncryptionKeysFrom({ file }, {})).toThrow(`keyEncryptionKeyFile: the key-encryption key file ${file} holds no key`);
    expect(() => keyEncryptionKeysFrom({ file: `${file}.missing` }, {})).toThrow('does not exist');
  });
});
