/**
 * The sandbox processor's webhook secret: made once per data directory, kept in
 * DATA_DIR/rails/sandbox-webhook.secret (0600), so that webhooks signed before a restart
 * still verify after it and a test or a script on the machine can sign its own.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const webhookSecretPath = (dataDir: string) => join(dataDir, 'rails', 'sandbox-webhook.secret');

export function ensureWebhookSecret(dataDir: string): string {
  const path = webhookSecretPath(dataDir);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(join(dataDir, 'rails'), { recursive: true, mode: 0o700 });
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  try {
    writeFileSync(path, secret + '\n', { mode: 0o600, flag: 'wx' });
  } catch {
    // another process made it first: use theirs
    return readFileSync(path, 'utf8').trim();
  }
  chmodSync(path, 0o600);
  return secret;
}
