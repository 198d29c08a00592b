/**
 * Discovery at scale returns exactly what the first implementation returned: that one loaded every
 * candidate listing with its version and seller and scored them all in JavaScript. It is kept
 * below, frozen, as the reference (`referenceSearch`). Every search runs on one varied catalogue
 * in a real SQLite file: sellers with equal and unequal reputations, unverified, suspended and
 * deprecated listings, equal prices and latencies, prices whose signals differ by less than the
 * 4-decimal rounding (so that ties are broken by id against the unrounded order), identical texts
 * (equal BM25), and more full-text matches than MATCH_CEILING. Each is compared three ways: the
 * reference, the service as shipped, and one that has the store order every search without a
 * query; one test also moves the store's score keys by one and shuffles its ties, as far as the
 * argument at the top of src/domain/market/discovery.ts allows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SequentialIds } from '../../src/core/ids.js';
import { MAX_MINOR, parseMinor } from '../../src/core/money.js';
import {
  DEFAULT_LIMIT, DiscoveryService, MATCH_CEILING, MAX_LIMIT, WEIGHTS, discoveryCapabilityView, type SearchFilters, type Signals,
} from '../../src/domain/market/discovery.js';
import { providerSummary } from '../../src/domain/market/providers.js';
import { reputations } from '../../src/domain/market/reputation.js';
import { Discovery } from '../../src/store/sql/discovery.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Repos } from '../../src/store/store.js';

// ---- the reference: the ranking as first built, frozen (do not "fix" it; it is the oracle) ----

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const hasWords = (q: string | undefined): q is string => q !== undefined && /[\p{L}\p{N}]/u.test(q);
function priceCeiling(value: unknown): bigint {
  if (typeof value === 'string' && /^[0-9]+$/.test(value) && BigInt(value) > MAX_MINOR) return MAX_MINOR;
  return parseMinor(value, 'maxPriceMinor', { allowZero: true });
}

/** The whole ranked list of one search is computed once; each limit takes its start. */
const ranked = new Map<string, Promise<Awaited<ReturnType<typeof referenceRank>>>>();

async function referenceSearch(store: SqliteStore, filters: SearchFilters) {
  const maxPriceMinor = filters.maxPriceMinor === undefined ? undefined : priceCeiling(filters.maxPriceMinor);
  const limit = Math.min(Math.max(1, Math.floor(filters.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
  const { limit: _l, ...search } = filters;
  const key = JSON.stringify(search);
  if (!ranked.has(key)) ranked.set(key, store.read((r) => referenceRank(r, { ...search, maxPriceMinor })));
  return { results: (await ranked.get(key)!).slice(0, limit) };
}

async function referenceRank(r: Repos, f: Omit<SearchFilters, 'maxPriceMinor'> & { maxPriceMinor: bigint | undefined }) {
  const filter = {
    ...(f.category !== undefined ? { category: f.category } : {}),
    ...(f.protocol !== undefined ? { protocol: f.protocol } : {}),
    ...(f.maxPriceMinor !== undefined ? { maxPriceMinor: f.maxPriceMinor } : {}),
    ...(f.maxLatencyMs !== undefined ? { maxLatencyMs: f.maxLatencyMs } : {}),
  };
  let bm25: Map<string, number> | undefined;
  if (hasWords(f.query)) {
    const matches = await r.capabilitySearch.match(f.query, MATCH_CEILING, filter);
    if (matches.length === 0) return [];
    bm25 = new Map(matches.map((m) => [m.capabilityId, Math.max(0, -m.rank)]));
  }
  const candidates = await r.capabilities.listDiscoverable({ ...(bm25 ? { ids: [...bm25.keys()] } : {}), ...filter });
  if (candidates.length === 0) return [];
  const versions = new Map((await r.capabilityVersions.getMany(candidates.map((c) => c.currentVersionId))).map((v) => [v.id, v]));
  const providerIds = [...new Set(candidates.map((c) => c.providerId))];
  const reps = await reputations(r, providerIds);
  const sellers = new Map<string, NonNullable<Awaited<ReturnType<Repos['tenants']['get']>>>>();
  for (const id of providerIds) {
    const t = await r.tenants.get(id);
    if (t) sellers.set(id, t);
  }
  let bestRelevance = 0;
  let cheapest = Infinity;
  let fastest = Infinity;
  for (const c of candidates) {
    if (bm25) bestRelevance = Math.max(bestRelevance, bm25.get(c.id) ?? 0);
    cheapest = Math.min(cheapest, Number(c.priceMinor));
    if (c.latencyP50Ms !== null) fastest = Math.min(fastest, c.latencyP50Ms);
  }
  cheapest = Math.max(1, cheapest);
  fastest = Number.isFinite(fastest) ? Math.max(1, fastest) : 1;
  const scored = candidates.map((c) => {
    const seller = sellers.get(c.providerId)!;
    const reputation = reps.get(c.providerId)!;
    const signals: Signals = {
      relevance: bm25 ? (bestRelevance > 0 ? (bm25.get(c.id) ?? 0) / bestRelevance : 1) : 0.5,
      price: cheapest / Math.max(1, Number(c.priceMinor)),
      latency: c.latencyP50Ms === null ? 0.5 : fastest / Math.max(1, c.latencyP50Ms),
      reputation,
      verification: seller.verified ? 1 : 0,
    };
    const score = (Object.keys(WEIGHTS) as (keyof Signals)[]).reduce((s, k) => s + WEIGHTS[k] * signals[k], 0);
    const version = versions.get(c.currentVersionId)!;
    return {
      capability: discoveryCapabilityView(c),
      version: { endpoint: version.endpoint, address: version.address, version: version.version },
      provider: providerSummary(seller, reputation),
      score: round4(score),
      scoreBreakdown: Object.fromEntries(Object.entries(signals).map(([k, v]) => [k, round4(v)])) as Signals,
    };
  });
  scored.sort((a, b) => b.score - a.score || (a.capability.id < b.capability.id ? -1 : a.capability.id > b.capability.id ? 1 : 0));
  return scored;
}

// ---- the catalogue ----

/** mulberry32: the same catalogue and the same searches on every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(20261122);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
/** Ids in random order, so that the id tie-break disagrees with every other order. */
const randomId = (prefix: string) => `${prefix}_${Math.floor(rand() * 2 ** 48).toString(36).padStart(10, '0')}`;

const WORDS = ['red', 'blue', 'green', 'fast', 'slow', 'tool'];
const CATEGORIES = ['alpha', 'beta', 'gamma', 'Alpha'];
const PRICES = [0n, 1n, 2n, 3n, 5n, 10n, 100n, 200n, 300n, 999_999n, MAX_MINOR];
const LATENCIES = [null, null, 0, 0.5, 1, 1.5, 2, 10, 100, 100.25, 1000, 3_600_000];
/** (verified, status, ratings): equal reputations on purpose (none = 3,3,3 = 0.5; 5 twice) */
const SELLERS: Array<[boolean, string, number[]]> = [
  [true, 'active', []], [true, 'active', [5]], [true, 'active', [5]], [true, 'active', [1, 1]], [true, 'active', [5, 5, 5, 5]],
  [true, 'active', [3, 3, 3]], [true, 'active', [2, 2]], [true, 'active', [4, 4, 4, 4, 4, 4, 4, 4, 4, 4]], [true, 'active', [1, 5]],
  [true, 'active', [5, 5, 1, 2]], [true, 'active', []], [true, 'active', [4]],
  [false, 'pending_verification', [5, 5]], [true, 'suspended', [5, 5, 5]], [false, 'active', []],
];
const LISTINGS = 1500;
/** listings of one seller priced 1,000,000 to 1,000,399 in category "ties", and one priced 1 */
const TIES = 400;

let dir: string;
let store: SqliteStore;
/** as shipped: up to SCORE_ALL_UP_TO listings scored in JavaScript, the store ordering larger sets */
let discovery: DiscoveryService;
/** the store orders every search without a query, however few listings pass, and returns one listing past the page at first */
let storeOrdered: DiscoveryService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentpay-discovery-scale-'));
  store = new SqliteStore({ path: join(dir, 'test.db') });
  const ctx = { store, clock: new ManualClock(1_000_000), ids: new SequentialIds() };
  discovery = new DiscoveryService(ctx);
  storeOrdered = new DiscoveryService(ctx, { scoreAllUpTo: 0, edge: 1 });
  await store.tx(async (r) => {
    const now = ctx.clock.now();
    const sellers: string[] = [];
    for (const [verified, status, stars] of SELLERS) {
      const id = randomId('prv');
      await r.tenants.insert({ id, kind: 'provider', name: `Seller ${id}`, email: null, website: null, status, verified, settlementWalletId: null, createdAt: now, updatedAt: now });
      for (const rating of stars) {
        const tx = randomId('txn');
        await r.ratings.insert({ id: `rat_${tx}`, providerId: id, transactionId: tx, walletId: 'wal_x', workspaceId: 'wsp_x', agentId: null, rating, createdAt: now });
      }
      sellers.push(id);
    }
    const listing = async (o: { providerId: string; priceMinor: bigint; latencyP50Ms: number | null; category: string; text: string; deprecated?: boolean; protocol?: 'rest' | 'mcp' }) => {
      const id = randomId('cap');
      const versionId = randomId('ver');
      const protocol = o.protocol ?? 'rest';
      const tags = o.text.split(' ').slice(0, 2);
      const c = {
        id, providerId: o.providerId, name: o.text.split(' ')[0]!, description: o.text, protocol, priceMinor: o.priceMinor, currency: 'USD',
        category: o.category, tags, schema: rand() < 0.5 ? { type: 'object' } : null, latencyP50Ms: o.latencyP50Ms,
        toolName: protocol === 'mcp' ? 'tool' : null, metering: null, status: o.deprecated ? 'deprecated' as const : 'active' as const,
        currentVersionId: versionId, createdAt: now, updatedAt: now, deprecatedAt: o.deprecated ? now : null,
      };
      await r.capabilities.insert(c);
      const address = rand() < 0.8 ? { kind: 'url' as const, url: `https://s.example.com/${id}` } : { kind: 'package' as const, command: 'npx', args: ['-y', '@e/t@1.0.0'], version: '1.0.0' };
      await r.capabilityVersions.insert({ id: versionId, capabilityId: id, version: '1', endpoint: address.kind === 'url' ? address.url : null, address, schema: c.schema, hash: `sha256:${id}`, createdAt: now });
      await r.capabilitySearch.upsert({ capabilityId: id, name: c.name, description: c.description, tags, category: c.category });
    };
    for (let i = 0; i < LISTINGS; i++) {
      // prices from a short list (exact ties) or close to each other (ties after rounding)
      const priceMinor = rand() < 0.7 ? pick(PRICES) : 1_000_000n + BigInt(Math.floor(rand() * 50));
      const latencyP50Ms = rand() < 0.8 ? pick(LATENCIES) : Math.floor(rand() * 400) + rand();
      // a few words from a short list: many listings share a text, so BM25 ties too
      const text = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(WORDS)).join(' ');
      await listing({ providerId: pick(sellers), priceMinor, latencyP50Ms, category: pick(CATEGORIES), text, deprecated: rand() < 0.08, protocol: rand() < 0.3 ? 'mcp' : 'rest' });
    }
    const order = Array.from({ length: TIES }, (_, i) => i).sort(() => rand() - 0.5);
    for (const i of order) await listing({ providerId: sellers[1]!, priceMinor: 1_000_000n + BigInt(i), latencyP50Ms: null, category: 'ties', text: 'same tool' });
    await listing({ providerId: sellers[0]!, priceMinor: 1n, latencyP50Ms: 5, category: 'ties', text: 'cheap tool' });
  });
}, 120_000);

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The reference and both ways of ranking on one search: the same results, order, scores and breakdowns. */
async function expectSame(filters: SearchFilters) {
  const expected = await referenceSearch(store, filters);
  expect(await discovery.search(filters), JSON.stringify(filters)).toEqual(expected);
  expect(await storeOrdered.search(filters), `store-ordered ${JSON.stringify(filters)}`).toEqual(expected);
  return expected.results;
}

const QUERIES = [undefined, '', '"*()^', 'red', 'blue green', 'red blue green fast slow', 'tool', 'sam', 'cheap', 'nomatchword'];
const LIMITS = [undefined, 1, 2, 3, 7, 20, 50, 100, 1000];

describe('DiscoveryService.search on a varied catalogue', () => {
  it('returns the reference results for every limit, with and without a query, unfiltered', async () => {
    let shown = 0;
    for (const query of QUERIES) {
      for (const limit of LIMITS) shown += (await expectSame({ ...(query !== undefined ? { query } : {}), ...(limit !== undefined ? { limit } : {}) })).length;
    }
    expect(shown).toBeGreaterThan(1000);
  }, 120_000);

  it('returns the reference results for every filter combination drawn', async () => {
    const categories = [undefined, 'alpha', 'Alpha', 'gamma', 'ties', 'none'];
    const protocols = [undefined, 'rest', 'mcp'] as const;
    const prices = [undefined, '0', '1', '3', '300', '999999', '1000010', '1000000000000000', '99999999999999999'];
    const latencies = [undefined, 0, 0.5, 1, 100.25, 1000, 1e7];
    let nonEmpty = 0;
    for (let i = 0; i < 250; i++) {
      const f: SearchFilters = {};
      const query = pick(QUERIES);
      if (query !== undefined) f.query = query;
      const category = pick(categories);
      if (category !== undefined) f.category = category;
      const protocol = pick(protocols);
      if (protocol !== undefined) f.protocol = protocol;
      const maxPriceMinor = pick(prices);
      if (maxPriceMinor !== undefined) f.maxPriceMinor = maxPriceMinor;
      const maxLatencyMs = pick(latencies);
      if (maxLatencyMs !== undefined) f.maxLatencyMs = maxLatencyMs;
      const limit = pick(LIMITS);
      if (limit !== undefined) f.limit = limit;
      if ((await expectSame(f)).length > 0) nonEmpty += 1;
    }
    expect(nonEmpty).toBeGreaterThan(100);
  }, 120_000);

  it('breaks ties of rounded scores by id, not by the unrounded score', async () => {
    const byScore = vi.spyOn(Discovery.prototype, 'byScore');
    const all = await expectSame({ category: 'ties', limit: 100 });
    // the store's first answer ended inside the tie, so it was asked for every listing near the page's edge
    expect(byScore.mock.calls.some(([, , take]) => 'minKey' in take)).toBe(true);
    byScore.mockRestore();
    // the cheap one first, then 99 listings whose scores round alike, in id order
    const rest = all.slice(1);
    expect(new Set(rest.map((r) => r.score)).size).toBe(1);
    expect(rest.map((r) => r.capability.id)).toEqual(rest.map((r) => r.capability.id).sort());
    // and the price order (the unrounded one) is not the id order
    expect(rest.map((r) => r.capability.priceMinor)).not.toEqual([...rest.map((r) => r.capability.priceMinor)].sort());
    for (const limit of [1, 2, 5, 37]) await expectSame({ category: 'ties', limit });
  });

  it('stays exact when the store\'s score keys are off by one from ours and its ties come in any order', async () => {
    // a store whose arithmetic differs from JavaScript's as far as the argument in
    // src/domain/market/discovery.ts allows: each key moved by -1, 0 or +1, equal keys in reverse id order
    const original = Discovery.prototype.byScore;
    const shift = (id: string) => (id.charCodeAt(id.length - 1) % 3) - 1;
    const byScore = vi.spyOn(Discovery.prototype, 'byScore').mockImplementation(async function (this: Discovery, filter, inputs, take) {
      const all = (await original.call(this, filter, inputs, { minKey: Number.MIN_SAFE_INTEGER })).map((r) => ({ ...r, key: r.key + shift(r.id) }));
      all.sort((a, b) => b.key - a.key || (a.id < b.id ? 1 : -1));
      return 'limit' in take ? all.slice(0, take.limit) : all.filter((r) => r.key >= take.minKey);
    });
    try {
      for (const limit of LIMITS) await expectSame(limit === undefined ? {} : { limit });
      for (const category of ['alpha', 'ties']) {
        for (const limit of [1, 2, 20, 100]) await expectSame({ category, limit });
      }
      await expectSame({ protocol: 'mcp', maxPriceMinor: '300', limit: 5 });
    } finally {
      byScore.mockRestore();
    }
  });

  it('counts only the best MATCH_CEILING full-text matches, as before', async () => {
    const results = await expectSame({ query: 'red blue green fast slow tool', limit: 100 });
    expect(results).toHaveLength(100);
  });
});
