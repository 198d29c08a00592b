import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_SCOPES, DEFAULT_SCOPES } from '../../src/domain/tenancy/scopes.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { refusal } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/whoami, /v1/auth/self and /v1/auth/scopes', () => {
  it('answer any valid key, even one without keys:* scopes', async () => {
    const { apiKey } = await t.workspace.keys.create({ name: 'receipts only', scopes: ['receipts:read'] });
    const c = t.client(apiKey.key);
    const me = await c.auth.whoami();
    expect(me.tenant).toMatchObject({ id: t.creds.workspace.id, kind: 'workspace', status: 'active' });
    expect(me.key).toMatchObject({ id: apiKey.id, name: 'receipts only', scopes: ['receipts:read'], revokedAt: null });
    // whoami was the key's first use, recorded beside the request (lastUsedAt): later answers show it
    expect(await c.auth.self()).toEqual({ key: { ...me.key, lastUsedAt: expect.any(String) }, tenant: { id: t.creds.workspace.id, kind: 'workspace' } });
    expect(await c.auth.scopes()).toEqual({ scopes: ['receipts:read'], available: [...DEFAULT_SCOPES.workspace] });
  });

  it('show a provider its settlement wallet', async () => {
    const me = await t.provider.auth.whoami();
    expect(me.tenant).toMatchObject({ id: t.creds.provider.id, kind: 'provider', verified: true, walletId: t.creds.provider.walletId });
  });

  it('answer 401 UNAUTHORIZED to a missing or mistyped key', async () => {
    expect(await refusal(t.client().auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    const typo = t.creds.workspace.apiKey.slice(0, -1) + (t.creds.workspace.apiKey.endsWith('a') ? 'b' : 'a');
    expect(await refusal(t.client(typo).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});

describe('POST /v1/auth/keys', () => {
  it('creates a key with a subset of the calling key\'s scopes, shown once', async () => {
    const { apiKey } = await t.workspace.keys.create({ name: 'reader', scopes: ['wallets:read'] });
    expect(apiKey).toMatchObject({ name: 'reader', scopes: ['wallets:read'], expiresAt: null, revokedAt: null });
    expect(apiKey.key.startsWith(apiKey.prefix)).toBe(true);
    const reader = t.client(apiKey.key);
    expect(Array.isArray(await reader.wallets.list())).toBe(true);
    const e = await refusal(reader.wallets.create({ ownerType: 'workspace', ownerId: 'ops' }));
    expect(e).toMatchObject({ code: 'FORBIDDEN', status: 403, details: { scope: 'wallets:write' } });
  });

  it('copies the calling key\'s scopes when given no body', async () => {
    const { apiKey: narrow } = await t.workspace.keys.create({ scopes: ['keys:write', 'wallets:read'] });
    const res = await t.client(narrow.key).http.request<{ apiKey: { scopes: string[] } }>('POST', '/v1/auth/keys');
    expect(res.apiKey.scopes).toEqual(['keys:write', 'wallets:read']);
  });

  it('refuses a scope the calling key lacks with 403 FORBIDDEN naming it, and adds no key', async () => {
    const { apiKey: narrow } = await t.workspace.keys.create({ scopes: ['keys:write', 'keys:read', 'wallets:read'] });
    const c = t.client(narrow.key);
    const before = (await c.keys.list()).keys.length;
    const e = await refusal(c.keys.create({ scopes: ['wallets:read', 'wallets:write'] }));
    expect(e).toMatchObject({ code: 'FORBIDDEN', status: 403, details: { scope: 'wallets:write' } });
    expect(e.message).toContain('wallets:write');
    expect((await c.keys.list()).keys.length).toBe(before);
  });

  it('refuses a scope outside the tenant kind and an unknown scope', async () => {
    expect(await refusal(t.provider.keys.create({ scopes: ['approvals:write'] }))).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'approvals:write' } });
    expect(await refusal(t.workspace.keys.create({ scopes: ['wallets:admin'] }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'scopes' } });
    expect(await refusal(t.workspace.keys.create({ scopes: [] }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'scopes' } });
  });

  it('gives the agent preset AGENT_SCOPES, which lack approvals:write', async () => {
    const { apiKey } = await t.workspace.keys.create({ preset: 'agent' });
    expect(apiKey.scopes).toEqual([...AGENT_SCOPES]);
    expect(apiKey.scopes).not.toContain('approvals:write');
    expect(apiKey.name).toBe('agent');
    const { scopes } = await t.client(apiKey.key).auth.scopes();
    expect(scopes).not.toContain('approvals:write');
    expect(await refusal(t.client(apiKey.key).keys.create({}))).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'keys:write' } });
  });

  it('refuses the agent preset for a provider, and a preset together with scopes', async () => {
    expect(await refusal(t.provider.keys.create({ preset: 'agent' }))).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'preset' } });
    expect(await refusal(t.workspace.keys.create({ preset: 'agent', scopes: ['wallets:read'] }))).toMatchObject({ details: { field: 'preset' } });
    expect(await refusal(t.workspace.http.request('POST', '/v1/auth/keys', { body: { preset: 'admin' } }))).toMatchObject({ details: { field: 'preset' } });
  });

  it('sets an expiry from expiresAt or expiresInSeconds, and refuses one in the past naming the field', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    expect((await t.workspace.keys.create({ expiresAt: at })).apiKey.expiresAt).toBe(at);
    const inAnHour = (await t.workspace.keys.create({ expiresInSeconds: 3600 })).apiKey;
    expect(Math.abs(Date.parse(inAnHour.expiresAt!) - Date.parse(inAnHour.createdAt) - 3_600_000)).toBeLessThan(50);

    const past = await refusal(t.workspace.keys.create({ expiresAt: '2020-01-01T00:00:00Z' }));
    expect(past).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'expiresAt' } });
    expect(await refusal(t.workspace.keys.create({ expiresAt: 'tomorrow' }))).toMatchObject({ details: { field: 'expiresAt' } });
    // a date that does not exist is refused, not rolled over to a later one (Feb 30 -> Mar 2)
    for (const impossible of ['2030-02-30T00:00:00Z', '2030-04-31T00:00:00Z', '2030-01-01T24:00:00Z', '2030-13-01T00:00:00Z', '2030-01-01T00:00:00+24:00']) {
      expect(await refusal(t.workspace.keys.create({ expiresAt: impossible })), impossible).toMatchObject({ details: { field: 'expiresAt' } });
    }
    expect((await t.workspace.keys.create({ expiresAt: '2032-02-29T12:00:00+02:00' })).apiKey.expiresAt).toBe('2032-02-29T10:00:00.000Z');
    expect(await refusal(t.workspace.keys.create({ expiresInSeconds: 0 }))).toMatchObject({ details: { field: 'expiresInSeconds' } });
    expect(await refusal(t.workspace.keys.create({ expiresAt: at, expiresInSeconds: 60 }))).toMatchObject({ details: { field: 'expiresAt' } });
  });

  it('refuses unknown fields, so a misspelt expiry never makes a key that lives for ever', async () => {
    const e = await refusal(t.workspace.http.request('POST', '/v1/auth/keys', { body: { expires_at: '2030-01-01T00:00:00Z' } }));
    expect(e).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(e.message).toContain('expires_at');
  });
});

describe('GET /v1/auth/keys', () => {
  it('lists only the caller\'s tenant\'s keys, without key material', async () => {
    const other = await t.newWorkspace('Neighbour');
    const { apiKey: mine } = await t.workspace.keys.create({ name: 'listed' });
    const { keys } = await t.workspace.keys.list();
    expect(keys.map((k) => k.id)).toContain(mine.id);
    const { keys: theirs } = await other.client.keys.list();
    expect(theirs).toHaveLength(1);
    expect(keys.map((k) => k.id)).not.toContain(theirs[0]!.id);
    const text = JSON.stringify(keys);
    expect(text).not.toContain(mine.key);
    expect(text).not.toContain(t.creds.workspace.apiKey);
    for (const k of keys) expect(Object.keys(k).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'parentKeyId', 'prefix', 'revokedAt', 'scopes']);
  });

  it('needs keys:read (403 naming it)', async () => {
    const { apiKey } = await t.workspace.keys.create({ scopes: ['wallets:read'] });
    expect(await refusal(t.client(apiKey.key).keys.list())).toMatchObject({ code: 'FORBIDDEN', details: { scope: 'keys:read' } });
  });
});

describe('POST /v1/auth/keys/:id/revoke', () => {
  it('revokes a key, which then gets 401 "API key revoked"', async () => {
    const { apiKey } = await t.workspace.keys.create({ name: 'doomed' });
    expect((await t.client(apiKey.key).auth.whoami()).key.id).toBe(apiKey.id);
    const { key } = await t.workspace.keys.revoke(apiKey.id);
    expect(key.id).toBe(apiKey.id);
    expect(key.revokedAt).not.toBeNull();
    expect(await refusal(t.client(apiKey.key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', status: 401, message: 'API key revoked' });
    expect((await t.workspace.keys.revoke(apiKey.id)).key.revokedAt).toBe(key.revokedAt);
  });

  it('answers 404 NOT_FOUND for another tenant\'s key and changes nothing', async () => {
    const other = await t.newWorkspace('Victim');
    const { keys } = await other.client.keys.list();
    const e = await refusal(t.workspace.keys.revoke(keys[0]!.id));
    expect(e).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((await other.client.auth.whoami()).key.revokedAt).toBeNull();
    expect(await refusal(t.workspace.keys.revoke('key_doesnotexist'))).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('key expiry', () => {
  let m: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => {
    m = await startTestGateway({ clock });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('answers 401 "API key expired" from the expiry time on', async () => {
    const { apiKey } = await m.workspace.keys.create({ expiresInSeconds: 60 });
    clock.advance(59_999);
    expect((await m.client(apiKey.key).auth.whoami()).key.id).toBe(apiKey.id);
    clock.advance(1);
    expect(await refusal(m.client(apiKey.key).auth.whoami())).toMatchObject({ code: 'UNAUTHORIZED', status: 401, message: 'API key expired' });
    expect(await refusal(m.client(apiKey.key).wallets.list())).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
