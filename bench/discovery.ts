/**
 * What one discovery search costs as the catalogue grows: a real SQLite file with the production
 * schema, filled with `--sizes` active capabilities (default 1,000, 10,000 and 50,000) spread over
 * one seller per 25 listings (a few unverified or suspended), each seller with 0 to 40 ratings.
 * Searches go to DiscoveryService directly (no HTTP), with and without a query and with common
 * filters; prints CPU milliseconds per search (p50 / p99) and how many results came back.
 * `--try-index` adds, after filling, two indexes the schema does not have (TRY_INDEXES): what a
 * migration adding them would gain. `--score-all-up-to N` overrides SCORE_ALL_UP_TO (to tune it).
 *
 *   npx tsx bench/discovery.ts [--sizes 1000,10000,50000] [--seconds 1.5] [--try-index] [--score-all-up-to N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { DiscoveryService, type SearchFilters } from '../src/domain/market/discovery.js';
import { randomIds } from '../src/core/ids.js';
import { systemClock } from '../src/core/clock.js';
import { flagReader } from './lib/flags.js';
import { percentile } from './lib/stats.js';

const { values } = parseArgs({ options: { sizes: { type: 'string' }, seconds: { type: 'string' }, 'try-index': { type: 'boolean' }, 'score-all-up-to': { type: 'string' } } });
const { opt, num } = flagReader(values);
const SIZES = opt('sizes', '1000,10000,50000').split(',').map(Number);
const SECONDS = num('seconds', 1.5);
const PER_SELLER = 25;
const CATEGORIES = Array.from({ length: 20 }, (_, i) => `cat${i}`);
/** covering indexes for discovery's scans and for the sellers' rating summaries */
const TRY_INDEXES = [
  'CREATE INDEX bench_capabilities_discovery ON capabilities (status, category, protocol, price_minor, latency_p50_ms, provider_id, id)',
  'CREATE INDEX bench_ratings_summary ON ratings (provider_id, rating)',
];

/** A small deterministic PRNG (mulberry32), so every run builds the same catalogue. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// a vocabulary whose first words are common and last words rare (Zipf-like draw below)
const VOCAB = ['data', 'text', 'weather', 'forecast', 'image', 'convert', 'summarize', 'translate', 'search', 'extract',
  'pdf', 'audio', 'video', 'email', 'calendar', 'invoice', 'geocode', 'stock', 'price', 'news',
  ...Array.from({ length: 180 }, (_, i) => `word${i}`)];

async function fill(store: SqliteStore, n: number) {
  const rand = prng(n);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const word = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(VOCAB.length * rand() ** 3))]!;
  const now = systemClock.now();
  // a large page cache only while filling (the full-text index touches pages all over); searches run with the shipped default
  const shipped = store.raw.pragma('cache_size', { simple: true });
  store.raw.pragma('cache_size = -512000');
  const sellers: string[] = [];
  const indexDoc = store.raw.prepare('INSERT INTO capability_search (capability_id, name, description, tags, category) VALUES (?, ?, ?, ?, ?)');
  await store.tx(async (r) => {
    for (let s = 0; s < Math.ceil(n / PER_SELLER); s++) {
      const id = randomIds.next('provider');
      // one seller in 20 unverified, one in 40 suspended: their listings are stored but never shown
      const verified = s % 20 !== 7;
      const status = s % 40 === 3 ? 'suspended' : verified ? 'active' : 'pending_verification';
      await r.tenants.insert({ id, kind: 'provider', name: `Seller ${s}`, email: null, website: null, status, verified, settlementWalletId: null, createdAt: now, updatedAt: now });
      for (let k = Math.floor(rand() * 41); k > 0; k--) {
        const tx = randomIds.next('transaction');
        await r.ratings.insert({ id: `rat_${tx}`, providerId: id, transactionId: tx, walletId: 'wal_bench', workspaceId: 'wsp_bench', agentId: null, rating: 1 + Math.floor(rand() * 5), createdAt: now });
      }
      sellers.push(id);
    }
  });
  for (let from = 0; from < n; from += 5000) await store.tx(async (r) => {
    for (let i = from; i < Math.min(n, from + 5000); i++) {
      const id = randomIds.next('capability');
      const versionId = randomIds.next('capabilityVersion');
      const protocol = rand() < 0.3 ? 'mcp' as const : 'rest' as const;
      const tags = [word(), word()];
      const description = Array.from({ length: 12 }, word).join(' ');
      const category = pick(CATEGORIES);
      const name = `${word()} ${word()} ${i}`;
      const schema = { type: 'object', properties: { input: { type: 'string', description: 'what to work on' } } };
      await r.capabilities.insert({
        id, providerId: sellers[Math.floor(i / PER_SELLER)]!, name, description, protocol,
        priceMinor: BigInt(1 + Math.floor(rand() ** 2 * 10_000)), currency: 'USD', category, tags, schema,
        latencyP50Ms: rand() < 0.2 ? null : 1 + Math.floor(rand() * 2000), toolName: protocol === 'mcp' ? 'tool' : null, metering: null,
        status: rand() < 0.05 ? 'deprecated' : 'active', currentVersionId: versionId, createdAt: now, updatedAt: now, deprecatedAt: null,
      });
      await r.capabilityVersions.insert({ id: versionId, capabilityId: id, version: '1', endpoint: `https://seller.example.com/${i}`, address: { kind: 'url', url: `https://seller.example.com/${i}` }, schema, hash: `sha256:${i}`, createdAt: now });
      // straight into the index: capabilitySearch.upsert first deletes by capability_id, an unindexed
      // column of the FTS5 table, so every upsert scans the whole index (fine for one publish, quadratic here)
      indexDoc.run(id, name, description, tags.join(' '), category);
    }
  });
  store.raw.pragma(`cache_size = ${shipped}`);
}

const SEARCHES: Array<[string, SearchFilters]> = [
  ['no body', {}],
  ['category', { category: 'cat3' }],
  ['category + maxPrice 2000', { category: 'cat3', maxPriceMinor: '2000' }],
  ['mcp + maxLatency 500', { protocol: 'mcp', maxLatencyMs: 500 }],
  ['maxPrice 500, limit 100', { maxPriceMinor: '500', limit: 100 }],
  ['query "weather forecast"', { query: 'weather forecast' }],
  ['query rare word', { query: 'word150' }],
  ['query + category', { query: 'data text', category: 'cat3' }],
];

/** CPU ms per search, every sample kept; runs for SECONDS of wall time after a short warm-up. */
async function measure(discovery: DiscoveryService, filters: SearchFilters) {
  for (let i = 0; i < 3; i++) await discovery.search(filters);
  const samples: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  let results = 0;
  while (performance.now() < until || samples.length < 5) {
    const before = process.cpuUsage();
    results = (await discovery.search(filters)).results.length;
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return { runs: samples.length, results, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const fmt = (x: number) => x.toFixed(2).padStart(8);
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-bench-discovery-'));
  const store = new SqliteStore({ path: join(dir, 'bench.db') });
  try {
    const filling = performance.now();
    await fill(store, n);
    if (values['try-index']) for (const sql of TRY_INDEXES) store.raw.exec(sql);
    console.log(`\nfilled in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
    const scoreAllUpTo = values['score-all-up-to'] === undefined ? undefined : Number(values['score-all-up-to']);
    const discovery = new DiscoveryService({ store, clock: systemClock, ids: randomIds }, scoreAllUpTo === undefined ? {} : { scoreAllUpTo });
    console.log(`\n${n} capabilities (${Math.ceil(n / PER_SELLER)} sellers)${values['try-index'] ? ', with TRY_INDEXES' : ''}: CPU ms per search`);
    console.log(`${'search'.padEnd(28)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}  results  runs`);
    for (const [name, filters] of SEARCHES) {
      try {
        const m = await measure(discovery, filters);
        console.log(`${name.padEnd(28)} ${fmt(m.p50)} ${fmt(m.p99)}  ${String(m.results).padStart(7)}  ${m.runs}`);
      } catch (e) {
        console.log(`${name.padEnd(28)} fails: ${(e as Error).message}`);
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
