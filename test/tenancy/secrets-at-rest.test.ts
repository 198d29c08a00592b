import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxPath } from '../../src/domain/platform/mailer.js';
import { sqliteOf, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { lastMail, signUp, uniqueEmail } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

/** Every row of a table as one string, read beside the gateway (SQLite's connection, or PostgreSQL's). */
function tableText(table: string): string {
  const rows = sqliteOf(t.gw).prepare(`SELECT * FROM ${table}`).all();
  expect(rows.length).toBeGreaterThan(0);
  return JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}

describe('secrets at rest', () => {
  it('keeps API keys, passwords and one-time tokens only as hashes', async () => {
    const password = 'the plaintext password 42';
    const signupEmail = uniqueEmail('pending');
    await t.client().signup.start({ kind: 'provider', name: 'Pending', email: signupEmail, password });
    const signupToken = lastMail(t.dataDir, { to: signupEmail }).token;

    const { email, apiKey } = await signUp(t, { password });
    const login = await t.client().accounts.login({ email, password });
    const created = (await t.client(apiKey.key).keys.create({ name: 'extra' })).apiKey;
    await t.client().accounts.forgotPassword({ email });
    const resetToken = lastMail(t.dataDir, { to: email, kind: 'password_reset' }).token;

    const apiKeys = tableText('api_keys');
    for (const key of [apiKey.key, login.apiKey.key, created.key, t.creds.workspace.apiKey, t.creds.operatorKey]) {
      expect(apiKeys).not.toContain(key);
      expect(apiKeys).toContain(key.slice(0, 10)); // the display prefix is kept, the rest is not
    }
    for (const table of ['accounts', 'signups']) {
      const text = tableText(table);
      expect(text).not.toContain(password);
      expect(text).toContain('$scrypt$');
    }
    expect(tableText('signups')).not.toContain(signupToken);
    expect(tableText('password_resets')).not.toContain(resetToken);
  });

  it('writes the outbox with mode 0600, since it carries tokens', async () => {
    await t.client().signup.start({ kind: 'workspace', name: 'Mode', email: uniqueEmail(), password: 'long enough password' });
    expect(statSync(outboxPath(t.dataDir)).mode & 0o777).toBe(0o600);
  });
});
