/**
 * An API key's `lastUsedAt`: every authenticated request uses its key, and the gateway
 * records that at most once a minute per key, in a small write of its own that the request
 * neither waits for nor fails with (KeyUseRecorder, src/domain/tenancy/api-keys.ts). Within the
 * minute a request pays only a map lookup. The column is bookkeeping: apart from it, a
 * read-only request still changes nothing in the database.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { iso, ManualClock } from '../../src/core/clock.js';
import { issueKey, KEY_USE_INTERVAL_MS, KeyUseRecorder } from '../../src/domain/tenancy/api-keys.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { SequentialIds } from '../../src/core/ids.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, sqliteOf, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call, changedTables, mintKey, snapshotDb } from '../helpers/matrix.js';

describe('lastUsedAt through the gateway', () => {
  const clock = new ManualClock();
  let t: TestGateway;
  let ws: { id: string; apiKey: string; keyId: string };
  /** a second key of the same workspace that only reads the key list */
  let lister: TestGateway['workspace'];

  beforeAll(async () => {
    t = await startTestGateway({ clock });
    const w = await t.newWorkspace('Key user');
    ws = { ...w, keyId: (await t.client(w.apiKey).auth.self()).key.id };
    lister = t.client(await mintKey(t, { id: w.id, kind: 'workspace' }, ['keys:read']));
  });
  afterAll(() => t?.close());

  const lastUsedOf = async (keyId: string) => (await lister.keys.list()).keys.find((k) => k.id === keyId)!.lastUsedAt;

  it('is null for a key never used, and the time of its first request once used', async () => {
    const fresh = await t.gw.store.tx((r) => issueKey(r, t.gw.services.ctx, { id: ws.id, kind: 'workspace' }, { name: 'fresh' }));
    expect(await lastUsedOf(fresh.record.id)).toBeNull();

    clock.advance(5_000);
    const usedAt = clock.now();
    await t.client(fresh.key).wallets.list();
    await vi.waitFor(async () => expect(await lastUsedOf(fresh.record.id)).toBe(iso(usedAt)));
  });

  it('is written at most once a minute per key: later requests within the minute leave it, the first one after moves it', async () => {
    const me = t.client(ws.apiKey);
    clock.advance(2 * KEY_USE_INTERVAL_MS);
    const first = clock.now();
    await me.wallets.list();
    await vi.waitFor(async () => expect(await lastUsedOf(ws.keyId)).toBe(iso(first)));

    clock.advance(KEY_USE_INTERVAL_MS - 1);
    await me.wallets.list();
    await me.auth.whoami();
    expect(await lastUsedOf(ws.keyId)).toBe(iso(first));

    clock.advance(1);
    const next = clock.now();
    await me.wallets.list();
    await vi.waitFor(async () => expect(await lastUsedOf(ws.keyId)).toBe(iso(next)));
  });

  it('counts a request the key is authenticated for but lacks the scope of (403)', async () => {
    const narrow = await t.gw.store.tx((r) => issueKey(r, t.gw.services.ctx, { id: ws.id, kind: 'workspace' }, { name: 'narrow', scopes: ['receipts:read'] }));
    clock.advance(1_000);
    const at = clock.now();
    const res = await call(t, 'GET', '/v1/wallets', { apiKey: narrow.key });
    expect(res.status).toBe(403);
    await vi.waitFor(async () => expect(await lastUsedOf(narrow.record.id)).toBe(iso(at)));
  });

  it('is the only thing a read-only request changes in the database (snapshotDb leaves that column out)', async () => {
    clock.advance(2 * KEY_USE_INTERVAL_MS);
    const rawLastUsed = () => (sqliteOf(t.gw).prepare('SELECT last_used_at AS v FROM api_keys WHERE id = ?').get(ws.keyId) as { v: number | bigint | null }).v;
    const before = snapshotDb(t.dataDir);
    const rawBefore = rawLastUsed();
    const res = await call(t, 'GET', '/v1/wallets', { apiKey: ws.apiKey });
    expect(res.status).toBe(200);
    await vi.waitFor(() => expect(rawLastUsed()).not.toBe(rawBefore));
    expect(Number(rawLastUsed())).toBe(clock.now());
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });

  it('is not written for a refused key (unknown or revoked)', async () => {
    const revoked = await t.gw.store.tx((r) => issueKey(r, t.gw.services.ctx, { id: ws.id, kind: 'workspace' }, { name: 'revoked' }));
    await t.client(ws.apiKey).keys.revoke(revoked.record.id);
    clock.advance(2 * KEY_USE_INTERVAL_MS);
    expect((await call(t, 'GET', '/v1/wallets', { apiKey: revoked.key })).status).toBe(401);
    expect((await call(t, 'GET', '/v1/wallets', { apiKey: 'ap_w_' + '0'.repeat(32) })).status).toBe(401);
    expect(await lastUsedOf(revoked.record.id)).toBeNull();
  });
});

describe('KeyUseRecorder', () => {
  async function setup() {
    const clock = new ManualClock();
    const store = await openTestStore();
    const ctx = { store, clock, ids: new SequentialIds() };
    const keyIds = await store.tx(async (r) => {
      const tenant = await createTenant(r, ctx, { kind: 'workspace', name: 'W' });
      return [(await issueKey(r, ctx, tenant)).record.id, (await issueKey(r, ctx, tenant)).record.id];
    });
    const lastUsed = (id: string) => store.read(async (r) => (await r.apiKeys.get(id))!.lastUsedAt);
    return { clock, store, keyIds, lastUsed };
  }

  it('starts one write per key per interval however many requests use it, and returns without waiting for it', async () => {
    const { clock, store, keyIds, lastUsed } = await setup();
    const [a, b] = keyIds as [string, string];
    const errors: unknown[] = [];
    const recorder = new KeyUseRecorder({ store, clock }, (err) => errors.push(err));
    const tx = vi.spyOn(store, 'tx');
    try {
      const t0 = clock.now();
      for (let i = 0; i < 1000; i++) expect(recorder.used(a)).toBeUndefined();
      recorder.used(b);
      expect(await lastUsed(a)).toBeNull(); // nothing written yet: used() did not wait for its write
      await vi.waitFor(async () => expect(tx).toHaveBeenCalledTimes(2));
      await vi.waitFor(async () => expect([await lastUsed(a), await lastUsed(b)]).toEqual([t0, t0]));

      clock.advance(KEY_USE_INTERVAL_MS - 1);
      for (let i = 0; i < 1000; i++) recorder.used(a);
      await store.read(async () => undefined);
      expect(tx).toHaveBeenCalledTimes(2);

      clock.advance(1);
      recorder.used(a);
      await vi.waitFor(async () => expect(await lastUsed(a)).toBe(t0 + KEY_USE_INTERVAL_MS));
      expect(tx).toHaveBeenCalledTimes(3);
      expect(errors).toEqual([]);
    } finally {
      tx.mockRestore();
      await store.close();
    }
  });

  it('remembers only the keys used within the last interval, not every key ever used', async () => {
    const { clock, store } = await setup();
    const recorder = new KeyUseRecorder({ store, clock }, () => {});
    const remembered = () => (recorder as unknown as { lastWrite: Map<string, number> }).lastWrite.size;
    try {
      for (let i = 0; i < 500; i++) recorder.used(`key_${i}`);
      expect(remembered()).toBe(500);
      clock.advance(KEY_USE_INTERVAL_MS);
      recorder.used('key_new');
      expect(remembered()).toBe(1);
      await store.read(async () => undefined);
    } finally {
      await vi.waitFor(() => undefined);
      await store.close();
    }
  });

  it('reports a failed write to onError and never throws; the key is tried again an interval later, not on every use', async () => {
    const { clock, store, keyIds } = await setup();
    const [a] = keyIds as [string];
    const errors: { err: unknown; keyId: string }[] = [];
    const recorder = new KeyUseRecorder({ store, clock }, (err, keyId) => errors.push({ err, keyId }));
    await store.close(); // every transaction now fails
    expect(() => recorder.used(a)).not.toThrow();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toMatchObject({ keyId: a, err: expect.any(Error) });

    for (let i = 0; i < 10; i++) recorder.used(a);
    clock.advance(KEY_USE_INTERVAL_MS);
    recorder.used(a);
    await vi.waitFor(() => expect(errors).toHaveLength(2));
  });

  it('survives a store that throws instead of rejecting', async () => {
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const throwing = { tx: () => { throw new Error('store is broken'); } } as unknown as Store;
    const recorder = new KeyUseRecorder({ store: throwing, clock }, (err) => errors.push(err));
    expect(() => recorder.used('key_x')).not.toThrow();
    await vi.waitFor(() => expect(errors).toEqual([new Error('store is broken')]));
  });
});
