/**
 * Endpoint secrets. A secret signs every delivery, so the gateway must be able to read it back:
 * it is kept encrypted (AES-256-GCM) under the gateway's webhook key, never in clear and never
 * logged. The key comes from AGENTPAY_WEBHOOK_KEY (32 bytes in base64 or hex; every instance of a
 * fleet needs the same one) or, without it, from DATA_DIR/webhooks/secret-box.key (0600), made on
 * first start.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../../core/errors.js';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../../../core/files.js';

export const ENDPOINT_SECRET_PREFIX = 'whsec_';
export const newEndpointSecret = () => `${ENDPOINT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export const webhookKeyPath = (dataDir: string) => join(dataDir, 'webhooks', 'secret-box.key');
export const WEBHOOK_KEY_ENV = 'AGENTPAY_WEBHOOK_KEY';

/** Encrypts and decrypts endpoint secrets with one 32-byte key. */
export class SecretBox {
  private readonly key: Buffer;
  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('the webhook key must be 32 bytes');
    this.key = Buffer.from(key);
  }

  /** `v1.<iv>.<ciphertext>.<tag>`, base64url */
  seal(secret: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), ct.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [v, iv, ct, tag] = sealed.split('.');
    if (v !== 'v1' || !iv || ct === undefined || !tag) throw new AppError('INTERNAL', 'a webhook endpoint secret is stored in a form this gateway does not read');
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
    } catch {
      throw new AppError('INTERNAL', `a webhook endpoint secret does not decrypt with this gateway's webhook key; every instance needs the same ${WEBHOOK_KEY_ENV} (or DATA_DIR/webhooks/secret-box.key)`);
    }
  }
}

/** A key given as 64 hex characters or base64(url) of 32 bytes. */
export function parseWebhookKey(text: string, source: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  if (key.length !== 32) throw new Error(`${source}: must be 32 random bytes as 64 hex characters or base64 (got ${key.length} bytes); make one with: openssl rand -base64 32`);
  return key;
}

/** The webhook key: from the environment when set, else the data directory's file (made once). */
export function ensureWebhookKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const fromEnv = env[WEBHOOK_KEY_ENV];
  if (fromEnv) return parseWebhookKey(fromEnv, WEBHOOK_KEY_ENV);
  const path = webhookKeyPath(dataDir);
  if (existsSync(path)) return parseWebhookKey(readTextFile(path), path);
  ensurePrivateDir(join(dataDir, 'webhooks'));
  const key = randomBytes(32);
  try {
    // exclusive: two gateways starting on one data directory agree on the first one written
    writeFileAtomic(path, key.toString('base64') + '\n', { mode: 0o600, exclusive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return parseWebhookKey(readTextFile(path), path);
  }
  return key;
}
