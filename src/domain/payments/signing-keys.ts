/**
 * The platform's signing keys for price challenges and receipts. Public halves live in the
 * database (so every instance and every old receipt can find them by id). Where the private
 * halves live is the operator's choice (KeyStorage, chosen at start by src/gateway/server.ts):
 * - `sealed`: in the database, sealed with the operator's key-encryption key (./key-sealing.ts),
 *   so the instances of a fleet share nothing but the database;
 * - `clear`: in the database as PEM, a sandbox fleet without a key-encryption key (logged);
 * - `files`: in `<dataDir>/keys/<keyId>.pem`, mode 0600, without a key-encryption key (one
 *   instance, or instances that share that directory).
 * A key is read from wherever it is (a sealed one needs its KEK); on start, keys still only in
 * DATA_DIR/keys are imported into the database (`sealed`, `clear`; the files are left), and
 * keys sealed with an older KEK are sealed again with the one that seals now.
 * A current key is made or replaced under the store's lock (SigningKeys.lockCurrent): N
 * instances started at once on a fresh database make one. Instances that share the database
 * follow each other's rotations (`startRefresh`). A private key is never logged nor answered.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../core/errors.js';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../../core/files.js';
import { generateEd25519, signObject } from '../../core/ed25519.js';
import type { SigningKeyRecord } from '../../store/repos/platform.js';
import type { DomainContext } from '../platform/context.js';
import { Periodic } from '../platform/periodic.js';
import { isSealed, type KeyEncryptionKeys } from './key-sealing.js';

/** Where new private keys are kept (module comment). */
export type KeyStorage = { kind: 'sealed'; keks: KeyEncryptionKeys } | { kind: 'clear' } | { kind: 'files' };

/** What the start did with the stored keys (SigningKeys.init), for the log: ids only, never a key. */
export interface KeyStorageReport {
  /** keys whose private half was copied from DATA_DIR/keys into the database (the files are left) */
  imported: string[];
  /** keys sealed again with the KEK that seals now (they were sealed with an older one, or in clear) */
  resealed: string[];
  /** retired keys left as they are, and why (their private halves are not needed to verify) */
  skipped: { signingKeyId: string; reason: string }[];
}

export interface PrivateKeyFiles {
  read(keyId: string): string | undefined;
  /** Stores a new key, durably (fsynced) before it returns: the database row naming it is committed after. */
  write(keyId: string, pem: string): void;
  /** Removes the file of a key that was never registered (another instance made the first key meanwhile). */
  remove?(keyId: string): void;
}

/** What `tightenPrivateKeyDir` found: the mode DATA_DIR/keys had, and whether it is now 0700. */
export interface KeyDirTightening {
  dir: string;
  previousMode: number;
  tightened: boolean;
  /** why it could not be changed (EPERM: another owner; EROFS: a read-only mount) */
  error?: string;
}

/**
 * DATA_DIR/keys is the owner's alone (0700). A directory made by hand or mounted (instances that
 * share a database share it) may be wider: it is narrowed at start, and the start logs what it
 * found. Undefined when there is no such directory or it is already private.
 */
export function tightenPrivateKeyDir(dataDir: string): KeyDirTightening | undefined {
  const dir = join(dataDir, 'keys');
  if (!existsSync(dir)) return undefined;
  const previousMode = statSync(dir).mode & 0o777;
  if ((previousMode & 0o077) === 0) return undefined;
  try {
    chmodSync(dir, 0o700);
    return { dir, previousMode, tightened: true };
  } catch (e) {
    return { dir, previousMode, tightened: false, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
  }
}

export function privateKeyDir(dataDir: string): PrivateKeyFiles {
  const dir = join(dataDir, 'keys');
  return {
    read(keyId) {
      const p = join(dir, `${keyId}.pem`);
      return existsSync(p) ? readTextFile(p) : undefined;
    },
    write(keyId, pem) {
      ensurePrivateDir(dir);
      // whole or absent after a power loss, never an empty file the committed row points to; never replaces a key
      writeFileAtomic(join(dir, `${keyId}.pem`), pem, { mode: 0o600, exclusive: true });
    },
    remove(keyId) {
      rmSync(join(dir, `${keyId}.pem`), { force: true });
    },
  };
}

export class SigningKeys {
  private current?: { id: string; key: KeyObject; publicKeyPem: string };
  private readonly refresher = new Periodic(() => this.refresh());
  /** what init() found and did (imports, re-seals) */
  report: KeyStorageReport = { imported: [], resealed: [], skipped: [] };

  constructor(private ctx: DomainContext, private files: PrivateKeyFiles, private storage: KeyStorage = { kind: 'files' }) {}

  /** Loads the current key, creating the first one on a new database (once, however many instances start). */
  async init(): Promise<void> {
    let rec = await this.ctx.store.read((r) => r.signingKeys.current());
    if (!rec) rec = await this.makeCurrent(false);
    if (this.storage.kind !== 'files') this.report = await this.moveIntoDatabase();
    this.current = await this.load(rec);
  }

  /**
   * Imports what is only in DATA_DIR/keys, and re-seals what an older KEK (or none) sealed. Each
   * key is changed by a conditional update: instances starting at once each do it, one wins.
   */
  private async moveIntoDatabase(): Promise<KeyStorageReport> {
    const report: KeyStorageReport = { imported: [], resealed: [], skipped: [] };
    const keks = this.storage.kind === 'sealed' ? this.storage.keks : undefined;
    const keys = await this.ctx.store.read((r) => r.signingKeys.all());
    for (const rec of keys) {
      const stored = await this.ctx.store.read((r) => r.signingKeys.privateKey(rec.id));
      if (stored === undefined) continue;
      let pem: string | undefined;
      let into: 'imported' | 'resealed';
      try {
        if (stored === null) {
          pem = this.files.read(rec.id);
          if (pem === undefined) continue; // another instance's directory may have it; load() says so for the current key
          privateKeyOf(rec, pem, `keys/${rec.id}.pem in the data directory`);
          into = 'imported';
        } else {
          if (!keks || keks.sealedWithCurrent(stored)) continue;
          pem = isSealed(stored) ? keks.open(rec.id, stored) : stored;
          into = 'resealed';
        }
      } catch (e) {
        if (rec.status === 'current') throw e;
        report.skipped.push({ signingKeyId: rec.id, reason: (e as Error).message });
        continue;
      }
      const value = keks ? keks.seal(rec.id, pem) : pem;
      if (await this.ctx.store.tx((r) => r.signingKeys.replacePrivateKey(rec.id, value, stored))) report[into].push(rec.id);
    }
    return report;
  }

  /** The private key of `rec`: from the database (opened with a KEK when sealed), else its file. */
  private async load(rec: SigningKeyRecord): Promise<{ id: string; key: KeyObject; publicKeyPem: string }> {
    const stored = await this.ctx.store.read((r) => r.signingKeys.privateKey(rec.id));
    let pem: string | undefined;
    let from = 'the database';
    if (stored) {
      if (isSealed(stored)) {
        if (this.storage.kind !== 'sealed') {
          throw new AppError('INTERNAL', `the private key of signing key ${rec.id} is sealed with a key-encryption key, and this gateway was given none; set AGENTPAY_KEY_ENCRYPTION_KEY (or a key file) as on the other instances of this database`, { signingKeyId: rec.id });
        }
        pem = this.storage.keks.open(rec.id, stored);
      } else pem = stored;
    } else {
      pem = this.files.read(rec.id);
      from = `keys/${rec.id}.pem in the data directory`;
    }
    if (pem === undefined) {
      // never a silent rotation: what was signed with it must stay verifiable, and other instances may sign with it
      if (this.storage.kind === 'files') {
        throw new AppError(
          'INTERNAL',
          `the private key file of signing key ${rec.id} (keys/${rec.id}.pem in the data directory) is missing; restore it from a backup of the data directory ` +
            '(instances that share a database must share its keys directory too, or be given a key-encryption key: docs/deploy.md)',
          { signingKeyId: rec.id, file: `keys/${rec.id}.pem` },
        );
      }
      throw new AppError(
        'INTERNAL',
        `the private key of signing key ${rec.id} is not in the database, nor in this data directory (keys/${rec.id}.pem); start the instance whose data directory holds keys/${rec.id}.pem once, which imports it, or restore that file from a backup`,
        { signingKeyId: rec.id, file: `keys/${rec.id}.pem` },
      );
    }
    return { id: rec.id, key: privateKeyOf(rec, pem, from), publicKeyPem: rec.publicKeyPem };
  }

  /** A new key signs from now on; the old one is retired but stays retrievable by id. */
  async rotate(): Promise<SigningKeyRecord> {
    return this.makeCurrent(true);
  }

  /**
   * Makes a key current under the lock: a rotation retires the current key; a first key is made
   * only when there is none yet (else the one another instance made is returned).
   */
  private async makeCurrent(rotate: boolean): Promise<SigningKeyRecord> {
    const pair = generateEd25519();
    const id = this.ctx.ids.next('signingKey');
    const s = this.storage;
    let privateKey: string | null = null;
    if (s.kind === 'files') this.files.write(id, pair.privateKeyPem);
    else privateKey = s.kind === 'sealed' ? s.keks.seal(id, pair.privateKeyPem) : pair.privateKeyPem;
    const made = await this.ctx.store.tx(async (r) => {
      await r.signingKeys.lockCurrent();
      const old = await r.signingKeys.current();
      if (old && !rotate) return old;
      const now = this.ctx.clock.now();
      const rec: SigningKeyRecord = { id, publicKeyPem: pair.publicKeyPem, status: 'current', createdAt: now, retiredAt: null };
      if (old) await r.signingKeys.retire(old.id, now);
      await r.signingKeys.insert({ ...rec, privateKey });
      return rec;
    });
    if (made.id === id) this.current = { id, key: createPrivateKey(pair.privateKeyPem), publicKeyPem: pair.publicKeyPem };
    else if (s.kind === 'files') this.files.remove?.(id); // never registered: nothing was signed with it
    return made;
  }

  /** Another instance may have rotated: follow the database. */
  async refresh(): Promise<void> {
    const before = this.current;
    const rec = await this.ctx.store.read((r) => r.signingKeys.current());
    // a rotation here while reading made a newer key than the one read
    if (this.current !== before || !rec || rec.id === before?.id) return;
    const loaded = await this.load(rec);
    if (this.current === before) this.current = loaded;
  }

  /**
   * Refreshes every `intervalMs`, so a rotation by another instance is followed within
   * that time. A failed refresh (say the new key's private file is not in this instance's
   * data directory) keeps the key in use, goes to `onError`, and is tried again next time.
   */
  startRefresh(intervalMs: number, onError: (e: unknown) => void = () => {}): void {
    this.refresher.start(intervalMs, onError);
  }

  /** Stops the timer and waits for a refresh in progress, so the store can close after. */
  stopRefresh(): Promise<void> {
    return this.refresher.stop();
  }

  get currentKeyId(): string {
    if (!this.current) throw new Error('SigningKeys.init() was not called');
    return this.current.id;
  }

  get currentPublicKeyPem(): string {
    if (!this.current) throw new Error('SigningKeys.init() was not called');
    return this.current.publicKeyPem;
  }

  /** Returns the object with `signature` and `signingKeyId` added. */
  sign<T extends Record<string, unknown>>(obj: T): T & { signature: string; signingKeyId: string } {
    if (!this.current) throw new Error('SigningKeys.init() was not called');
    const signature = signObject(this.current.key, obj);
    return { ...obj, signature, signingKeyId: this.current.id };
  }

  async publicKey(keyId: string): Promise<SigningKeyRecord | undefined> {
    return this.ctx.store.read((r) => r.signingKeys.get(keyId));
  }
}

/**
 * The private key of a signing key, from its file or the database (`from`): an ed25519 private
 * key whose public half is the one the database registered. A damaged or swapped one would sign
 * challenges and receipts nobody can verify, so it stops the start, naming the key.
 */
function privateKeyOf(rec: SigningKeyRecord, pem: string, from: string): KeyObject {
  const damaged = (what: string) =>
    from === 'the database'
      ? new AppError('INTERNAL', `the private key of signing key ${rec.id} in the database ${what}; restore the signing_keys table from a backup`, { signingKeyId: rec.id })
      : new AppError('INTERNAL', `the private key file of signing key ${rec.id} (${from}) ${what}; restore it from a backup of the data directory`, { signingKeyId: rec.id });
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw damaged('is not a private key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw damaged(`holds a ${key.asymmetricKeyType ?? 'non-ed25519'} key, not ed25519`);
  const publicPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  if (publicPem.trim() !== rec.publicKeyPem.trim()) throw damaged('holds another key than the one the database registered');
  return key;
}
