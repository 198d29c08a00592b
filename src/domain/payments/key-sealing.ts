/**
 * The key-encryption keys (KEKs) that seal the platform's signing keys in the database
 * (AES-256-GCM, the signing key's id as associated data: a sealed key copied onto another row
 * does not open). The operator gives them, 32 random bytes each as 64 hex characters or base64:
 * AGENTPAY_KEY_ENCRYPTION_KEY (the one that seals) with AGENTPAY_KEY_ENCRYPTION_KEY_PREVIOUS
 * (older ones, still read, comma-separated), or a file of them, one a line, the first sealing
 * (AGENTPAY_KEY_ENCRYPTION_KEY_FILE or the config file's keyEncryptionKeyFile). A sealed key
 * names its KEK by an id derived from it (`kek_` and 16 hex digits of a hash), never the KEK.
 * docs/deploy.md, "Signing keys", says how to rotate them.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { AppError } from '../../core/errors.js';
import { readTextFile } from '../../core/files.js';

export const KEK_ENV = 'AGENTPAY_KEY_ENCRYPTION_KEY';
export const KEK_PREVIOUS_ENV = 'AGENTPAY_KEY_ENCRYPTION_KEY_PREVIOUS';
export const KEK_FILE_ENV = 'AGENTPAY_KEY_ENCRYPTION_KEY_FILE';

const SEALED = 'v1';
const MAKE_ONE = 'make one with: openssl rand -base64 32';

/** A KEK setting that cannot be used (wrong length, missing file, two ways at once); `setting` names it. */
export class KeyEncryptionSettingError extends Error {
  constructor(message: string, readonly setting: string) {
    super(message);
    this.name = 'KeyEncryptionSettingError';
  }
}

/** The settings the KEKs come from (GatewayConfig.keyEncryption). */
export interface KeyEncryptionSettings {
  /** the KEKs themselves, the first sealing (embedders and tests; the CLI passes a file or the environment) */
  keys?: string[];
  /** a file of KEKs, one a line (blank lines and # comments skipped), the first sealing */
  file?: string;
}

/** A KEK's id: what a sealed key records of the KEK that sealed it. */
export function kekId(kek: Uint8Array): string {
  return `kek_${createHash('sha256').update('agentpay key-encryption key id\0').update(kek).digest('hex').slice(0, 16)}`;
}

/** A KEK as 64 hex characters or base64(url) of 32 bytes; `setting` names where it came from in the error. */
export function parseKek(text: string, label: string, setting = label): Buffer {
  const t = text.trim();
  // hex when it is all hex digits (32 bytes of base64 are 43 or 44 characters, with others among them)
  const hex = /^(?:[0-9a-f]{2})+$/i.test(t);
  const key = hex ? Buffer.from(t, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(t) ? Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64') : Buffer.alloc(0);
  if (key.length !== 32) throw new KeyEncryptionSettingError(`${label}: a key-encryption key must be 32 random bytes as 64 hex characters or base64 (got ${key.length} bytes${hex ? ' of hex' : ''}); ${MAKE_ONE}`, setting);
  return key;
}

/** Whether a stored private key is sealed (else it is a PEM in clear, or absent). */
export const isSealed = (stored: string): boolean => stored.startsWith(`${SEALED}.`);

/** The KEKs of this instance: the first seals, every one opens what it sealed. */
export class KeyEncryptionKeys {
  private readonly byId: Map<string, Buffer>;
  readonly sealingId: string;

  constructor(keys: Uint8Array[]) {
    if (keys.length === 0) throw new Error('KeyEncryptionKeys needs at least one key');
    for (const k of keys) if (k.length !== 32) throw new Error('a key-encryption key must be 32 bytes');
    this.byId = new Map(keys.map((k) => [kekId(k), Buffer.from(k)]));
    this.sealingId = kekId(keys[0]!);
  }

  /** the ids of the KEKs this instance reads, the sealing one first */
  get ids(): string[] {
    return [...this.byId.keys()];
  }

  /** `v1.<kek id>.<iv>.<ciphertext>.<tag>`, base64url, bound to the signing key's id */
  seal(signingKeyId: string, pem: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.byId.get(this.sealingId)!, iv);
    c.setAAD(Buffer.from(signingKeyId, 'utf8'));
    const ct = Buffer.concat([c.update(pem, 'utf8'), c.final()]);
    return [SEALED, this.sealingId, iv.toString('base64url'), ct.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
  }

  /** Whether `stored` is sealed with the KEK that seals now (else a re-seal moves it there). */
  sealedWithCurrent(stored: string): boolean {
    return stored.startsWith(`${SEALED}.${this.sealingId}.`);
  }

  /** The PEM of a sealed key; an AppError naming the key and what to do when no KEK here opens it. */
  open(signingKeyId: string, stored: string): string {
    const [v, id, iv, ct, tag] = stored.split('.');
    if (v !== SEALED || !id || !iv || ct === undefined || !tag) {
      throw new AppError('INTERNAL', `the private key of signing key ${signingKeyId} is stored in a form this gateway does not read; restore the signing_keys table from a backup`, { signingKeyId });
    }
    const kek = this.byId.get(id);
    if (!kek) {
      throw new AppError(
        'INTERNAL',
        `the private key of signing key ${signingKeyId} is sealed with key-encryption key ${id}, which is not one this gateway was given (it has ${this.ids.join(', ')}); ` +
          `give that key as ${KEK_ENV} or ${KEK_PREVIOUS_ENV} (or in the key file), as every instance on this database has`,
        { signingKeyId, keyEncryptionKeyId: id, given: this.ids },
      );
    }
    try {
      const d = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
      d.setAAD(Buffer.from(signingKeyId, 'utf8'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
    } catch {
      throw new AppError('INTERNAL', `the sealed private key of signing key ${signingKeyId} does not open with key-encryption key ${id}: it was changed or damaged in the database; restore the signing_keys table from a backup`, {
        signingKeyId,
        keyEncryptionKeyId: id,
      });
    }
  }
}

/**
 * The KEKs given to this instance, from the settings or else the environment; undefined when
 * none is given. Two sources at once, an empty file, or a key of the wrong length stop the start
 * with an Error naming the setting.
 */
export function keyEncryptionKeysFrom(settings: KeyEncryptionSettings | undefined, env: NodeJS.ProcessEnv = process.env): KeyEncryptionKeys | undefined {
  const sources: { name: string; setting: string; keys: () => Buffer[] }[] = [];
  if (settings?.keys?.length) sources.push({ name: 'keyEncryption.keys', setting: 'keyEncryption.keys', keys: () => settings.keys!.map((k, i) => parseKek(k, `keyEncryption.keys[${i}]`, 'keyEncryption.keys')) });
  if (settings?.file) sources.push({ name: `keyEncryptionKeyFile (${settings.file})`, setting: 'keyEncryptionKeyFile', keys: () => fromFile(settings.file!, 'keyEncryptionKeyFile') });
  if (env[KEK_FILE_ENV]) sources.push({ name: KEK_FILE_ENV, setting: KEK_FILE_ENV, keys: () => fromFile(env[KEK_FILE_ENV]!, KEK_FILE_ENV) });
  if (env[KEK_ENV]) {
    sources.push({
      name: KEK_ENV,
      setting: KEK_ENV,
      keys: () => [
        parseKek(env[KEK_ENV]!, KEK_ENV),
        ...(env[KEK_PREVIOUS_ENV] ?? '').split(',').map((t) => t.trim()).filter(Boolean).map((t, i) => parseKek(t, `${KEK_PREVIOUS_ENV} (key ${i + 1})`, KEK_PREVIOUS_ENV)),
      ],
    });
  } else if (env[KEK_PREVIOUS_ENV]) {
    throw new KeyEncryptionSettingError(`${KEK_PREVIOUS_ENV} is set but ${KEK_ENV} is not: the previous keys are read beside the one that seals; set ${KEK_ENV} too`, KEK_PREVIOUS_ENV);
  }
  if (sources.length === 0) return undefined;
  if (sources.length > 1) throw new KeyEncryptionSettingError(`the key-encryption keys are given twice (${sources.map((s) => s.name).join(' and ')}); give them one way`, sources[1]!.setting);
  return new KeyEncryptionKeys(sources[0]!.keys());
}

function fromFile(path: string, setting: string): Buffer[] {
  if (!existsSync(path)) throw new KeyEncryptionSettingError(`${setting}: the key-encryption key file ${path} does not exist`, setting);
  const lines = readTextFile(path).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (lines.length === 0) throw new KeyEncryptionSettingError(`${setting}: the key-encryption key file ${path} holds no key; put one on its first line (${MAKE_ONE})`, setting);
  return lines.map((l, i) => parseKek(l, `${setting} (${path}, key ${i + 1})`, setting));
}
