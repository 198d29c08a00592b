/**
 * Keys made from keys: a minted key expires no later than the key that made it and records it;
 * revoking a key revokes every key made from it, down the tree; a password reset revokes the
 * keys the account's logins issued (and the keys made from them); a tenant holds at most
 * `accountLimits.keysPerTenant` active keys. Time moves by a ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_KEY_TTL_MS } from '../../src/domain/tenancy/accounts.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { lastMail, refusal, signUp } from './helpers.js';

const clock = new ManualClock();
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock, config: { accountLimits: { keysPerTenant: 6 } } });
});
afterAll(async () => {
  await t?.close();
});

/** A workspace and a 30-day login key of it. */
async function loggedIn() {
  const s = await signUp(t);
  const { apiKey } = await t.client().accounts.login({ email: s.email, password: s.password });
  return { ...s, login: apiKey, loginClient: t.client(apiKey.key), signupClient: t.client(s.apiKey.key) };
}

describe('POST /v1/auth/keys from a key that expires', () => {
  it('gives the new key its parent\'s expiry by default, and records the parent', async () => {
    const { login, loginClient } = await loggedIn();
    const { apiKey: child } = await loginClient.keys.create({ name: 'agent' });
    expect(child.expiresAt).toBe(login.expiresAt);
    expect(child.parentKeyId).toBe(login.id);
    const { apiKey: grandchild } = await t.client(child.key).keys.create({ scopes: ['wallets:read'] });
    expect(grandchild).toMatchObject({ expiresAt: login.expiresAt, parentKeyId: child.id });
    expect((await t.client(grandchild.key).auth.whoami()).key.parentKeyId).toBe(child.id);
  });

  it('accepts an earlier expiry', async () => {
    const { loginClient } = await loggedIn();
    const { apiKey } = await loginClient.keys.create({ expiresInSeconds: 3600 });
    expect(Date.parse(apiKey.expiresAt!)).toBe(clock.now() + 3600_000);
  });

  it('refuses a later expiry, or none, with 400 naming the field and the parent\'s expiry, and adds no key', async () => {
    const { login, loginClient } = await loggedIn();
    const before = (await loginClient.keys.list()).keys.length;
    const laterBySeconds = await refusal(loginClient.keys.create({ expiresInSeconds: LOGIN_KEY_TTL_MS / 1000 + 1 }));
    expect(laterBySeconds).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'expiresInSeconds', parentExpiresAt: login.expiresAt } });
    expect(laterBySeconds.message).toContain(login.expiresAt);
    const laterAt = await refusal(loginClient.keys.create({ expiresAt: new Date(Date.parse(login.expiresAt) + 1000).toISOString() }));
    expect(laterAt).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'expiresAt', parentExpiresAt: login.expiresAt } });
    expect(laterAt.message).toContain(login.expiresAt);
    const never = await refusal(loginClient.keys.create({ expiresAt: null }));
    expect(never).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'expiresAt', reason: 'outlives_parent' } });
    expect(never.message).toContain(login.expiresAt);
    expect((await loginClient.keys.list()).keys).toHaveLength(before);
    // exactly the parent's expiry is allowed
    expect((await loginClient.keys.create({ expiresAt: login.expiresAt })).apiKey.expiresAt).toBe(login.expiresAt);
  });

  it('a key from a key that never expires may still never expire', async () => {
    const { signupClient, apiKey } = await loggedIn();
    expect((await signupClient.keys.create({})).apiKey).toMatchObject({ expiresAt: null, parentKeyId: apiKey.id });
    expect((await signupClient.keys.create({ expiresAt: null })).apiKey.expiresAt).toBeNull();
  });

  it('never lets a child outlive its parent: both get 401 "API key expired" from the same moment', async () => {
    const { login, loginClient } = await loggedIn();
    const { apiKey: child } = await loginClient.keys.create({ name: 'child' });
    clock.set(Date.parse(login.expiresAt) - 1);
    expect((await t.client(child.key).auth.whoami()).key.id).toBe(child.id);
    clock.advance(1);
    for (const key of [login.key, child.key]) {
      expect(await refusal(t.client(key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', message: 'API key expired' });
    }
  });
});

describe('POST /v1/auth/keys/:id/revoke', () => {
  it('revokes the key and every key made from it, down the tree, and says how many; others stay', async () => {
    const { signupClient, apiKey: root } = await loggedIn();
    const { apiKey: child } = await signupClient.keys.create({ name: 'child' });
    const { apiKey: grandchild } = await t.client(child.key).keys.create({ name: 'grandchild' });
    const { apiKey: sibling } = await signupClient.keys.create({ name: 'sibling' });

    const res = await signupClient.keys.revoke(child.id);
    expect(res.revokedCount).toBe(2);
    expect([...res.revokedKeyIds].sort()).toEqual([child.id, grandchild.id].sort());
    expect(res.key).toMatchObject({ id: child.id, revokedAt: new Date(clock.now()).toISOString(), parentKeyId: root.id });
    for (const key of [child.key, grandchild.key]) {
      expect(await refusal(t.client(key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', message: 'API key revoked' });
    }
    for (const key of [root.key, sibling.key]) expect((await t.client(key).auth.whoami()).key.revokedAt).toBeNull();

    // again: nothing more to revoke, the first time kept
    clock.advance(1000);
    const again = await signupClient.keys.revoke(child.id);
    expect(again).toMatchObject({ revokedCount: 0, revokedKeyIds: [], key: { revokedAt: res.key.revokedAt } });
  });

  it('revoking a key with the key itself revokes it and its children', async () => {
    const { loginClient, login } = await loggedIn();
    const { apiKey: child } = await loginClient.keys.create({ name: 'child' });
    const res = await loginClient.keys.revoke(login.id);
    expect(res).toMatchObject({ revokedCount: 2, key: { id: login.id } });
    expect(await refusal(t.client(child.key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('revoking while keys are being made from the tree', () => {
  it('leaves no active key below a revoked one, whichever commits first', async () => {
    const { signupClient } = await loggedIn();
    for (let round = 0; round < 8; round++) {
      const { apiKey: root } = await signupClient.keys.create({ name: `root ${round}` });
      const { apiKey: child } = await t.client(root.key).keys.create({ name: 'child' });
      const childClient = t.client(child.key);
      const mints = Array.from({ length: 3 }, () => childClient.keys.create({ name: 'racer' }).then((r) => r.apiKey.id, () => undefined));
      await Promise.all([signupClient.keys.revoke(root.id), ...mints]);
      const keys = (await signupClient.keys.list()).keys;
      const below = new Set([root.id]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const k of keys) if (k.parentKeyId && below.has(k.parentKeyId) && !below.has(k.id)) (below.add(k.id), (grew = true));
      }
      expect(keys.filter((k) => below.has(k.id) && k.revokedAt === null)).toEqual([]);
    }
  });
});

describe('a password reset', () => {
  it("revokes the account's login keys and the keys made from them; the signup key and its keys stay", async () => {
    const { email, login, loginClient, signupClient, apiKey: signupKey } = await loggedIn();
    const { apiKey: fromLogin } = await loginClient.keys.create({ name: 'from login' });
    const { apiKey: fromSignup } = await signupClient.keys.create({ name: 'from signup' });
    const second = (await t.client().accounts.login({ email, password: 'correct horse battery' })).apiKey;

    await t.client().accounts.forgotPassword({ email });
    const { token } = lastMail(t.dataDir, { to: email, kind: 'password_reset' });
    await t.client().accounts.resetPassword({ token, password: 'a brand new secret' });

    for (const key of [login.key, fromLogin.key, second.key]) {
      expect(await refusal(t.client(key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', message: 'API key revoked' });
    }
    for (const key of [signupKey.key, fromSignup.key]) expect((await t.client(key).auth.whoami()).key.revokedAt).toBeNull();
    const revoked = (await signupClient.keys.list()).keys.filter((k) => k.revokedAt !== null).map((k) => k.id);
    expect(revoked.sort()).toEqual([login.id, fromLogin.id, second.id].sort());
    // a login with the new password works and is a key of its own
    const fresh = await t.client().accounts.login({ email, password: 'a brand new secret' });
    expect((await t.client(fresh.apiKey.key).auth.whoami()).key.id).toBe(fresh.apiKey.id);
  });
});

describe('the cap on active keys per tenant (accountLimits.keysPerTenant, 6 here)', () => {
  it('refuses a key past the cap with 409 CONFLICT key_limit_reached; revoked and expired keys free places; login still works', async () => {
    const { email, password, signupClient } = await loggedIn(); // the signup key and a login key: 2 active
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await signupClient.keys.create({ name: `k${i}` })).apiKey.id);
    const short = (await signupClient.keys.create({ name: 'short', expiresInSeconds: 60 })).apiKey; // 6 active
    const before = (await signupClient.keys.list()).keys.length;

    const full = await refusal(signupClient.keys.create({ name: 'one too many' }));
    expect(full).toMatchObject({ code: 'CONFLICT', status: 409, details: { reason: 'key_limit_reached', limit: 6, active: 6 } });
    expect(full.message).toContain('revoke');
    expect((await signupClient.keys.list()).keys).toHaveLength(before);

    await signupClient.keys.revoke(made[0]!);
    const k = (await signupClient.keys.create({ name: 'after a revoke' })).apiKey;
    expect(k.name).toBe('after a revoke');
    expect(await refusal(signupClient.keys.create({}))).toMatchObject({ code: 'CONFLICT' });

    clock.advance(60_000); // `short` expires
    expect(await refusal(t.client(short.key).auth.whoami())).toMatchObject({ message: 'API key expired' });
    expect((await signupClient.keys.create({ name: 'after an expiry' })).apiKey.name).toBe('after an expiry');

    // a person can always log in (to revoke keys): login is not capped
    const login = await t.client().accounts.login({ email, password });
    expect((await t.client(login.apiKey.key).auth.whoami()).key.id).toBe(login.apiKey.id);
  });

  it('counts per tenant: another tenant at its cap does not refuse this one', async () => {
    const { signupClient } = await loggedIn();
    expect((await signupClient.keys.create({})).apiKey.id).toMatch(/^key_/);
  });
});
