import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPES } from '../../src/domain/tenancy/scopes.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { snapshotDb } from '../helpers/matrix.js';
import { lastMail, PASSWORD, readOutbox, refusal, signUp, uniqueEmail } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

describe('POST /v1/signup', () => {
  it('creates a pending signup, mails the token to the outbox and does not echo it', async () => {
    const email = uniqueEmail('alice');
    const res = await t.client().signup.start({ kind: 'workspace', name: 'Alice Labs', email: `  ${email.toUpperCase()} `, password: PASSWORD });
    expect(res.token).toBeUndefined();
    expect(res.signup).toMatchObject({ kind: 'workspace', status: 'pending', email, verifiedAt: null, tenantId: null });
    expect(res.signup.id).toMatch(/^sgn_/);
    expect(Date.parse(res.signup.createdAt)).not.toBeNaN();
    const mail = lastMail(t.dataDir, { signupId: res.signup.id });
    expect(mail).toMatchObject({ kind: 'signup_verification', to: email });
    expect(mail.token.length).toBeGreaterThanOrEqual(43); // 256 bits in base64url
    expect(mail.text).toContain(mail.token);
  });

  it('answers an email that already has an account like a new one, but mails its owner a notice, not a token', async () => {
    // the full set of checks is in signup-enumeration.test.ts
    const { email } = await signUp(t);
    const res = await t.client().signup.start({ kind: 'provider', name: 'Again', email: email.toUpperCase(), password: PASSWORD });
    expect(res.token).toBeUndefined();
    expect(res.signup).toMatchObject({ kind: 'provider', status: 'pending', email, verifiedAt: null, tenantId: null });
    const notice = readOutbox(t.dataDir).filter((m) => m.signupId === res.signup.id);
    expect(notice).toMatchObject([{ kind: 'signup_existing_account', to: email }]);
    expect(notice[0]).not.toHaveProperty('token');
  });

  it.each([
    [{ password: 'short' }, 'password'],
    [{ email: 'not-an-email' }, 'email'],
    [{ email: 'a b@example.com' }, 'email'],
    [{ name: '   ' }, 'name'],
    [{ website: 'ftp://example.com' }, 'website'],
    [{ kind: 'buyer' }, 'kind'],
  ])('refuses %o with 400 VALIDATION_FAILED naming %s', async (patch, field) => {
    const body = { kind: 'workspace', name: 'Valid Name', email: uniqueEmail(), password: PASSWORD, ...patch };
    const e = await refusal(t.client().http.request('POST', '/v1/signup', { body }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(e.details.field).toBe(field);
    expect(e.message.startsWith(field)).toBe(true);
  });
});

describe('POST /v1/signup/verify', () => {
  it('creates a workspace, its account and a first key that works on GET /v1/whoami', async () => {
    const email = uniqueEmail('ws');
    const { signup } = await t.client().signup.start({ kind: 'workspace', name: 'Buyer Co', email, password: PASSWORD });
    const { token } = lastMail(t.dataDir, { signupId: signup.id });
    const verified = await t.client().signup.verify({ signupId: signup.id, token });
    expect(verified.tenant.kind).toBe('workspace');
    expect(verified.tenant.id).toMatch(/^wsp_/);
    expect(verified.tenant.walletId).toBeUndefined();
    expect(verified.apiKey.key).toMatch(/^ap_w_/);
    expect(verified.apiKey.scopes).toEqual([...DEFAULT_SCOPES.workspace]);

    const me = await t.client(verified.apiKey.key).auth.whoami();
    expect(me.tenant).toEqual({ id: verified.tenant.id, kind: 'workspace', name: 'Buyer Co', status: 'active', verified: false });
    expect(me.key.id).toBe(verified.apiKey.id);

    const { signup: after } = await t.client().signup.get(signup.id);
    expect(after).toMatchObject({ status: 'verified', tenantId: verified.tenant.id });
    expect(after.verifiedAt).not.toBeNull();
  });

  it('gives a provider its settlement wallet, pending_verification and unverified', async () => {
    const { tenant, apiKey } = await signUp(t, { kind: 'provider', name: 'Seller Co' });
    expect(tenant.kind).toBe('provider');
    expect(tenant.id).toMatch(/^prv_/);
    expect(tenant.walletId).toMatch(/^wal_/);
    const seller = t.client(apiKey.key);
    const me = await seller.auth.whoami();
    expect(me.tenant).toMatchObject({ id: tenant.id, status: 'pending_verification', verified: false, walletId: tenant.walletId });
    const wallet = await seller.wallets.get(tenant.walletId!);
    expect(wallet).toMatchObject({ ownerType: 'settlement', ownerId: tenant.id });
    expect(apiKey.scopes).toEqual([...DEFAULT_SCOPES.provider]);
  });

  it('refuses a wrong token with 400 VALIDATION_FAILED naming token, and creates nothing', async () => {
    const { signup } = await t.client().signup.start({ kind: 'workspace', name: 'X', email: uniqueEmail(), password: PASSWORD });
    const before = snapshotDb(t.dataDir);
    const e = await refusal(t.client().signup.verify({ signupId: signup.id, token: 'A'.repeat(43) }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'token' } });
    const after = snapshotDb(t.dataDir);
    expect(after.tenants).toEqual(before.tenants);
    expect(after.accounts).toEqual(before.accounts);
  });

  it('refuses a second verification with 409 CONFLICT', async () => {
    const { signupId } = await signUp(t);
    const { token } = lastMail(t.dataDir, { signupId });
    const e = await refusal(t.client().signup.verify({ signupId, token }));
    expect(e).toMatchObject({ code: 'CONFLICT', status: 409 });
  });

  it('answers 404 NOT_FOUND for an unknown signup id', async () => {
    const e = await refusal(t.client().signup.verify({ signupId: 'sgn_doesnotexist', token: 'x' }));
    expect(e).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(await refusal(t.client().signup.get('sgn_doesnotexist'))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses the second of two signups for one email once the first is verified (only its token holder learns why)', async () => {
    const email = uniqueEmail('twice');
    const a = await t.client().signup.start({ kind: 'workspace', name: 'A', email, password: PASSWORD });
    const b = await t.client().signup.start({ kind: 'workspace', name: 'B', email, password: PASSWORD });
    await t.client().signup.verify({ signupId: a.signup.id, token: lastMail(t.dataDir, { signupId: a.signup.id }).token });
    const e = await refusal(t.client().signup.verify({ signupId: b.signup.id, token: lastMail(t.dataDir, { signupId: b.signup.id }).token }));
    expect(e).toMatchObject({ code: 'CONFLICT', status: 409 });
  });
});

describe('POST /v1/signup/resend', () => {
  it('mails a new token and the old one stops working', async () => {
    const { signup } = await t.client().signup.start({ kind: 'workspace', name: 'Resender', email: uniqueEmail(), password: PASSWORD });
    const old = lastMail(t.dataDir, { signupId: signup.id }).token;
    const resent = await t.client().signup.resend(signup.id);
    expect(resent.signup.id).toBe(signup.id);
    expect(resent.token).toBeUndefined();
    const fresh = lastMail(t.dataDir, { signupId: signup.id }).token;
    expect(fresh).not.toBe(old);
    expect(await refusal(t.client().signup.verify({ signupId: signup.id, token: old }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'token' } });
    const verified = await t.client().signup.verify({ signupId: signup.id, token: fresh });
    expect(verified.tenant.kind).toBe('workspace');
  });

  it('refuses a verified signup with 409 CONFLICT and an unknown one with 404', async () => {
    const { signupId } = await signUp(t);
    expect(await refusal(t.client().signup.resend(signupId))).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(await refusal(t.client().signup.resend('sgn_nope'))).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
});

describe('the outbox', () => {
  it('holds one JSON message per line: a token with its expiry, or a notice without either (its mode is checked in secrets-at-rest.test.ts)', async () => {
    await t.client().signup.start({ kind: 'workspace', name: 'Lines', email: uniqueEmail(), password: PASSWORD });
    const lines = readOutbox(t.dataDir);
    expect(lines.some((l) => l.kind === 'signup_verification')).toBe(true);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(expect.arrayContaining(['at', 'kind', 'to', 'subject', 'text']));
      const carriesToken = line.kind === 'signup_verification' || line.kind === 'password_reset';
      expect('token' in line && 'expiresAt' in line).toBe(carriesToken);
    }
  });
});

describe('signup tokens over time', () => {
  let m: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => {
    m = await startTestGateway({ clock, config: { tokenTtlMs: 60_000 } });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('refuses an expired token with 400 naming token; a resend brings a working one', async () => {
    const { signup } = await m.client().signup.start({ kind: 'provider', name: 'Late', email: uniqueEmail(), password: PASSWORD });
    const { token } = lastMail(m.dataDir, { signupId: signup.id });
    clock.advance(60_000);
    const e = await refusal(m.client().signup.verify({ signupId: signup.id, token }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'token' } });
    expect(e.message).toContain('expired');
    await m.client().signup.resend(signup.id);
    const fresh = lastMail(m.dataDir, { signupId: signup.id }).token;
    clock.advance(59_000);
    expect((await m.client().signup.verify({ signupId: signup.id, token: fresh })).tenant.kind).toBe('provider');
  });
});

describe('a gateway with --dev-echo-tokens', () => {
  let d: TestGateway;
  beforeAll(async () => {
    d = await startTestGateway({ config: { devEchoTokens: true } });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('echoes the signup token, which verifies, and still mails it', async () => {
    const started = await d.client().signup.start({ kind: 'workspace', name: 'Echo', email: uniqueEmail(), password: PASSWORD });
    expect(started.token).toBeTypeOf('string');
    expect(lastMail(d.dataDir, { signupId: started.signup.id }).token).toBe(started.token);
    const resent = await d.client().signup.resend(started.signup.id);
    expect(resent.token).toBeTypeOf('string');
    expect(resent.token).not.toBe(started.token);
    const verified = await d.client().signup.verify({ signupId: started.signup.id, token: resent.token! });
    expect(verified.apiKey.key).toMatch(/^ap_w_/);
  });
});
