/**
 * The sandbox processor's webhook secret: made once per data directory, kept in
 * DATA_DIR/rails/sandbox-webhook.secret (0600), so that webhooks signed before a restart
 * still verify after it and a test or a script on the machine can sign its own.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../core/errors.js';
import { ensurePrivateDir, readTextFile, writeFileAtomic } from '../../core/files.js';

export const webhookSecretPath = (dataDir: string) => join(dataDir, 'rails', 'sandbox-webhook.secret');

const PREFIX = 'whsec_';
/** what `newSecret` makes: the prefix and 24 random bytes in base64url (32 characters) */
export const WEBHOOK_SECRET_LENGTH = PREFIX.length + 32;

const newSecret = () => `${PREFIX}${randomBytes(24).toString('base64url')}`;

export function ensureWebhookSecret(dataDir: string): string {
  const path = webhookSecretPath(dataDir);
  if (existsSync(path)) return readSecret(path);
  ensurePrivateDir(join(dataDir, 'rails'));
  const secret = newSecret();
  try {
    // exclusive: two gateways starting on one data directory agree on the first one written
    writeFileAtomic(path, secret + '\n', { mode: 0o600, exclusive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return readSecret(path);
  }
  return secret;
}

/**
 * The secret on disk, refused when shorter than a made one: an empty or cut secret (a
 * crash while an older version wrote it) would be an HMAC key anyone can guess, and
 * with it anyone could sign a top-up webhook.
 */
function readSecret(path: string): string {
  const secret = readTextFile(path).trim();
  if (secret.length < WEBHOOK_SECRET_LENGTH) {
    throw new AppError(
      'INTERNAL',
      `the sandbox webhook secret in ${path} is ${secret.length === 0 ? 'empty' : `too short (${secret.length} characters, at least ${WEBHOOK_SECRET_LENGTH} expected)`}, ` +
        'so webhooks signed with it could be forged; delete the file and restart the gateway to make a new one ' +
        '(webhooks signed with the old secret will no longer verify)',
    );
  }
  return secret;
}
