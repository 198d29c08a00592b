/**
 * Every method of the repositories written once (src/store/sql), on every backend: each family's
 * methods called with rows the domain writes, and their answers checked. The last case checks that
 * this file called every method of every one of those classes on this backend, so a method added
 * without a case here fails it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { AlreadyResolved, MovementRefused, UniqueViolation } from '../../src/store/errors.js';
import * as tenancy from '../../src/store/sql/tenancy.js';
import * as platform from '../../src/store/sql/platform.js';
import * as market from '../../src/store/sql/market.js';
import * as policies from '../../src/store/sql/policies.js';
import * as rails from '../../src/store/sql/rails.js';
import * as webhooks from '../../src/store/sql/webhooks.js';
import * as alerts from '../../src/store/sql/alerts.js';
import * as x402 from '../../src/store/sql/x402.js';
import * as payments from '../../src/store/sql/payments.js';
import * as discovery from '../../src/store/sql/discovery.js';
import * as wallets from '../../src/store/sql/wallets.js';
import { entryHash } from '../../src/store/ledger-chain.js';
import * as sessions from '../../src/store/sql/sessions.js';
import type { Capability } from '../../src/store/repos/market.js';
import type { RailTransaction } from '../../src/store/repos/rails.js';
import type { WebhookDelivery } from '../../src/store/repos/webhooks.js';
import { newWalletRow } from '../../src/domain/wallets/wallets.js';
import { storeBackends } from '../helpers/store-backends.js';

/** `Class.method` called on the backend whose cases run now (backends run one after another) */
const called = new Map<string, Set<string>>();
let backend = '';
const classes = [tenancy, platform, market, policies, rails, webhooks, alerts, x402, payments, discovery, wallets, sessions]
  .flatMap((m) => Object.values(m))
  .filter((v): v is new (...a: never[]) => object => typeof v === 'function' && /^class\s/.test(Function.prototype.toString.call(v)));
for (const cls of classes) {
  const proto = cls.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const method = proto[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      called.get(backend)?.add(`${cls.name}.${name}`);
      return (method as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
}
/** public methods: not the private helpers (by convention here, only `revokeFrom`, `spent` and `hold`) */
const everyMethod = () => classes.flatMap((cls) => Object.getOwnPropertyNames(cls.prototype)
  .filter((n) => n !== 'constructor' && !['revokeFrom', 'spent', 'hold'].includes(n))
  .map((n) => `${cls.name}.${n}`)).sort();

const tenant = (id: string, kind: 'workspace' | 'provider', createdAt = 1) =>
  ({ id, kind, name: id, email: null, website: null, status: 'active', verified: true, settlementWalletId: null, createdAt, updatedAt: createdAt });
const capability = (id: string, providerId: string, over: Partial<Capability> = {}): Capability => ({
  id, providerId, name: id, description: `about ${id}`, protocol: 'rest', priceMinor: 10n, currency: 'USD', category: 'data', tags: ['t'],
  schema: null, latencyP50Ms: 20, toolName: null, metering: null, status: 'active', currentVersionId: `${id}_v1`, createdAt: 1, updatedAt: 1, deprecatedAt: null, ...over,
});

describe.each(storeBackends('repos'))('Repositories written once, on $name', (b) => {
  let store: Store;
  beforeAll(async () => {
    await b.setup();
    store = await b.open();
    backend = b.name;
    called.set(b.name, new Set());
  });
  afterAll(async () => {
    await store.close();
    await b.teardown();
  });

  it('tenancy: tenants, signups, accounts, password resets, API keys and their trees, auth throttles', async () => {
    await store.tx(async (r) => {
      await r.tenants.insert(tenant('ten_b', 'provider', 2));
      await r.tenants.insert(tenant('ten_a', 'provider', 2));
      await r.tenants.insert(tenant('ws_1', 'workspace', 1));
      await r.tenants.update('ten_a', { name: 'renamed', verified: false, updatedAt: 3 });
    });
    expect(await store.read((r) => r.tenants.get('ten_a'))).toMatchObject({ name: 'renamed', verified: false, updatedAt: 3, email: null });
    expect((await store.read((r) => r.tenants.listByKind('provider'))).map((t) => t.id)).toEqual(['ten_a', 'ten_b']);

    const signup = { id: 'sgn_1', kind: 'workspace' as const, name: 'n', email: 'a@x', website: null, passwordHash: 'h', status: 'pending' as const, tokenHash: 'th', tokenExpiresAt: 9, resendCount: 0, tenantId: null, createdAt: 1, verifiedAt: null };
    await store.tx(async (r) => {
      await r.signups.insert(signup);
      expect(await r.signups.get('sgn_1')).toEqual(signup);
      await r.signups.update('sgn_1', { status: 'verified', verifiedAt: 5, tenantId: 'ws_1' });
    });
    expect(await store.read((r) => r.signups.get('sgn_1'))).toMatchObject({ status: 'verified', verifiedAt: 5, tenantId: 'ws_1' });

    await store.tx(async (r) => {
      await r.accounts.insert({ id: 'acc_2', tenantId: 'ws_1', email: 'b@x', passwordHash: 'h', createdAt: 2, updatedAt: 2 });
      await r.accounts.insert({ id: 'acc_1', tenantId: 'ws_1', email: 'a@x', passwordHash: 'h', createdAt: 2, updatedAt: 2 });
      await r.accounts.update('acc_1', { passwordHash: 'h2', updatedAt: 4 });
      expect(await r.accounts.get('acc_1')).toMatchObject({ passwordHash: 'h2' });
    });
    expect(await store.read((r) => r.accounts.byEmail('b@x'))).toMatchObject({ id: 'acc_2' });
    expect(await store.read((r) => r.accounts.byEmail('none@x'))).toBeUndefined();
    expect((await store.read((r) => r.accounts.listByTenant('ws_1'))).map((a) => a.id)).toEqual(['acc_1', 'acc_2']);
    await expect(store.tx((r) => r.accounts.insert({ id: 'acc_3', tenantId: 'ws_1', email: 'a@x', passwordHash: 'h', createdAt: 2, updatedAt: 2 }))).rejects.toBeInstanceOf(UniqueViolation);

    await store.tx(async (r) => {
      for (const id of ['pr_1', 'pr_2', 'pr_3']) await r.passwordResets.insert({ id, accountId: 'acc_1', tokenHash: `t_${id}`, expiresAt: 100, usedAt: null, createdAt: 1 });
      await r.passwordResets.markUsed('pr_1', 7);
      await r.passwordResets.retireOpenForAccount('acc_1', 8);
    });
    expect(await store.read(async (r) => Promise.all(['pr_1', 'pr_2', 'pr_3'].map(async (id) => (await r.passwordResets.byTokenHash(`t_${id}`))!.usedAt)))).toEqual([7, 8, 8]);

    const key = (id: string, parentKeyId: string | null, over: Record<string, unknown> = {}) =>
      ({ id, tenantId: 'ws_1', name: id, keyHash: `h_${id}`, prefix: 'p', scopes: ['a', 'b'], expiresAt: null, revokedAt: null, lastUsedAt: null, createdAt: 1, parentKeyId, loginAccountId: null, ...over });
    await store.tx(async (r) => {
      await r.apiKeys.insert(key('key_root', null));
      await r.apiKeys.insert(key('key_child', 'key_root'));
      await r.apiKeys.insert(key('key_grand', 'key_child'));
      await r.apiKeys.insert(key('key_other', null, { expiresAt: 50 }));
      await r.apiKeys.insert(key('key_login', null, { loginAccountId: 'acc_1' }));
      await r.apiKeys.insert(key('key_login_child', 'key_login'));
      await r.apiKeys.update('key_other', { name: 'other', lastUsedAt: 9 });
    });
    expect(await store.read((r) => r.apiKeys.get('key_other'))).toMatchObject({ name: 'other', lastUsedAt: 9, scopes: ['a', 'b'] });
    expect(await store.read((r) => r.apiKeys.byHash('h_key_child'))).toMatchObject({ id: 'key_child', parentKeyId: 'key_root' });
    expect((await store.read((r) => r.apiKeys.listByTenant('ws_1'))).map((k) => k.id)).toEqual(['key_child', 'key_grand', 'key_login', 'key_login_child', 'key_other', 'key_root']);
    expect(await store.tx((r) => r.apiKeys.countActive('ws_1', 10))).toBe(6);
    expect(await store.read((r) => r.apiKeys.countActive('ws_1', 60))).toBe(5);
    expect((await store.tx((r) => r.apiKeys.revokeTree('key_child', 'ws_1', 20))).sort()).toEqual(['key_child', 'key_grand']);
    expect(await store.tx((r) => r.apiKeys.revokeTree('key_root', 'other_tenant', 21))).toEqual([]);
    // keys already revoked keep their time
    expect(await store.tx((r) => r.apiKeys.revokeTree('key_root', 'ws_1', 22))).toEqual(['key_root']);
    expect((await store.read((r) => r.apiKeys.get('key_grand')))!.revokedAt).toBe(20);
    expect((await store.tx((r) => r.apiKeys.revokeLoginKeys('acc_1', 23))).sort()).toEqual(['key_login', 'key_login_child']);

    const fresh = { key: 'ignored', count: 0, windowStartedAt: 1, lastAt: 1, blockedUntil: null, expiresAt: 10 };
    expect(await store.tx((r) => r.authThrottles.take('ip:1', fresh))).toEqual({ ...fresh, key: 'ip:1' });
    await store.tx((r) => r.authThrottles.save({ ...fresh, key: 'ip:1', count: 3, blockedUntil: 5 }));
    expect(await store.tx((r) => r.authThrottles.take('ip:1', fresh))).toMatchObject({ count: 3, blockedUntil: 5 });
    await store.tx(async (r) => {
      await r.authThrottles.take('ip:2', { ...fresh, expiresAt: 20 });
      await r.authThrottles.take('ip:3', { ...fresh, expiresAt: 30 });
    });
    expect(await store.tx((r) => r.authThrottles.prune(25, 10))).toBe(2);
    await store.tx((r) => r.authThrottles.delete('ip:3'));
    expect(await store.tx((r) => r.authThrottles.prune(1000, 10))).toBe(0);
    expect(await store.tx((r) => r.authThrottles.take('ip:3', fresh))).toMatchObject({ count: 0 });
  });

  it('signing keys: public records only, one current, the private half replaced only over what was expected', async () => {
    await store.tx(async (r) => {
      await r.signingKeys.lockCurrent();
      await r.signingKeys.insert({ id: 'sk_1', publicKeyPem: 'pem1', status: 'current', createdAt: 1, retiredAt: null, privateKey: 'sealed1' });
    });
    expect(await store.read((r) => r.signingKeys.get('sk_1'))).toEqual({ id: 'sk_1', publicKeyPem: 'pem1', status: 'current', createdAt: 1, retiredAt: null });
    await store.tx(async (r) => {
      await r.signingKeys.lockCurrent();
      await r.signingKeys.retire('sk_1', 5);
      await r.signingKeys.insert({ id: 'sk_2', publicKeyPem: 'pem2', status: 'current', createdAt: 5, retiredAt: null });
    });
    expect(await store.read((r) => r.signingKeys.current())).toEqual({ id: 'sk_2', publicKeyPem: 'pem2', status: 'current', createdAt: 5, retiredAt: null });
    expect((await store.read((r) => r.signingKeys.all())).map((k) => [k.id, k.status, k.retiredAt])).toEqual([['sk_1', 'retired', 5], ['sk_2', 'current', null]]);
    expect(await store.read((r) => r.signingKeys.get('sk_none'))).toBeUndefined();
    expect(await store.read((r) => r.signingKeys.privateKey('sk_2'))).toBeNull();
    expect(await store.read((r) => r.signingKeys.privateKey('sk_none'))).toBeUndefined();
    expect(await store.tx((r) => r.signingKeys.replacePrivateKey('sk_2', 'sealed2', 'wrong'))).toBe(false);
    expect(await store.tx((r) => r.signingKeys.replacePrivateKey('sk_2', 'sealed2', null))).toBe(true);
    expect(await store.tx((r) => r.signingKeys.replacePrivateKey('sk_1', 'resealed', 'sealed1'))).toBe(true);
    expect(await store.read((r) => Promise.all([r.signingKeys.privateKey('sk_1'), r.signingKeys.privateKey('sk_2')]))).toEqual(['resealed', 'sealed2']);
  });

  it('market: listings, what discovery may show, versions, full text, verification requests, ratings', async () => {
    await store.tx(async (r) => {
      await r.tenants.insert(tenant('prv_m', 'provider'));
      await r.tenants.insert({ ...tenant('prv_unverified', 'provider'), verified: false });
      await r.capabilities.insert(capability('cap_b', 'prv_m', { priceMinor: 9_007_199_254_740_993n, latencyP50Ms: 12.5, category: 'ai' }));
      await r.capabilities.insert(capability('cap_a', 'prv_m', { protocol: 'mcp', toolName: 'tool', latencyP50Ms: null, schema: { type: 'object' } }));
      await r.capabilities.insert(capability('cap_u', 'prv_unverified'));
      await r.capabilities.insert(capability('cap_old', 'prv_m', { createdAt: 0 }));
      await r.capabilities.update('cap_old', { status: 'deprecated', deprecatedAt: 3, updatedAt: 3 });
    });
    expect(await store.read((r) => r.capabilities.get('cap_b'))).toMatchObject({ priceMinor: 9_007_199_254_740_993n, latencyP50Ms: 12.5, tags: ['t'], schema: null });
    expect(await store.read((r) => r.capabilities.get('cap_a'))).toMatchObject({ latencyP50Ms: null, schema: { type: 'object' }, toolName: 'tool' });
    expect((await store.read((r) => r.capabilities.listByProvider('prv_m'))).map((c) => [c.id, c.status])).toEqual([['cap_old', 'deprecated'], ['cap_a', 'active'], ['cap_b', 'active']]);
    const ids = (f: Parameters<Store['read']> extends never ? never : Record<string, unknown>) => store.read(async (r) => (await r.capabilities.listDiscoverable(f)).map((c) => c.id));
    expect(await ids({})).toEqual(['cap_a', 'cap_b']);
    expect(await ids({ ids: ['cap_b', 'cap_u', 'cap_old', 'cap_none'] })).toEqual(['cap_b']);
    expect(await ids({ ids: [] })).toEqual([]);
    expect(await ids({ category: 'ai' })).toEqual(['cap_b']);
    expect(await ids({ protocol: 'mcp' })).toEqual(['cap_a']);
    expect(await ids({ maxPriceMinor: 10n })).toEqual(['cap_a']);
    // an unknown latency is under no ceiling
    expect(await ids({ maxLatencyMs: 13 })).toEqual(['cap_b']);

    const version = (id: string, capabilityId: string, createdAt: number) =>
      ({ id, capabilityId, version: '1', endpoint: null, address: { kind: 'url' as const, url: 'https://x' }, schema: null, hash: 'h', createdAt });
    await store.tx(async (r) => {
      await r.capabilityVersions.insert(version('v_2', 'cap_a', 2));
      await r.capabilityVersions.insert(version('v_1', 'cap_a', 1));
      await r.capabilityVersions.insert(version('v_3', 'cap_b', 1));
    });
    expect(await store.read((r) => r.capabilityVersions.get('v_1'))).toEqual(version('v_1', 'cap_a', 1));
    expect((await store.read((r) => r.capabilityVersions.getMany(['v_3', 'v_1', 'v_none']))).map((v) => v.id).sort()).toEqual(['v_1', 'v_3']);
    expect(await store.read((r) => r.capabilityVersions.getMany([]))).toEqual([]);
    expect((await store.read((r) => r.capabilityVersions.listByCapability('cap_a'))).map((v) => v.id)).toEqual(['v_1', 'v_2']);

    await store.tx(async (r) => {
      await r.capabilitySearch.upsert({ capabilityId: 'cap_a', name: 'Old name', description: 'nothing', tags: [], category: 'data' });
      await r.capabilitySearch.upsert({ capabilityId: 'cap_a', name: 'Geocoder', description: 'addresses to coordinates', tags: ['maps'], category: 'data' });
      await r.capabilitySearch.upsert({ capabilityId: 'cap_b', name: 'Maps tiles', description: 'tiles', tags: ['maps'], category: 'ai' });
      await r.capabilitySearch.upsert({ capabilityId: 'cap_u', name: 'Geocoder too', description: 'unverified seller', tags: [], category: 'data' });
    });
    expect(await store.read((r) => r.capabilitySearch.match('old', 10))).toEqual([]);
    expect((await store.read((r) => r.capabilitySearch.match('geocoder', 10))).map((h) => h.capabilityId)).toEqual(['cap_a']);
    expect((await store.read((r) => r.capabilitySearch.match('maps', 10, { category: 'ai' }))).map((h) => h.capabilityId)).toEqual(['cap_b']);
    expect(await store.read((r) => r.capabilitySearch.match('!!', 10))).toEqual([]);
    await store.tx((r) => r.capabilitySearch.remove('cap_a'));
    expect(await store.read((r) => r.capabilitySearch.match('geocoder', 10))).toEqual([]);

    const request = (id: string, requestedAt: number) => ({ id, providerId: 'prv_m', status: 'requested' as const, note: null, contact: 'c', reason: null, requestedAt, updatedAt: requestedAt, decidedAt: null });
    await store.tx(async (r) => {
      await r.verificationRequests.insert(request('vr_2', 5));
      await r.verificationRequests.insert(request('vr_1', 5));
      await r.verificationRequests.insert(request('vr_0', 1));
      await r.verificationRequests.update('vr_0', { status: 'denied', reason: 'no', decidedAt: 2, updatedAt: 2 });
    });
    // the same time: the one inserted last is the latest
    expect(await store.read((r) => r.verificationRequests.latestForProvider('prv_m'))).toMatchObject({ id: 'vr_1' });
    expect(await store.read((r) => r.verificationRequests.latestForProvider('prv_none'))).toBeUndefined();
    expect((await store.read((r) => r.verificationRequests.listByStatus('requested'))).map((v) => v.id)).toEqual(['vr_2', 'vr_1']);
    expect(await store.read((r) => r.verificationRequests.listByStatus('denied'))).toMatchObject([{ id: 'vr_0', reason: 'no', decidedAt: 2 }]);

    const rating = (id: string, providerId: string, value: number) => ({ id, providerId, transactionId: `txn_${id}`, walletId: 'w', workspaceId: 'ws', agentId: null, rating: value, createdAt: 1 });
    await store.tx(async (r) => {
      await r.ratings.insert(rating('r1', 'prv_m', 5));
      await r.ratings.insert(rating('r2', 'prv_m', 2));
      await r.ratings.insert(rating('r3', 'prv_x', 4));
    });
    expect(await store.read((r) => r.ratings.byTransaction('txn_r2'))).toMatchObject({ id: 'r2', rating: 2 });
    expect(await store.read((r) => r.ratings.summary(['prv_m', 'prv_x', 'prv_none']))).toEqual(new Map([['prv_m', { count: 2, sum: 7 }], ['prv_x', { count: 1, sum: 4 }]]));
    expect(await store.read((r) => r.ratings.summary([]))).toEqual(new Map());

    // discovery's ranking: cap_a and cap_b may be shown (cap_u's seller is unverified, cap_old is deprecated)
    expect(await store.read((r) => r.discovery.stats({}))).toEqual({ count: 2, cheapestMinor: 10n, fastestMs: 12.5 });
    expect(await store.read((r) => r.discovery.stats({ category: 'data' }))).toEqual({ count: 1, cheapestMinor: 10n, fastestMs: null });
    expect(await store.read((r) => r.discovery.stats({ category: 'none' }))).toEqual({ count: 0, cheapestMinor: null, fastestMs: null });
    const byId = <T extends { id: string }>(rows: T[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(await store.read((r) => r.discovery.rows({})))).toEqual([
      { id: 'cap_a', providerId: 'prv_m', priceMinor: 10n, latencyP50Ms: null, sellerVerified: true },
      { id: 'cap_b', providerId: 'prv_m', priceMinor: 9_007_199_254_740_993n, latencyP50Ms: 12.5, sellerVerified: true },
    ]);
    expect((await store.read((r) => r.discovery.rows({ ids: ['cap_b', 'cap_u', 'cap_old', 'cap_none'] }))).map((x) => x.id)).toEqual(['cap_b']);
    expect(await store.read((r) => r.discovery.rows({ ids: [] }))).toEqual([]);
    expect(await store.read((r) => r.discovery.rows({}, 1))).toHaveLength(1);
    expect((await store.read((r) => r.discovery.rows({ maxLatencyMs: 12.75, maxPriceMinor: 9_007_199_254_740_993n }))).map((x) => x.id)).toEqual(['cap_b']);
    // relevance 0.5 * 0.2, price 10 / price, latency 12.5 / latency (unknown: 0.25), reputation, verified 1:
    // cap_a 0.1 + 1 + 0.25 + 0.5 + 1 = 2.85, cap_b 0.1 + ~0 + 1 + 0.5 + 1 = 2.6; without prv_m's reputation 0.1 instead of 0.5
    const inputs = (reputations: [string, number][]) => ({
      weights: { relevance: 0.5, price: 1, latency: 1, reputation: 1, verification: 1 },
      relevance: 0.2, cheapest: 10, fastest: 12.5, unknownLatency: 0.25, reputations: new Map(reputations), otherReputation: 0.1,
    });
    const keys = (rows: { id: string; key: number }[]) => rows.map((x) => [x.id, x.key]);
    expect(keys(await store.read((r) => r.discovery.byScore({}, inputs([['prv_m', 0.5]]), { limit: 10 })))).toEqual([['cap_a', 28500], ['cap_b', 26000]]);
    expect(keys(await store.read((r) => r.discovery.byScore({}, inputs([]), { limit: 1 })))).toEqual([['cap_a', 24500]]);
    expect(keys(await store.read((r) => r.discovery.byScore({}, inputs([['prv_m', 0.5]]), { minKey: 26001 })))).toEqual([['cap_a', 28500]]);
    expect(keys(await store.read((r) => r.discovery.byScore({ category: 'ai' }, inputs([]), { minKey: 0 })))).toEqual([['cap_b', 22000]]);
    expect(await store.read((r) => r.discovery.ratingSummaries())).toEqual(new Map([['prv_m', { count: 2, sum: 7 }], ['prv_x', { count: 1, sum: 4 }]]));
  });

  it('payments: transactions by nonce, resolved once, overdue, paged; receipts by owner; breakers; idempotency keys; an authorization\'s facts', async () => {
    const txn = (id: string, nonce: string, over: Record<string, unknown> = {}) => ({
      id, nonce, capabilityId: 'cap_p', providerId: 'prv_p', walletId: 'wal_pm', workspaceId: 'ws_p', amountMinor: 9_007_199_254_740_993n, feeMinor: null,
      currency: 'USD', chargedMinor: null, metering: null, status: 'authorized' as const, failureReason: null, authorizedAt: 1, expiresAt: 5, resolvedAt: null, ...over,
    });
    await store.tx(async (r) => {
      await r.transactions.insert(txn('txn_b', 'n_b'));
      await r.transactions.insert(txn('txn_a', 'n_a'));
      await r.transactions.insert(txn('txn_c', 'n_c', { walletId: 'wal_q', expiresAt: 3 }));
      await r.transactions.insert(txn('txn_d', 'n_d', { expiresAt: 99 }));
    });
    await expect(store.tx((r) => r.transactions.insert(txn('txn_dup', 'n_a')))).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.read((r) => r.transactions.get('txn_a'))).toEqual(txn('txn_a', 'n_a'));
    expect(await store.tx((r) => r.transactions.get('txn_a'))).toEqual(txn('txn_a', 'n_a'));
    expect(await store.read((r) => r.transactions.byNonce('n_b'))).toMatchObject({ id: 'txn_b' });
    expect(await store.read((r) => r.transactions.byNonce('n_none'))).toBeUndefined();
    const ids = (rows: { id: string }[]) => rows.map((x) => x.id);
    // oldest expiry first, equal ones by id; of one wallet when given
    expect(ids(await store.tx((r) => r.transactions.listExpired(5, 10)))).toEqual(['txn_c', 'txn_a', 'txn_b']);
    expect(ids(await store.read((r) => r.transactions.listExpired(5, 2)))).toEqual(['txn_c', 'txn_a']);
    expect(ids(await store.tx((r) => r.transactions.listExpired(5, 10, 'wal_pm')))).toEqual(['txn_a', 'txn_b']);
    await store.tx((r) => r.transactions.resolve('txn_a', { status: 'succeeded', resolvedAt: 6, feeMinor: 3n }));
    await expect(store.tx((r) => r.transactions.resolve('txn_a', { status: 'failed', resolvedAt: 7, failureReason: 'late' }))).rejects.toBeInstanceOf(AlreadyResolved);
    await expect(store.tx((r) => r.transactions.resolve('txn_none', { status: 'failed', resolvedAt: 7 }))).rejects.toBeInstanceOf(AlreadyResolved);
    expect(await store.read((r) => r.transactions.get('txn_a'))).toEqual(txn('txn_a', 'n_a', { status: 'succeeded', feeMinor: 3n, resolvedAt: 6 }));
    await store.tx((r) => r.transactions.update('txn_b', { status: 'expired', resolvedAt: 8, failureReason: 'timeout' }));
    expect(await store.read((r) => r.transactions.get('txn_b'))).toEqual(txn('txn_b', 'n_b', { status: 'expired', resolvedAt: 8, failureReason: 'timeout' }));
    // what the authorized ones (txn_c, txn_d) hold, summed exactly past 2^53 (the metrics' holds gauges)
    expect(await store.read((r) => r.transactions.holdsOutstanding())).toEqual({ count: 2, amounts: [{ currency: 'USD', amountMinor: 18_014_398_509_481_986n }] });
    expect(ids(await store.read((r) => r.transactions.listExpired(5, 10)))).toEqual(['txn_c']);
    expect(ids(await store.read((r) => r.transactions.page({ limit: 2 })))).toEqual(['txn_a', 'txn_b']);
    expect(ids(await store.read((r) => r.transactions.page({ afterId: 'txn_b', limit: 10 })))).toEqual(['txn_c', 'txn_d']);

    const receipt = (id: string, timestamp: number, over: Record<string, unknown> = {}) => ({
      id, transactionId: 'txn_a', providerId: 'prv_p', consumerId: 'wal_pm', workspaceId: 'ws_p', capabilityId: 'cap_p', amountMinor: 9_007_199_254_740_993n,
      currency: 'USD', responseHash: null, status: 'success' as const, timestamp, signature: 's', signingKeyId: 'k', ledgerHeads: '[]', usage: null, ...over,
    });
    await store.tx(async (r) => {
      await r.receipts.insert(receipt('rc_2', 5));
      await r.receipts.insert(receipt('rc_1', 5));
      await r.receipts.insert(receipt('rc_0', 1, { transactionId: 'txn_b', workspaceId: 'ws_q', status: 'failed', ledgerHeads: null }));
    });
    expect(await store.read((r) => r.receipts.get('rc_0'))).toEqual(receipt('rc_0', 1, { transactionId: 'txn_b', workspaceId: 'ws_q', status: 'failed', ledgerHeads: null }));
    expect(ids(await store.read((r) => r.receipts.byTransaction('txn_a')))).toEqual(['rc_1', 'rc_2']);
    expect(ids(await store.read((r) => r.receipts.list({ workspaceId: 'ws_p' }, { limit: 10 })))).toEqual(['rc_2', 'rc_1']);
    expect(ids(await store.read((r) => r.receipts.list({ providerId: 'prv_p' }, { limit: 2 })))).toEqual(['rc_2', 'rc_1']);
    expect(ids(await store.read((r) => r.receipts.list({ providerId: 'prv_p' }, { limit: 10, before: { timestamp: 5, id: 'rc_2' } })))).toEqual(['rc_1', 'rc_0']);

    const breaker = (consecutiveFailures: number, paused: boolean, updatedAt: number) => ({ walletId: 'wal_pm', providerId: 'prv_p', consecutiveFailures, paused, updatedAt });
    expect(await store.read((r) => r.breakers.get('wal_pm', 'prv_p'))).toBeUndefined();
    await store.tx((r) => r.breakers.put(breaker(2, false, 1)));
    await store.tx((r) => r.breakers.put(breaker(3, true, 2)));
    expect(await store.read((r) => r.breakers.get('wal_pm', 'prv_p'))).toEqual(breaker(3, true, 2));
    await store.tx((r) => r.breakers.clearFailures('wal_pm', 'prv_p', 4));
    // already clear: left as it is
    await store.tx((r) => r.breakers.clearFailures('wal_pm', 'prv_p', 5));
    await store.tx((r) => r.breakers.clearFailures('wal_none', 'prv_p', 5));
    expect(await store.read((r) => r.breakers.get('wal_pm', 'prv_p'))).toEqual(breaker(0, true, 4));
    expect(await store.read((r) => r.breakers.get('wal_none', 'prv_p'))).toBeUndefined();

    const key = (k: string, transactionId: string, expiresAt: number) => ({
      walletId: 'wal_pm', capabilityId: 'cap_p', key: k, requestHash: 'h', transactionId, state: 'in_progress' as const,
      responseStatus: null, responseContentType: null, responseBody: null, createdAt: 1, expiresAt,
    });
    await store.tx(async (r) => {
      await r.paymentIdempotency.insert(key('k1', 'txn_a', 5));
      await r.paymentIdempotency.insert(key('k2', 'txn_b', 3));
      await r.paymentIdempotency.insert(key('k3', 'txn_c', 9));
      await r.paymentIdempotency.insert(key('k4', 'txn_d', 9));
    });
    await expect(store.tx((r) => r.paymentIdempotency.insert(key('k1', 'txn_x', 5)))).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.read((r) => r.paymentIdempotency.get('wal_pm', 'cap_p', 'k1'))).toEqual(key('k1', 'txn_a', 5));
    expect(await store.read((r) => r.paymentIdempotency.byTransaction('txn_b'))).toEqual(key('k2', 'txn_b', 3));
    await store.tx(async (r) => {
      await r.paymentIdempotency.complete('txn_a', { status: 200, contentType: 'application/json', body: 'e30=' });
      await r.paymentIdempotency.complete('txn_c', null);
    });
    expect(await store.read((r) => r.paymentIdempotency.get('wal_pm', 'cap_p', 'k1'))).toMatchObject({ state: 'completed', responseStatus: 200, responseContentType: 'application/json', responseBody: 'e30=' });
    expect(await store.read((r) => r.paymentIdempotency.get('wal_pm', 'cap_p', 'k3'))).toMatchObject({ state: 'completed', responseStatus: null, responseBody: null });
    // the earliest expiry first
    expect(await store.tx((r) => r.paymentIdempotency.removeExpired(5, 1))).toBe(1);
    expect(await store.read((r) => r.paymentIdempotency.byTransaction('txn_b'))).toBeUndefined();
    expect(await store.tx((r) => r.paymentIdempotency.removeExpired(5, 10))).toBe(1);
    expect(await store.tx((r) => r.paymentIdempotency.removeExpired(5, 10))).toBe(0);
    await store.tx(async (r) => {
      await r.paymentIdempotency.remove('wal_pm', 'cap_p', 'k3');
      await r.paymentIdempotency.removeByTransaction('txn_d');
    });
    expect(await store.read(async (r) => [await r.paymentIdempotency.get('wal_pm', 'cap_p', 'k3'), await r.paymentIdempotency.byTransaction('txn_d')])).toEqual([undefined, undefined]);

    const wallet = newWalletRow({ id: 'wal_pm', tenantId: 'ws_p', ownerType: 'workspace', ownerId: 'ws_p', publicKeyPem: null }, 1);
    await store.tx(async (r) => {
      await r.tenants.insert(tenant('prv_p', 'provider'));
      await r.wallets.insert(wallet);
      await r.capabilities.insert(capability('cap_p', 'prv_p'));
    });
    const facts = { nonce: 'n_a', walletId: 'wal_pm', capabilityId: 'cap_p', providerId: 'prv_p' };
    expect(await store.read((r) => r.purchaseFacts.read(facts))).toEqual({
      nonceUsed: true, wallet, paused: true, capability: capability('cap_p', 'prv_p'), seller: tenant('prv_p', 'provider'),
    });
    expect(await store.tx((r) => r.purchaseFacts.read({ nonce: 'n_none', walletId: 'wal_none', capabilityId: 'cap_none', providerId: 'prv_none' }))).toEqual({
      nonceUsed: false, wallet: undefined, paused: false, capability: undefined, seller: undefined,
    });
  });

  it('wallets and the ledger: wallets by tenant, movements placed by the one rule or refused, heads; checkpoints paged', async () => {
    const wallet = (id: string, createdAt: number) => newWalletRow({ id, tenantId: 'ws_l', ownerType: 'agent', ownerId: 'ag', publicKeyPem: null }, createdAt);
    await store.tx(async (r) => {
      await r.wallets.insert(wallet('wal_l2', 1));
      await r.wallets.insert(wallet('wal_l1', 1));
      await r.wallets.insert(wallet('wal_l0', 0));
      await r.wallets.update('wal_l0', { frozen: true, frozenBy: 'operator', updatedAt: 2 });
    });
    await expect(store.tx((r) => r.wallets.insert(wallet('wal_l0', 3)))).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.read((r) => r.wallets.get('wal_l0'))).toEqual({ ...wallet('wal_l0', 0), frozen: true, frozenBy: 'operator', updatedAt: 2 });
    expect(await store.read((r) => r.wallets.get('wal_none'))).toBeUndefined();
    expect((await store.read((r) => r.wallets.listByTenant('ws_l'))).map((w) => w.id)).toEqual(['wal_l0', 'wal_l1', 'wal_l2']);

    const move = (id: string, walletId: string, amountMinor: bigint, holdMinor: bigint, over: Record<string, unknown> = {}) =>
      ({ id, walletId, type: 'fund', amountMinor, holdMinor, currency: 'USD', transactionId: null, reference: null, memo: null, createdAt: 1, ...over });
    const big = 9_007_199_254_740_993n;
    const placed = await store.tx((r) => r.ledger.place([
      move('le_1', 'wal_l1', big, 0n, { reference: 'ref', memo: 'm' }),
      move('le_2', 'wal_l1', 0n, 5n, { type: 'hold', transactionId: 'txn_l', createdAt: 2 }),
      move('le_3', 'wal_l2', 7n, 0n, { transactionId: 'txn_l', createdAt: 2 }),
    ]));
    expect(placed.map((e) => [e.id, e.seq, e.balanceAfter, e.heldAfter])).toEqual([['le_1', 1, big, 0n], ['le_2', 2, big, 5n], ['le_3', 1, 7n, 0n]]);
    const { hash, ...second } = placed[1]!;
    expect(hash).toBe(entryHash(second, placed[0]!.hash));
    // in a transaction, the head it placed is the one `last` answers; a wallet taken first (held, not read) places the same
    await store.tx(async (r) => {
      await r.ledger.take('wal_l2');
      const [e] = await r.ledger.place([move('le_4', 'wal_l2', -2n, 0n, { createdAt: 3 })]);
      expect(e!.seq).toBe(2);
      expect(await r.ledger.last('wal_l2')).toEqual(e);
    });
    // refused before anything is appended: the transaction goes on
    await store.tx(async (r) => {
      await expect(r.ledger.place([move('le_x', 'wal_l2', -6n, 0n)])).rejects.toBeInstanceOf(MovementRefused);
      await expect(r.ledger.place([move('le_y', 'wal_l1', -big, 0n)])).rejects.toBeInstanceOf(MovementRefused);
      await r.ledger.place([move('le_5', 'wal_l2', -5n, 0n, { createdAt: 4 })]);
    });
    expect(await store.read((r) => r.ledger.last('wal_l2'))).toMatchObject({ id: 'le_5', seq: 3, balanceAfter: 0n, heldAfter: 0n });
    expect(await store.read((r) => r.ledger.last('wal_l0'))).toBeUndefined();
    expect(await store.read((r) => r.ledger.list('wal_l1'))).toEqual(placed.slice(0, 2));
    expect((await store.read((r) => r.ledger.list('wal_l2'))).map((e) => e.id)).toEqual(['le_3', 'le_4', 'le_5']);
    expect((await store.read((r) => r.ledger.list('wal_l2', { afterSeq: 1, limit: 1 }))).map((e) => e.id)).toEqual(['le_4']);
    // by time, then seq
    expect((await store.read((r) => r.ledger.byTransaction('txn_l'))).map((e) => e.id)).toEqual(['le_3', 'le_2']);
    const heads = await store.read((r) => r.ledger.heads());
    const last2 = await store.read((r) => r.ledger.last('wal_l2'));
    expect(heads.filter((h) => h.walletId.startsWith('wal_l'))).toEqual([
      { walletId: 'wal_l1', seq: 2, hash: placed[1]!.hash },
      { walletId: 'wal_l2', seq: 3, hash: last2!.hash },
    ]);
    expect(await store.read((r) => r.ledger.unsealedWallets())).toEqual([]);
    // an entry that has its hash keeps it
    await store.tx((r) => r.ledger.seal('le_1', 'other'));
    expect((await store.read((r) => r.ledger.list('wal_l1', { limit: 1 })))[0]!.hash).toBe(placed[0]!.hash);

    const checkpoint = (id: string, createdAt: number) => ({ id, createdAt, heads: '[{"walletId":"wal_l1"}]', signature: 's', signingKeyId: 'k' });
    await store.tx(async (r) => {
      await r.ledgerCheckpoints.insert(checkpoint('cp_2', 5));
      await r.ledgerCheckpoints.insert(checkpoint('cp_1', 5));
      await r.ledgerCheckpoints.insert(checkpoint('cp_0', 1));
    });
    expect(await store.read((r) => r.ledgerCheckpoints.get('cp_1'))).toEqual(checkpoint('cp_1', 5));
    expect((await store.read((r) => r.ledgerCheckpoints.list({ limit: 2 }))).map((c) => c.id)).toEqual(['cp_2', 'cp_1']);
    expect((await store.read((r) => r.ledgerCheckpoints.list({ limit: 10, before: { createdAt: 5, id: 'cp_2' } }))).map((c) => c.id)).toEqual(['cp_1', 'cp_0']);
  });

  it('payments: activity counted and summed per bucket of resolution time, currency and outcome, in the range only, exact past 2^53', async () => {
    const H = 3_600_000;
    const base = 1_800_000_000_000; // on an hour's boundary
    const big = 9_007_199_254_740_993n;
    const txn = (id: string, over: Record<string, unknown>) => ({
      id, nonce: `n_${id}`, capabilityId: 'cap_v', providerId: 'prv_v', walletId: 'wal_v', workspaceId: 'ws_v', amountMinor: 100n, feeMinor: null, chargedMinor: null, metering: null,
      currency: 'USD', status: 'succeeded' as const, failureReason: null, authorizedAt: base - H, expiresAt: base + 10 * H, resolvedAt: base, ...over,
    });
    await store.tx(async (r) => {
      await r.transactions.insert(txn('txn_v1', { resolvedAt: base + 10, feeMinor: 5n }));
      await r.transactions.insert(txn('txn_v2', { resolvedAt: base + H - 1, amountMinor: 250n }));
      await r.transactions.insert(txn('txn_v3', { resolvedAt: base + H, amountMinor: 7n, feeMinor: 1n, currency: 'EUR' }));
      await r.transactions.insert(txn('txn_v4', { resolvedAt: base + H + 5, amountMinor: 40n, status: 'failed', failureReason: 'provider_error' }));
      await r.transactions.insert(txn('txn_v5', { resolvedAt: base + 2 * H, amountMinor: 40n, status: 'expired', failureReason: 'expired' }));
      await r.transactions.insert(txn('txn_v6', { resolvedAt: base + 2 * H + 1, amountMinor: big, feeMinor: big }));
      await r.transactions.insert(txn('txn_v7', { resolvedAt: base + 2 * H + 2, amountMinor: big, feeMinor: 1n }));
      // outside the range, and not resolved
      await r.transactions.insert(txn('txn_v8', { resolvedAt: base + 3 * H }));
      await r.transactions.insert(txn('txn_v9', { resolvedAt: base - 1 }));
      await r.transactions.insert(txn('txn_v10', { resolvedAt: null, status: 'authorized' }));
    });
    const hourly = await store.read((r) => r.transactions.activity({ from: base, to: base + 3 * H, bucketMs: H }));
    expect(hourly).toEqual([
      { bucket: 0, currency: 'USD', status: 'succeeded', count: 2, amountMinor: 350n, feeMinor: 5n },
      { bucket: 1, currency: 'EUR', status: 'succeeded', count: 1, amountMinor: 7n, feeMinor: 1n },
      { bucket: 1, currency: 'USD', status: 'failed', count: 1, amountMinor: 40n, feeMinor: 0n },
      { bucket: 2, currency: 'USD', status: 'expired', count: 1, amountMinor: 40n, feeMinor: 0n },
      { bucket: 2, currency: 'USD', status: 'succeeded', count: 2, amountMinor: 2n * big, feeMinor: big + 1n },
    ]);
    // one bucket of three hours: the same transactions together
    expect(await store.read((r) => r.transactions.activity({ from: base, to: base + 3 * H, bucketMs: 3 * H }))).toEqual([
      { bucket: 0, currency: 'EUR', status: 'succeeded', count: 1, amountMinor: 7n, feeMinor: 1n },
      { bucket: 0, currency: 'USD', status: 'expired', count: 1, amountMinor: 40n, feeMinor: 0n },
      { bucket: 0, currency: 'USD', status: 'failed', count: 1, amountMinor: 40n, feeMinor: 0n },
      { bucket: 0, currency: 'USD', status: 'succeeded', count: 4, amountMinor: 350n + 2n * big, feeMinor: big + 6n },
    ]);
    // the range's ends: `from` included, `to` excluded
    expect(await store.read((r) => r.transactions.activity({ from: base + 3 * H, to: base + 4 * H, bucketMs: H }))).toEqual([
      { bucket: 0, currency: 'USD', status: 'succeeded', count: 1, amountMinor: 100n, feeMinor: 0n },
    ]);
    expect(await store.read((r) => r.transactions.activity({ from: base + 5 * H, to: base + 6 * H, bucketMs: H }))).toEqual([]);
  });

  it('policies: get, approvals resolved and used once, given back, refunds due; spend by workspace', async () => {
    await store.tx(async (r) => {
      await r.policies.insert({ id: 'pol_1', workspaceId: 'ws_p', policyType: 'budget', name: 'b', enabled: true, source: 's', rules: ['x'], ordinal: 0, createdAt: 1, updatedAt: 1 });
    });
    expect(await store.read((r) => r.policies.get('pol_1'))).toMatchObject({ policyType: 'budget', rules: ['x'], enabled: true });
    // apply order: time, then insertion order within one time
    await store.tx(async (r) => {
      await r.policies.insert({ id: 'pol_0', workspaceId: 'ws_p', policyType: 'deny', name: null, enabled: true, source: 's', rules: [], ordinal: 0, createdAt: 1, updatedAt: 1 });
      await r.policies.insert({ id: 'pol_early', workspaceId: 'ws_p', policyType: 'allow', name: null, enabled: true, source: 's', rules: [], ordinal: 0, createdAt: 0, updatedAt: 0 });
      await r.policies.update('pol_early', { enabled: false, updatedAt: 2 });
    });
    expect((await store.read((r) => r.policies.listByWorkspace('ws_p'))).map((p) => [p.id, p.enabled])).toEqual([['pol_early', false], ['pol_1', true], ['pol_0', true]]);
    expect((await store.read((r) => r.policies.listEnabled('ws_p'))).map((p) => p.id)).toEqual(['pol_1', 'pol_0']);
    const approval = (id: string, createdAt: number) => ({
      id, workspaceId: 'ws_p', walletId: 'wal_p', agentId: 'ag', capabilityId: 'cap_p', amountMinor: 5n, currency: 'USD', policyId: 'pol_1', rule: 'r',
      status: 'pending' as const, createdAt, resolvedBy: null, resolvedAt: null, usedAt: null, usedByTransactionId: null,
    });
    await store.tx(async (r) => {
      await r.approvals.insert(approval('ap_1', 1));
      await r.approvals.insert(approval('ap_2', 1));
      await r.approvals.insert(approval('ap_3', 2));
    });
    expect(await store.tx((r) => r.approvals.resolve('ap_1', { status: 'approved', resolvedBy: 'me', resolvedAt: 3 }))).toBe(true);
    expect(await store.tx((r) => r.approvals.resolve('ap_1', { status: 'denied', resolvedBy: 'me', resolvedAt: 4 }))).toBe(false);
    expect(await store.tx((r) => r.approvals.resolve('ap_2', { status: 'approved', resolvedBy: 'me', resolvedAt: 3 }))).toBe(true);
    expect(await store.read((r) => r.approvals.get('ap_1'))).toMatchObject({ status: 'approved', resolvedBy: 'me', resolvedAt: 3, amountMinor: 5n });
    expect((await store.read((r) => r.approvals.listByWorkspace('ws_p'))).map((a) => a.id)).toEqual(['ap_3', 'ap_2', 'ap_1']);
    expect((await store.read((r) => r.approvals.listByWorkspace('ws_p', 'approved'))).map((a) => a.id)).toEqual(['ap_2', 'ap_1']);
    expect((await store.read((r) => r.approvals.forPurchase('wal_p', 'cap_p', 'approved'))).map((a) => a.id)).toEqual(['ap_1', 'ap_2']);
    expect(await store.tx((r) => r.approvals.use('ap_1', 5, 'txn_1', null))).toBe(true);
    expect(await store.tx((r) => r.approvals.use('ap_1', 6, 'txn_2', null))).toBe(false);
    expect(await store.tx((r) => r.approvals.use('ap_1', 6, 'txn_2', 'txn_1'))).toBe(true);
    expect(await store.tx((r) => r.approvals.use('ap_3', 6, 'txn_3', null))).toBe(false);
    expect(await store.read((r) => r.approvals.get('ap_1'))).toMatchObject({ usedAt: 6, usedByTransactionId: 'txn_2' });

    // ap_1's call (txn_2) is authorized and past its expiry at 100: a refund due
    await store.tx(async (r) => {
      await r.tenants.insert(tenant('ws_p', 'workspace'));
      await r.wallets.insert(newWalletRow({ id: 'wal_p', tenantId: 'ws_p', ownerType: 'agent', ownerId: 'ag', publicKeyPem: null }, 1));
      await r.transactions.insert({
        id: 'txn_2', nonce: 'n_txn_2', capabilityId: 'cap_p', providerId: 'prv', walletId: 'wal_p', workspaceId: 'ws_p', amountMinor: 5n, feeMinor: null,
        currency: 'USD', chargedMinor: null, metering: null, status: 'authorized', failureReason: null, authorizedAt: 5, expiresAt: 50, resolvedAt: null,
      });
    });
    expect((await store.read((r) => r.approvals.refundDue('wal_p', 'cap_p', 100))).map((a) => a.id)).toEqual(['ap_1']);
    expect(await store.read((r) => r.approvals.refundDue('wal_p', 'cap_p', 10))).toEqual([]);
    expect((await store.read((r) => r.policies.listEnabledOfWallet('wal_p'))).map((p) => p.id)).toEqual(['pol_1', 'pol_0']);
    expect(await store.read((r) => r.policies.listEnabledOfWallet('wal_none'))).toEqual([]);
    expect(await store.read((r) => r.spend.byWallet('wal_p', 0, 1000, 1000))).toBe(0n);
    expect(await store.tx((r) => r.approvals.giveBack('txn_2'))).toBe(true);
    expect(await store.tx((r) => r.approvals.giveBack('txn_2'))).toBe(false);
    expect(await store.read((r) => r.approvals.get('ap_1'))).toMatchObject({ usedAt: null, usedByTransactionId: null });
    // no holds in the workspace's wallets yet (inside a tx: PostgreSQL takes the workspace's row first)
    expect(await store.tx((r) => r.spend.byWorkspace('ws_p', 0, 1000, 1000))).toBe(0n);
  });

  it('rails: rail transactions by key, state and page, deposit addresses, payout destinations, events, reconciliations', async () => {
    const rt = (id: string, over: Partial<RailTransaction> = {}): RailTransaction => ({
      id, kind: 'payout', tenantId: 'ten_r', walletId: 'wal_r', treasuryProviderId: 'tp', rail: null, state: 'pending', railAmountMinor: 9_007_199_254_740_993n,
      railCurrency: 'USD', usdAmountMinor: null, externalRef: null, counterparty: null, priceMicros: null, reason: null, idempotencyKey: null, requestHash: null,
      hostedUrl: null, expectedBy: null, resubmittedAt: null, createdAt: 1, updatedAt: 1, settledAt: null, ...over,
    });
    await store.tx(async (r) => {
      await r.railTransactions.insert(rt('rt_1', { idempotencyKey: 'idem' }));
      await r.railTransactions.insert(rt('rt_2', { kind: 'topup', walletId: 'wal_other' }));
      await r.railTransactions.insert(rt('rt_3', { tenantId: 'ten_s', state: 'submitted', createdAt: 5 }));
      await r.railTransactions.insert(rt('rt_4', { state: 'held' }));
    });
    expect(await store.read((r) => r.railTransactions.get('rt_1'))).toMatchObject({ railAmountMinor: 9_007_199_254_740_993n, idempotencyKey: 'idem' });
    expect(await store.read((r) => r.railTransactions.byIdempotencyKey('ten_r', 'idem'))).toMatchObject({ id: 'rt_1' });
    expect(await store.tx((r) => r.railTransactions.transition('rt_1', ['held', 'failed'], { state: 'submitted', updatedAt: 2 }))).toBe(false);
    expect(await store.tx((r) => r.railTransactions.transition('rt_1', ['pending', 'held'], { state: 'submitted', updatedAt: 2 }))).toBe(true);
    expect(await store.tx((r) => r.railTransactions.recordReference('rt_1', { externalRef: 'ref_1', updatedAt: 3 }))).toBe(true);
    expect(await store.tx((r) => r.railTransactions.recordReference('rt_1', { externalRef: 'ref_2', updatedAt: 4 }))).toBe(false);
    expect(await store.read((r) => r.railTransactions.byExternalRef('tp', 'ref_1'))).toMatchObject({ id: 'rt_1', state: 'submitted' });
    await store.tx(async (r) => {
      await r.railTransactions.update('rt_4', { reason: 'why', usdAmountMinor: 7n });
      await r.railTransactions.update('rt_4', {});
    });
    expect(await store.read((r) => r.railTransactions.get('rt_4'))).toMatchObject({ reason: 'why', usdAmountMinor: 7n, state: 'held' });
    expect((await store.read((r) => r.railTransactions.listByTenant('ten_r', { limit: 10 }))).map((t) => t.id)).toEqual(['rt_4', 'rt_2', 'rt_1']);
    expect((await store.read((r) => r.railTransactions.listByTenant('ten_r', { kind: 'payout', walletId: 'wal_r', before: 'rt_4', limit: 10 }))).map((t) => t.id)).toEqual(['rt_1']);
    expect((await store.read((r) => r.railTransactions.listByState('payout', ['submitted', 'held'], 10))).map((t) => t.id)).toEqual(['rt_1', 'rt_3', 'rt_4']);
    expect((await store.read((r) => r.railTransactions.listByState('payout', ['submitted', 'held'], 1, 'rt_1'))).map((t) => t.id)).toEqual(['rt_3']);
    expect((await store.read((r) => r.railTransactions.listByKind('payout'))).map((t) => t.id)).toEqual(['rt_1', 'rt_3', 'rt_4']);
    expect((await store.read((r) => r.railTransactions.listPayouts({ limit: 2 }))).map((t) => t.id)).toEqual(['rt_4', 'rt_3']);
    expect((await store.read((r) => r.railTransactions.listPayouts({ limit: 10, before: 'rt_4' }))).map((t) => t.id)).toEqual(['rt_3', 'rt_1']);
    expect((await store.read((r) => r.railTransactions.listPayouts({ limit: 10, tenantId: 'ten_r', state: 'submitted' }))).map((t) => t.id)).toEqual(['rt_1']);
    expect((await store.read((r) => r.railTransactions.listPayouts({ limit: 10, createdBefore: 5 }))).map((t) => t.id)).toEqual(['rt_4', 'rt_1']);

    const address = (a: string, chain: string) => ({ address: a, walletId: 'wal_r', tenantId: 'ten_r', chain, asset: 'USDC', treasuryProviderId: 'tp', createdAt: 1 });
    await store.tx(async (r) => {
      await r.depositAddresses.insert(address('0xb', 'base'));
      await r.depositAddresses.insert(address('0xa', 'eth'));
    });
    expect(await store.read((r) => r.depositAddresses.get('0xa'))).toEqual(address('0xa', 'eth'));
    expect(await store.read((r) => r.depositAddresses.find('wal_r', 'base', 'USDC', 'tp'))).toEqual(address('0xb', 'base'));
    expect(await store.read((r) => r.depositAddresses.find('wal_r', 'base', 'USDC', 'other'))).toBeUndefined();
    expect((await store.read((r) => r.depositAddresses.listByWallet('wal_r'))).map((a) => a.address)).toEqual(['0xb', '0xa']);

    const destination = (id: string, asset: 'USD' | 'USDC', chain: string) => ({ id, providerId: 'prv_r', asset, chain, destination: id, normalized: id, createdAt: 1, usableAt: 1 });
    await store.tx(async (r) => {
      await r.payoutDestinations.insert(destination('pd_1', 'USDC', 'base'));
      await r.payoutDestinations.insert(destination('pd_2', 'USD', 'ach'));
      await r.payoutDestinations.insert(destination('pd_3', 'USDC', 'base'));
    });
    expect(await store.read((r) => r.payoutDestinations.current('prv_r', 'USDC', 'base'))).toMatchObject({ id: 'pd_3' });
    expect((await store.read((r) => r.payoutDestinations.listCurrent('prv_r'))).map((d) => d.id)).toEqual(['pd_2', 'pd_3']);

    await store.tx(async (r) => {
      await r.railEvents.insert({ id: 'ev_old', tenantId: 'ten_r', type: 'x', data: { a: 1 }, createdAt: 1 });
      await r.railEvents.insert({ id: 'ev_kept', tenantId: 'ten_r', type: 'x', data: {}, createdAt: 1 });
      await r.alertMails.insert({ id: 'am_kept', tenantId: 'ten_r', eventId: 'ev_kept', eventType: 'x', state: 'pending', attempts: 0, nextAttemptAt: 1, lockedUntil: null, lastError: null, recipients: null, createdAt: 1, finishedAt: null });
    });
    expect(await store.read((r) => r.railEvents.get('ev_old'))).toEqual({ id: 'ev_old', tenantId: 'ten_r', type: 'x', data: { a: 1 }, createdAt: 1 });
    expect((await store.read((r) => r.railEvents.list('ten_r', { limit: 10 }))).map((e) => e.id)).toEqual(['ev_kept', 'ev_old']);
    expect((await store.read((r) => r.railEvents.list('ten_r', { type: 'x', before: 'ev_kept', limit: 10 }))).map((e) => e.id)).toEqual(['ev_old']);
    // one still to be mailed (am_kept) is kept
    expect(await store.tx((r) => r.railEvents.removeOlderThan(10, 10))).toBe(1);
    expect(await store.read((r) => r.railEvents.get('ev_old'))).toBeUndefined();

    await store.tx(async (r) => {
      await r.sandboxObjects.put('acct', 'x', { n: 1 }, 1);
      await r.sandboxObjects.put('acct', 'y', { n: 2 }, 2);
      expect(await r.sandboxObjects.put('acct', 'x', { n: 3 }, 3)).toEqual({ kind: 'acct', id: 'x', seq: 1, data: { n: 3 }, updatedAt: 3 });
    });
    expect(await store.read((r) => r.sandboxObjects.get('acct', 'x'))).toEqual({ kind: 'acct', id: 'x', seq: 1, data: { n: 3 }, updatedAt: 3 });
    expect((await store.read((r) => r.sandboxObjects.list('acct', 1))).map((o) => [o.id, o.seq])).toEqual([['y', 2]]);

    expect(await store.read((r) => r.reconciliations.latest())).toBeUndefined();
    await store.tx(async (r) => {
      await r.reconciliations.insert({ id: 'rc_2', status: 'ok', obligationsMinor: 1n, holdingsMinor: 2n, report: { n: 1 }, createdAt: 5 });
      await r.reconciliations.insert({ id: 'rc_1', status: 'shortfall', obligationsMinor: 3n, holdingsMinor: 2n, report: {}, createdAt: 5 });
    });
    expect(await store.read((r) => r.reconciliations.latest())).toMatchObject({ id: 'rc_1', status: 'shortfall', obligationsMinor: 3n });
    const totals = await store.read((r) => r.reconciliations.ledgerTotals());
    expect(totals.balancesMinor).toBeTypeOf('bigint');
    expect(Object.values(totals.byType).every((v) => typeof v === 'bigint')).toBe(true);
  });

  it('webhooks and alert mails: endpoints with their sequence, deliveries queued per endpoint, due, claimed once, pruned', async () => {
    const endpoint = (id: string, eventTypes: string[] | null) => ({
      id, tenantId: 'ten_w', url: `https://x/${id}`, description: null, eventTypes, secretCiphertext: 's', previousSecretCiphertext: null, previousSecretUntil: null, lastSeq: 0, createdAt: 1,
    });
    await store.tx(async (r) => {
      await r.webhookEndpoints.insert(endpoint('we_b', null));
      await r.webhookEndpoints.insert(endpoint('we_a', ['wanted']));
      await r.webhookEndpoints.setSecrets('we_a', { secretCiphertext: 's2', previousSecretCiphertext: 's', previousSecretUntil: 9 });
    });
    expect(await store.read((r) => r.webhookEndpoints.get('we_a'))).toMatchObject({ secretCiphertext: 's2', previousSecretCiphertext: 's', previousSecretUntil: 9, eventTypes: ['wanted'] });
    expect((await store.read((r) => r.webhookEndpoints.listByTenant('ten_w'))).map((e) => e.id)).toEqual(['we_a', 'we_b']);
    expect(await store.tx((r) => r.webhookEndpoints.nextSeq('we_b'))).toBe(1);
    await expect(store.tx((r) => r.webhookEndpoints.nextSeq('we_none'))).rejects.toThrow(/does not exist/);

    // an event queued: a delivery for each endpoint that wants its type, in endpoint order, with the endpoint's next seq
    await store.tx((r) => r.railEvents.insertQueued({ id: 'ev_q', tenantId: 'ten_w', type: 'other', data: {}, createdAt: 10 }, { deliveryId: 'whd_q00', maxPending: 1, fullError: 'full' }));
    await store.tx((r) => r.railEvents.insertQueued({ id: 'ev_w', tenantId: 'ten_w', type: 'wanted', data: {}, createdAt: 11 }, { deliveryId: 'whd_w00', maxPending: 1, fullError: 'full' }));
    const d = await store.read((r) => Promise.all(['whd_q00', 'whd_w00', 'whd_w01'].map((id) => r.webhookDeliveries.get(id))));
    expect(d.map((x) => x && [x.endpointId, x.seq, x.state, x.attempts.map((a) => a.error)])).toEqual([['we_b', 2, 'pending', []], ['we_a', 1, 'pending', []], ['we_b', 3, 'failed', ['full']]]);
    expect(await store.read((r) => r.webhookDeliveries.countPending('we_b'))).toBe(1);
    expect(await store.read((r) => r.webhookDeliveries.countForEvent('we_b', 'ev_w'))).toBe(1);

    const delivery = (id: string, seq: number, over: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
      id, endpointId: 'we_b', tenantId: 'ten_w', eventId: 'ev_x', eventType: 'x', seq, state: 'pending', nextAttemptAt: 20, lockedUntil: null, attempts: [],
      replayOf: null, createdAt: 20, finishedAt: null, ...over,
    });
    await store.tx((r) => r.webhookDeliveries.insert(delivery('whd_4', 4)));
    // each endpoint's oldest pending one, when due
    expect((await store.read((r) => r.webhookDeliveries.due(30, 10))).map((x) => x.id)).toEqual(['whd_q00', 'whd_w00']);
    expect(await store.tx((r) => r.webhookDeliveries.claim('whd_q00', 30, 40))).toBe(true);
    expect(await store.tx((r) => r.webhookDeliveries.claim('whd_q00', 31, 41))).toBe(false);
    expect((await store.read((r) => r.webhookDeliveries.due(30, 10))).map((x) => x.id)).toEqual(['whd_w00']);
    await store.tx((r) => r.webhookDeliveries.update('whd_q00', { state: 'delivered', finishedAt: 32, lockedUntil: null, attempts: [{ at: 31, status: 200, durationMs: 3 }] }));
    expect((await store.read((r) => r.webhookDeliveries.due(30, 10))).map((x) => x.id)).toEqual(['whd_w00', 'whd_4']);
    expect((await store.read((r) => r.webhookDeliveries.listByEndpoint('we_b', { limit: 2 }))).map((x) => x.id)).toEqual(['whd_4', 'whd_w01']);
    expect((await store.read((r) => r.webhookDeliveries.listByEndpoint('we_b', { before: 'whd_w01', limit: 10 }))).map((x) => x.id)).toEqual(['whd_q00']);
    expect(await store.tx((r) => r.webhookDeliveries.removeFinished(40, 1))).toBe(1);
    expect(await store.tx((r) => r.webhookDeliveries.removeFinished(40, 10))).toBe(1);
    expect(await store.read((r) => r.webhookDeliveries.get('whd_q00'))).toBeUndefined();
    await store.tx((r) => r.webhookEndpoints.delete('we_b'));
    expect(await store.read((r) => Promise.all([r.webhookEndpoints.get('we_b'), r.webhookDeliveries.get('whd_4')]))).toEqual([undefined, undefined]);

    const mail = (id: string, nextAttemptAt: number) => ({ id, tenantId: 'ten_w', eventId: `ev_${id}`, eventType: 'x', state: 'pending' as const, attempts: 0, nextAttemptAt, lockedUntil: null, lastError: null, recipients: null, createdAt: 1, finishedAt: null });
    await store.tx(async (r) => {
      await r.alertMails.insert(mail('am_2', 5));
      await r.alertMails.insert(mail('am_1', 5));
      await r.alertMails.insert(mail('am_3', 50));
    });
    expect(await store.read((r) => r.alertMails.byEvent('ev_am_1'))).toEqual(mail('am_1', 5));
    // am_kept (the rails case's, due since 1) first
    expect((await store.read((r) => r.alertMails.due(10, 10))).map((m) => m.id)).toEqual(['am_kept', 'am_1', 'am_2']);
    expect(await store.tx((r) => r.alertMails.claim('am_1', 10, 20))).toBe(true);
    expect(await store.tx((r) => r.alertMails.claim('am_1', 11, 21))).toBe(false);
    expect((await store.read((r) => r.alertMails.due(10, 2))).map((m) => m.id)).toEqual(['am_kept', 'am_2']);
    await store.tx((r) => r.alertMails.update('am_1', { state: 'sent', recipients: 2, finishedAt: 12, attempts: 1 }));
    expect(await store.tx((r) => r.alertMails.removeFinished(13, 10))).toBe(1);
    expect(await store.read((r) => r.alertMails.byEvent('ev_am_1'))).toBeUndefined();
  });

  it('x402 authorizations: by nonce (unique), moved between states once (also guarded by the last change), listed by state, settled ones not reconciled yet', async () => {
    const auth = (id: string, nonce: string, updatedAt: number) => ({
      id, network: 'base', asset: 'usdc', nonce, payer: 'p', payTo: 't', value: '100', validAfter: 0, validBefore: 99, signature: 's', capabilityId: 'c', providerId: 'prv',
      amountMinor: 9_007_199_254_740_993n, currency: 'USD', state: 'reserved' as const, txHash: null, responseHash: null, transactionId: null, attempts: 0, lastError: null, createdAt: 1, updatedAt, settledAt: null,
      reconciledAt: null,
    });
    await store.tx(async (r) => {
      await r.x402Authorizations.insert(auth('xa_2', 'n2', 2));
      await r.x402Authorizations.insert(auth('xa_1', 'n1', 2));
      await r.x402Authorizations.insert(auth('xa_0', 'n0', 1));
    });
    await expect(store.tx((r) => r.x402Authorizations.insert(auth('xa_dup', 'n1', 1)))).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.read((r) => r.x402Authorizations.get('xa_1'))).toEqual(auth('xa_1', 'n1', 2));
    expect(await store.read((r) => r.x402Authorizations.byNonce('base', 'usdc', 'n2'))).toMatchObject({ id: 'xa_2' });
    expect(await store.tx((r) => r.x402Authorizations.transition('xa_0', ['reserved'], { state: 'settling', updatedAt: 3 }))).toBe(true);
    expect(await store.tx((r) => r.x402Authorizations.transition('xa_0', ['reserved'], { state: 'released', updatedAt: 4 }))).toBe(false);
    await store.tx((r) => r.x402Authorizations.update('xa_0', { txHash: '0xh', attempts: 1, updatedAt: 5 }));
    expect((await store.read((r) => r.x402Authorizations.listByState(['reserved', 'settling'], 10))).map((a) => [a.id, a.state])).toEqual([['xa_1', 'reserved'], ['xa_2', 'reserved'], ['xa_0', 'settling']]);
    expect((await store.read((r) => r.x402Authorizations.listByState(['settling'], 10)))[0]).toMatchObject({ txHash: '0xh', attempts: 1 });
    // guarded by the last change too: a claim on a row that changed since it was read fails
    expect(await store.tx((r) => r.x402Authorizations.transition('xa_0', ['settling'], { state: 'failed', updatedAt: 6 }, 4))).toBe(false);
    expect(await store.tx((r) => r.x402Authorizations.transition('xa_0', ['settling'], { state: 'settling', responseHash: 'sha256:ab', updatedAt: 6 }, 5))).toBe(true);
    expect(await store.read((r) => r.x402Authorizations.get('xa_0'))).toMatchObject({ state: 'settling', responseHash: 'sha256:ab', updatedAt: 6 });
    // settled and not reconciled yet, the oldest first; reconciled ones drop out
    await store.tx(async (r) => {
      await r.x402Authorizations.update('xa_0', { state: 'settled', settledAt: 7, updatedAt: 7 });
      await r.x402Authorizations.update('xa_2', { state: 'settled', settledAt: 8, updatedAt: 8 });
    });
    expect((await store.read((r) => r.x402Authorizations.unreconciled(10))).map((a) => a.id)).toEqual(['xa_0', 'xa_2']);
    await store.tx((r) => r.x402Authorizations.update('xa_0', { reconciledAt: 9 }));
    expect((await store.read((r) => r.x402Authorizations.unreconciled(10))).map((a) => a.id)).toEqual(['xa_2']);
    expect(await store.read((r) => r.x402Authorizations.get('xa_0'))).toMatchObject({ reconciledAt: 9 });
  });

  it('sessions: unique open nonce, locked read, claims compare-and-set on the claimed amount, unique per cumulative, listed per owner, due, open pages', async () => {
    const session = (id: string, nonce: string, over: Partial<import('../../src/store/repos/sessions.js').Session> = {}) => ({
      id, walletId: 'wal_s', workspaceId: 'wsp_s', providerId: 'prv_s', capabilityId: null, payTo: 'wal_pay', capMinor: 9_007_199_254_740_993n, claimedMinor: 0n, feeMinor: 0n,
      currency: 'USD', lastSequence: 0, sessionPublicKey: 'pem-s', sellerPublicKey: 'pem-k', openNonce: nonce, status: 'open' as const, expiresAt: 100, claimWindowEndsAt: 200,
      createdAt: 10, updatedAt: 10, closedAt: null, ...over,
    });
    await store.tx(async (r) => {
      await r.sessions.insert(session('ses_a', 'na'));
      await r.sessions.insert(session('ses_b', 'nb', { createdAt: 11, capabilityId: 'cap_1', claimWindowEndsAt: 150 }));
      await r.sessions.insert(session('ses_c', 'nc', { createdAt: 11, providerId: 'prv_other', workspaceId: 'wsp_other', status: 'closed', claimWindowEndsAt: 50 }));
    });
    await expect(store.tx((r) => r.sessions.insert(session('ses_dup', 'na')))).rejects.toBeInstanceOf(UniqueViolation);
    expect(await store.read((r) => r.sessions.get('ses_a'))).toEqual(session('ses_a', 'na'));
    expect(await store.tx((r) => r.sessions.getForUpdate('ses_b'))).toMatchObject({ id: 'ses_b', capabilityId: 'cap_1' });
    expect(await store.tx((r) => r.sessions.getForUpdate('ses_none'))).toBeUndefined();
    // compare and set: only from the claimed amount read, only while open
    expect(await store.tx((r) => r.sessions.advance('ses_a', 0n, { claimedMinor: 40n, feeMinor: 1n, lastSequence: 4, updatedAt: 12 }))).toBe(true);
    expect(await store.tx((r) => r.sessions.advance('ses_a', 0n, { claimedMinor: 50n, updatedAt: 13 }))).toBe(false);
    expect(await store.tx((r) => r.sessions.advance('ses_c', 0n, { claimedMinor: 50n, updatedAt: 13 }))).toBe(false);
    expect(await store.read((r) => r.sessions.get('ses_a'))).toMatchObject({ claimedMinor: 40n, feeMinor: 1n, lastSequence: 4 });
    await store.tx((r) => r.sessions.insertClaim({ sessionId: 'ses_a', cumulativeMinor: 40n, sequence: 4, amountMinor: 40n, feeMinor: 1n, createdAt: 12 }));
    await store.tx((r) => r.sessions.insertClaim({ sessionId: 'ses_a', cumulativeMinor: 9n, sequence: 1, amountMinor: 9n, feeMinor: 0n, createdAt: 11 }));
    await expect(store.tx((r) => r.sessions.insertClaim({ sessionId: 'ses_a', cumulativeMinor: 40n, sequence: 5, amountMinor: 1n, feeMinor: 0n, createdAt: 13 }))).rejects.toBeInstanceOf(UniqueViolation);
    expect((await store.read((r) => r.sessions.claims('ses_a'))).map((c) => [c.cumulativeMinor, c.sequence])).toEqual([[9n, 1], [40n, 4]]);
    // per owner, newest first, paged by (createdAt, id), by status
    expect((await store.read((r) => r.sessions.list({ providerId: 'prv_s' }, { limit: 10 }))).map((x) => x.id)).toEqual(['ses_b', 'ses_a']);
    expect((await store.read((r) => r.sessions.list({ providerId: 'prv_s' }, { limit: 10, before: { createdAt: 11, id: 'ses_b' } }))).map((x) => x.id)).toEqual(['ses_a']);
    expect((await store.read((r) => r.sessions.list({ workspaceId: 'wsp_other' }, { limit: 10, status: 'closed' }))).map((x) => x.id)).toEqual(['ses_c']);
    expect(await store.read((r) => r.sessions.list({ workspaceId: 'wsp_other' }, { limit: 10, status: 'open' }))).toEqual([]);
    // narrowed by the buyer's wallet, and by the seller within a workspace's
    expect((await store.read((r) => r.sessions.list({ workspaceId: 'wsp_s', providerId: 'prv_s' }, { limit: 10, walletId: 'wal_s' }))).map((x) => x.id)).toEqual(['ses_b', 'ses_a']);
    expect(await store.read((r) => r.sessions.list({ workspaceId: 'wsp_s' }, { limit: 10, walletId: 'wal_none' }))).toEqual([]);
    expect(await store.read((r) => r.sessions.list({ workspaceId: 'wsp_s', providerId: 'prv_other' }, { limit: 10 }))).toEqual([]);
    // due: open, claim window ended
    expect((await store.read((r) => r.sessions.listDue(150, 10))).map((x) => x.id)).toEqual(['ses_b']);
    expect((await store.read((r) => r.sessions.listDue(300, 10))).map((x) => x.id)).toEqual(['ses_b', 'ses_a']);
    expect((await store.read((r) => r.sessions.pageOpen({ limit: 1 }))).map((x) => x.id)).toEqual(['ses_a']);
    // what the open ones (ses_a, claimed 40; ses_b) still hold: their caps less what was claimed, exactly
    expect(await store.read((r) => r.sessions.holdsOutstanding())).toEqual({ count: 2, amounts: [{ currency: 'USD', amountMinor: 18_014_398_509_481_946n }] });
    expect((await store.read((r) => r.sessions.pageOpen({ afterId: 'ses_a', limit: 10 }))).map((x) => x.id)).toEqual(['ses_b']);
  });

  it('called every method of the repositories written once', () => {
    const seen = called.get(b.name)!;
    expect(everyMethod().filter((m) => !seen.has(m))).toEqual([]);
  });
});
