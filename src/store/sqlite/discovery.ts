/**
 * Discovery's ranking queries as plain SQL on cached statements: they read only the few columns
 * a score needs (no texts, schema or address: nothing to parse) and keep the scan in SQLite. The
 * conditions are those of `discoverable()` in market.ts (active listing, active and verified
 * seller, the filter); the test test/market/discovery-scale.test.ts holds them to the same results.
 */
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { DiscoverableFilter } from '../repos/market.js';
import type { DiscoveryRepo, KeyedRankingRow, RankingRow, ScoreInputs } from '../repos/discovery.js';

type Filter = DiscoverableFilter;
type Row = [id: string, providerId: string, price: bigint, latency: bigint | number | null, verified: bigint];

/**
 * The listings with their sellers. Given ids (one JSON array, no repeats), they are looked up one
 * by one by key (CROSS JOIN keeps that order: without it SQLite scans every listing and checks it
 * against the list, 40 to 60 ms at 50,000 listings instead of a few). Otherwise every listing is
 * read, and its seller is checked against the sellers that may show listings, gathered once
 * (`sellers`, see WITH_SELLERS): one lookup per listing instead of two in `tenants`, which halved
 * the pass at 50,000 listings. Both ways are the join of `discoverable()` on a unique key.
 */
function from(f: Filter): string {
  return f.ids
    ? `FROM json_each(@ids) AS wanted CROSS JOIN capabilities c ON c.id = wanted.value JOIN tenants t ON t.id = c.provider_id AND t.status = 'active' AND t.verified = 1`
    : 'FROM capabilities c JOIN sellers s ON s.id = c.provider_id';
}

/** The sellers whose listings discovery may show; with `rated`, each with its reputation. */
const WITH_SELLERS = `WITH sellers(id) AS MATERIALIZED (SELECT id FROM tenants WHERE status = 'active' AND verified = 1)`;
const WITH_RATED_SELLERS = `WITH rated(id, value) AS MATERIALIZED (SELECT key, value FROM json_each(@reputations)),
  sellers(id, reputation) AS MATERIALIZED (
    SELECT t.id, coalesce(rated.value, @otherReputation) FROM tenants t LEFT JOIN rated ON rated.id = t.id
    WHERE t.status = 'active' AND t.verified = 1)`;

/**
 * The filter's conditions on the listing, with named parameters. Most listings are active:
 * likelihood() tells the planner so (it is the same condition). Without it SQLite reads every
 * listing through the index on status, 80 ms instead of 30 for a pass over 50,000, where an index
 * that starts with status and a filtered column would still be used.
 */
function conditions(f: Filter): string {
  const conds = [`likelihood(c.status = 'active', 0.9)`];
  if (f.category !== undefined) conds.push('c.category = @category');
  if (f.protocol !== undefined) conds.push('c.protocol = @protocol');
  if (f.maxPriceMinor !== undefined) conds.push('c.price_minor <= @maxPriceMinor');
  // NULL latency never satisfies the comparison: an unknown latency is not under any ceiling
  if (f.maxLatencyMs !== undefined) conds.push('c.latency_p50_ms <= @maxLatencyMs');
  return conds.join(' AND ');
}

function params(f: Filter): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  if (f.ids) p.ids = JSON.stringify(f.ids);
  if (f.category !== undefined) p.category = f.category;
  if (f.protocol !== undefined) p.protocol = f.protocol;
  if (f.maxPriceMinor !== undefined) p.maxPriceMinor = f.maxPriceMinor;
  if (f.maxLatencyMs !== undefined) p.maxLatencyMs = f.maxLatencyMs;
  return p;
}

/** Which filters are set: one cached statement per shape. */
const shape = (f: Filter) => [f.ids, f.category, f.protocol, f.maxPriceMinor, f.maxLatencyMs].map((v) => (v === undefined ? 0 : 1)).join('');

/** a seller in `sellers` is verified, as is every seller that passes the ids' join */
const COLUMNS = 'c.id, c.provider_id, c.price_minor, c.latency_p50_ms, 1';

/**
 * The score of src/domain/market/discovery.ts without a query, term by term in the same order, then
 * Math.round(score * 10^4) as floor(x + 0.5) (the same for x >= 0.5; every score here is at least
 * 0.05 * 10^4). The weights and scales are bound as doubles and the reputations arrive as JSON
 * numbers, and SQLite computes in IEEE doubles as JavaScript does, so the key is normally ours
 * exactly; the domain does not rely on that: it scores what this returns again and allows the
 * key a difference of one (see the top of src/domain/market/discovery.ts).
 */
const SCORE_KEY = `CAST((((((0.0 + @wRelevance * @relevance)
  + @wPrice * (@cheapest / max(1.0, c.price_minor)))
  + @wLatency * (CASE WHEN c.latency_p50_ms IS NULL THEN @unknownLatency ELSE @fastest / max(1.0, c.latency_p50_ms) END))
  + @wReputation * s.reputation)
  + @wVerification * 1) * 10000.0 + 0.5 AS INTEGER)`;

const toRow = (r: Row): RankingRow => ({
  id: r[0],
  providerId: r[1],
  priceMinor: BigInt(r[2]),
  latencyP50Ms: r[3] === null ? null : Number(r[3]),
  sellerVerified: Number(r[4]) !== 0,
});

export class SqliteDiscovery implements DiscoveryRepo {
  private readonly raw: Database.Database;
  private readonly cache = new Map<string, Database.Statement>();

  constructor(db: BetterSQLite3Database) {
    this.raw = (db as unknown as { $client: Database.Database }).$client;
  }

  private statement(id: string, sql: () => string): Database.Statement {
    let s = this.cache.get(id);
    if (!s) {
      s = this.raw.prepare(sql()).raw(true);
      this.cache.set(id, s);
    }
    return s;
  }

  async stats(filter: Omit<Filter, 'ids'>) {
    const s = this.statement(`stats:${shape(filter)}`, () =>
      `${WITH_SELLERS} SELECT count(*), min(c.price_minor), min(c.latency_p50_ms) ${from(filter)} WHERE ${conditions(filter)}`);
    const [count, cheapest, fastest] = s.get(params(filter)) as [bigint, bigint | null, bigint | number | null];
    return { count: Number(count), cheapestMinor: cheapest === null ? null : BigInt(cheapest), fastestMs: fastest === null ? null : Number(fastest) };
  }

  async rows(filter: Filter, limit?: number) {
    if (filter.ids?.length === 0) return [];
    const limited = limit !== undefined;
    const s = this.statement(`rows:${limited}:${shape(filter)}`, () =>
      `${filter.ids ? '' : WITH_SELLERS} SELECT ${COLUMNS} ${from(filter)} WHERE ${conditions(filter)}${limited ? ' LIMIT @limit' : ''}`);
    return (s.all({ ...params(filter), ...(limited ? { limit: BigInt(limit) } : {}) }) as Row[]).map(toRow);
  }

  async byScore(filter: Omit<Filter, 'ids'>, inputs: ScoreInputs, take: { limit: number } | { minKey: number }) {
    const byLimit = 'limit' in take;
    const s = this.statement(`score:${byLimit ? 'limit' : 'min'}:${shape(filter)}`, () => `${WITH_RATED_SELLERS}
      SELECT * FROM (SELECT ${COLUMNS}, ${SCORE_KEY} AS k ${from(filter)} WHERE ${conditions(filter)})
      ${byLimit ? '' : 'WHERE k >= @minKey'} ORDER BY k DESC, id ${byLimit ? 'LIMIT @limit' : ''}`);
    const w = inputs.weights;
    const rows = s.all({
      ...params(filter),
      // integers, not doubles: LIMIT takes an integer
      ...(byLimit ? { limit: BigInt(take.limit) } : { minKey: BigInt(take.minKey) }),
      reputations: JSON.stringify(Object.fromEntries(inputs.reputations)),
      wRelevance: w.relevance, wPrice: w.price, wLatency: w.latency, wReputation: w.reputation, wVerification: w.verification,
      relevance: inputs.relevance, cheapest: inputs.cheapest, fastest: inputs.fastest, unknownLatency: inputs.unknownLatency,
      otherReputation: inputs.otherReputation,
    }) as Array<[...Row, bigint]>;
    return rows.map((r): KeyedRankingRow => ({ ...toRow(r as unknown as Row), key: Number(r[5]) }));
  }

  async ratingSummaries() {
    const s = this.statement('ratings', () => 'SELECT provider_id, count(*), sum(rating) FROM ratings GROUP BY provider_id');
    return new Map((s.all() as Array<[string, bigint, bigint]>).map(([id, count, sum]) => [id, { count: Number(count), sum: Number(sum) }]));
  }
}
