/**
 * The platform's signing keys for price challenges and receipts. Public halves live
 * in the database (so every instance and every old receipt can find them by id);
 * private halves live in `<dataDir>/keys/<keyId>.pem`, mode 0600, and never leave.
 * Instances that share the database follow each other's rotations (`startRefresh`).
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../core/errors.js';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../../core/files.js';
import { generateEd25519, signObject } from '../../core/ed25519.js';
import type { SigningKeyRecord } from '../../store/repos/platform.js';
import type { DomainContext } from '../platform/context.js';
import { Periodic } from '../platform/periodic.js';

export interface PrivateKeyFiles {
  read(keyId: string): string | undefined;
  /** Stores a new key, durably (fsynced) before it returns: the database row naming it is committed after. */
  write(keyId: string, pem: string): void;
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
  };
}

export class SigningKeys {
  private current?: { id: string; key: KeyObject; publicKeyPem: string };
  private readonly refresher = new Periodic(() => this.refresh());

  constructor(private ctx: DomainContext, private files: PrivateKeyFiles) {}

  /** Loads the current key, creating the first one on a new database. */
  async init(): Promise<void> {
    const rec = await this.ctx.store.read((r) => r.signingKeys.current());
    if (rec) this.load(rec);
    else await this.rotate();
  }

  private load(rec: SigningKeyRecord): void {
    const pem = this.files.read(rec.id);
    if (pem === undefined) {
      // never a silent rotation: what was signed with it must stay verifiable, and other instances may sign with it
      throw new AppError(
        'INTERNAL',
        `the private key file of signing key ${rec.id} (keys/${rec.id}.pem in the data directory) is missing; restore it from a backup of the data directory ` +
          '(instances that share a database must share its keys directory too)',
        { signingKeyId: rec.id, file: `keys/${rec.id}.pem` },
      );
    }
    this.current = { id: rec.id, key: privateKeyOf(rec, pem), publicKeyPem: rec.publicKeyPem };
  }

  /** A new key signs from now on; the old one is retired but stays retrievable by id. */
  async rotate(): Promise<SigningKeyRecord> {
    const pair = generateEd25519();
    const id = this.ctx.ids.next('signingKey');
    this.files.write(id, pair.privateKeyPem);
    const now = this.ctx.clock.now();
    const rec: SigningKeyRecord = { id, publicKeyPem: pair.publicKeyPem, status: 'current', createdAt: now, retiredAt: null };
    await this.ctx.store.tx(async (r) => {
      const old = await r.signingKeys.current();
      if (old) await r.signingKeys.retire(old.id, now);
      await r.signingKeys.insert(rec);
    });
    this.current = { id, key: createPrivateKey(pair.privateKeyPem), publicKeyPem: pair.publicKeyPem };
    return rec;
  }

  /** Another instance may have rotated: follow the database. */
  async refresh(): Promise<void> {
    const before = this.current;
    const rec = await this.ctx.store.read((r) => r.signingKeys.current());
    // a rotation here while reading made a newer key than the one read
    if (this.current !== before) return;
    if (rec && rec.id !== this.current?.id) this.load(rec);
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
 * The private key of a signing key, from its file: an ed25519 private key whose public half is
 * the one the database registered. A damaged or swapped file would sign challenges and receipts
 * nobody can verify, so it stops the start, naming the key.
 */
function privateKeyOf(rec: SigningKeyRecord, pem: string): KeyObject {
  const damaged = (what: string) =>
    new AppError('INTERNAL', `the private key file of signing key ${rec.id} (keys/${rec.id}.pem in the data directory) ${what}; restore it from a backup of the data directory`, { signingKeyId: rec.id });
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
