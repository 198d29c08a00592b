/** The webhook key and the secret box, on a real temp directory; the signature check on byte bodies. */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureWebhookKey, newEndpointSecret, SecretBox, webhookKeyPath, WEBHOOK_KEY_ENV } from '../../src/domain/platform/webhooks/secrets.js';
import { signWebhookPayload, verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { removeTempDirs, tempDir } from '../cli/helpers.js';

afterAll(removeTempDirs);

describe('the webhook key', () => {
  it('is made once in the data directory (0600) and read back the same', () => {
    const dir = tempDir('agentpay-hookkey-');
    const a = ensureWebhookKey(dir, {});
    expect(a).toHaveLength(32);
    expect(statSync(webhookKeyPath(dir)).mode & 0o777).toBe(0o600);
    expect(ensureWebhookKey(dir, {}).equals(a)).toBe(true);
  });

  it('comes from AGENTPAY_WEBHOOK_KEY (hex or base64) when set, and a wrong length is refused naming it', () => {
    const dir = tempDir('agentpay-hookkey-');
    const key = randomBytes(32);
    expect(ensureWebhookKey(dir, { [WEBHOOK_KEY_ENV]: key.toString('hex') }).equals(key)).toBe(true);
    expect(ensureWebhookKey(dir, { [WEBHOOK_KEY_ENV]: key.toString('base64') }).equals(key)).toBe(true);
    expect(() => ensureWebhookKey(dir, { [WEBHOOK_KEY_ENV]: 'c2hvcnQ=' })).toThrow(/AGENTPAY_WEBHOOK_KEY: must be 32 random bytes/);
  });
});

describe('the secret box', () => {
  it('seals a secret so that the sealed text does not contain it, opens it again, and refuses another key', () => {
    const box = new SecretBox(randomBytes(32));
    const secret = newEndpointSecret();
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    expect(box.seal(secret)).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow(/does not decrypt/);
    expect(() => box.open(sealed.replace(/\.[^.]+$/, '.AAAAAAAAAAAAAAAAAAAAAA'))).toThrow(/does not decrypt/);
  });
});

describe('verifyWebhookSignature', () => {
  it('takes the body as a string, bytes or an ArrayBuffer alike', async () => {
    const secret = newEndpointSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'payout.returned', createdAt: '2026-01-01T00:00:00.000Z', data: { note: 'é☀️' } });
    const now = Date.UTC(2026, 0, 1);
    const header = await signWebhookPayload(body, secret, now / 1000);
    const bytes = new TextEncoder().encode(body);
    for (const raw of [body, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)]) {
      await expect(verifyWebhookSignature(raw, header, secret, { now })).resolves.toMatchObject({ id: 'evt_1', data: { note: 'é☀️' } });
    }
    // the same check as an outside implementation would do it: HMAC-SHA256 of `${t}.${body}` in hex
    const { createHmac } = await import('node:crypto');
    expect(header).toBe(`t=${now / 1000},v1=${createHmac('sha256', secret).update(`${now / 1000}.${body}`).digest('hex')}`);
  });
});
