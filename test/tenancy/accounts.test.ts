import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_KEY_TTL_MS } from '../../src/domain/tenancy/accounts.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { lastMail, readOutbox, refusal, signUp, uniqueEmail } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

describe('POST /v1/accounts/login', () => {
  it('mints a new 30-day key named "login <time>" with the default scopes of the tenant kind', async () => {
    const { email, password, tenant, apiKey } = await signUp(t, { kind: 'provider' });
    const login = await t.client().accounts.login({ email: ` ${email.toUpperCase()}`, password });
    expect(login.tenant).toEqual(tenant);
    expect(login.apiKey.id).not.toBe(apiKey.id);
    expect(login.apiKey.scopes).toEqual(apiKey.scopes);
    const me = await t.client(login.apiKey.key).auth.whoami();
    expect(me.tenant.id).toBe(tenant.id);
    expect(me.key.name).toMatch(/^login \d{4}-\d{2}-\d{2}T/);
    expect(Math.abs(Date.parse(login.apiKey.expiresAt) - Date.parse(me.key.createdAt) - LOGIN_KEY_TTL_MS)).toBeLessThan(50);
    expect(me.key.expiresAt).toBe(login.apiKey.expiresAt);
  });

  it('answers a wrong password and an unknown email with the same 401 UNAUTHORIZED', async () => {
    const { email } = await signUp(t);
    const wrongPassword = await refusal(t.client().accounts.login({ email, password: 'not the password' }));
    const unknownEmail = await refusal(t.client().accounts.login({ email: uniqueEmail('nobody'), password: 'not the password' }));
    expect(wrongPassword).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(unknownEmail).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(unknownEmail.message).toBe(wrongPassword.message);
    expect(unknownEmail.details).toEqual(wrongPassword.details);
  });

  it('does not log in a signup that was never verified', async () => {
    const email = uniqueEmail('pending');
    await t.client().signup.start({ kind: 'workspace', name: 'Pending', email, password: 'pending password' });
    expect(await refusal(t.client().accounts.login({ email, password: 'pending password' }))).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('password recovery', () => {
  it('answers {ok: true} for an unknown email and mails it a notice without a token (so both take as long)', async () => {
    const ghost = uniqueEmail('ghost');
    expect(await t.client().accounts.forgotPassword({ email: ghost })).toEqual({ ok: true });
    const sent = readOutbox(t.dataDir).filter((m) => m.to === ghost);
    expect(sent).toMatchObject([{ kind: 'password_reset_no_account' }]);
    expect(sent[0]).not.toHaveProperty('token');
  });

  it('mails a reset token that sets a new password once', async () => {
    const { email, password } = await signUp(t);
    expect(await t.client().accounts.forgotPassword({ email })).toEqual({ ok: true });
    const mail = lastMail(t.dataDir, { to: email, kind: 'password_reset' });
    expect(await t.client().accounts.resetPassword({ token: mail.token, password: 'a brand new secret' })).toEqual({ ok: true });

    expect(await refusal(t.client().accounts.login({ email, password }))).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await t.client().accounts.login({ email, password: 'a brand new secret' })).apiKey.key).toMatch(/^ap_w_/);

    const again = await refusal(t.client().accounts.resetPassword({ token: mail.token, password: 'yet another secret' }));
    expect(again).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'token' } });
    expect((await t.client().accounts.login({ email, password: 'a brand new secret' })).tenant.kind).toBe('workspace');
  });

  it('refuses a short new password with 400 naming password and leaves the token usable', async () => {
    const { email } = await signUp(t);
    await t.client().accounts.forgotPassword({ email });
    const { token } = lastMail(t.dataDir, { to: email, kind: 'password_reset' });
    const e = await refusal(t.client().accounts.resetPassword({ token, password: 'short' }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'password' } });
    expect(await t.client().accounts.resetPassword({ token, password: 'long enough now' })).toEqual({ ok: true });
  });

  it('refuses an unknown token with 400 naming token', async () => {
    expect(await refusal(t.client().accounts.resetPassword({ token: 'made-up', password: 'long enough now' }))).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'token' },
    });
  });
});

describe('password recovery with two tokens', () => {
  let m: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => {
    m = await startTestGateway({ clock });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('retires the other open reset tokens of the account when one is used', async () => {
    const { email } = await signUp(m);
    await m.client().accounts.forgotPassword({ email });
    const first = lastMail(m.dataDir, { to: email, kind: 'password_reset' }).token;
    clock.advance(60_000); // past the reset-mail throttle (one mail per address a minute)
    await m.client().accounts.forgotPassword({ email });
    const second = lastMail(m.dataDir, { to: email, kind: 'password_reset' }).token;
    expect(second).not.toBe(first);
    await m.client().accounts.resetPassword({ token: second, password: 'second token wins' });
    expect(await refusal(m.client().accounts.resetPassword({ token: first, password: 'first token loses' }))).toMatchObject({ details: { field: 'token' } });
  });
});

describe('password recovery over time, with --dev-echo-tokens', () => {
  let m: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => {
    m = await startTestGateway({ clock, config: { tokenTtlMs: 60_000, devEchoTokens: true } });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('echoes the reset token only for an existing account', async () => {
    const { email } = await signUp(m);
    const known = await m.client().accounts.forgotPassword({ email });
    expect(known.token).toBe(lastMail(m.dataDir, { to: email, kind: 'password_reset' }).token);
    expect(await m.client().accounts.forgotPassword({ email: uniqueEmail('ghost') })).toEqual({ ok: true });
  });

  it('refuses an expired reset token with 400 naming token', async () => {
    const { email, password } = await signUp(m);
    const { token } = await m.client().accounts.forgotPassword({ email });
    clock.advance(60_000);
    const e = await refusal(m.client().accounts.resetPassword({ token: token!, password: 'too late for this' }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'token' } });
    expect(e.message).toContain('expired');
    expect((await m.client().accounts.login({ email, password })).tenant.kind).toBe('workspace');
  });

  it('lets a login key expire after 30 days with 401 "API key expired"', async () => {
    const { email, password } = await signUp(m);
    const { apiKey } = await m.client().accounts.login({ email, password });
    clock.advance(LOGIN_KEY_TTL_MS - 1);
    expect((await m.client(apiKey.key).auth.whoami()).key.id).toBe(apiKey.id);
    clock.advance(1);
    expect(await refusal(m.client(apiKey.key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', status: 401, message: 'API key expired' });
  });
});
