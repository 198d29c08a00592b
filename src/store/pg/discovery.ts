/**
 * Discovery's ranking queries on PostgreSQL: the same conditions and score as the SQLite ones
 * (src/store/sqlite/discovery.ts, read its notes), in PostgreSQL's SQL.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { DiscoverableFilter } from '../repos/market.js';
import type { DiscoveryRepo, KeyedRankingRow, RankingRow, ScoreInputs } from '../repos/discovery.js';

type Filter = DiscoverableFilter;
type Row = { id: string; provider_id: string; price_minor: string; latency_p50_ms: number | string | null; k?: string };

function conditions(f: Filter): SQL {
  const conds: SQL[] = [sql`c.status = 'active'`];
  if (f.category !== undefined) conds.push(sql`c.category = ${f.category}`);
  if (f.protocol !== undefined) conds.push(sql`c.protocol = ${f.protocol}`);
  if (f.maxPriceMinor !== undefined) conds.push(sql`c.price_minor <= ${f.maxPriceMinor.toString()}::bigint`);
  if (f.maxLatencyMs !== undefined) conds.push(sql`c.latency_p50_ms <= ${f.maxLatencyMs}::float8`);
  // one parameter holding the whole array (drizzle spreads a bare array into a list of parameters)
  if (f.ids) conds.push(sql`c.id = ANY(${sql.param(f.ids)}::text[])`);
  return sql.join(conds, sql` AND `);
}

const SELLERS = sql`JOIN tenants t ON t.id = c.provider_id AND t.status = 'active' AND t.verified = true`;

const toRow = (r: Row): RankingRow => ({
  id: r.id,
  providerId: r.provider_id,
  priceMinor: BigInt(r.price_minor),
  latencyP50Ms: r.latency_p50_ms === null ? null : Number(r.latency_p50_ms),
  sellerVerified: true,
});

export class PgDiscovery implements DiscoveryRepo {
  constructor(private db: NodePgDatabase) {}

  async stats(filter: Omit<Filter, 'ids'>) {
    const r = await this.db.execute<{ n: string; cheapest: string | null; fastest: number | null }>(sql`
      SELECT count(*)::text AS n, min(c.price_minor)::text AS cheapest, min(c.latency_p50_ms) AS fastest
      FROM capabilities c ${SELLERS} WHERE ${conditions(filter)}`);
    const row = r.rows[0]!;
    return { count: Number(row.n), cheapestMinor: row.cheapest === null ? null : BigInt(row.cheapest), fastestMs: row.fastest === null ? null : Number(row.fastest) };
  }

  async rows(filter: Filter, limit?: number) {
    if (filter.ids?.length === 0) return [];
    const r = await this.db.execute<Row>(sql`
      SELECT c.id, c.provider_id, c.price_minor::text AS price_minor, c.latency_p50_ms
      FROM capabilities c ${SELLERS} WHERE ${conditions(filter)}${limit !== undefined ? sql` LIMIT ${limit}` : sql``}`);
    return r.rows.map(toRow);
  }

  async byScore(filter: Omit<Filter, 'ids'>, inputs: ScoreInputs, take: { limit: number } | { minKey: number }) {
    const w = inputs.weights;
    const f = (v: number) => sql`${v}::float8`;
    // term by term in the domain's order, then Math.round(score * 10^4) as floor(x + 0.5)
    const key = sql`floor((((((0.0::float8 + ${f(w.relevance)} * ${f(inputs.relevance)})
      + ${f(w.price)} * (${f(inputs.cheapest)} / greatest(1.0::float8, c.price_minor::float8)))
      + ${f(w.latency)} * (CASE WHEN c.latency_p50_ms IS NULL THEN ${f(inputs.unknownLatency)} ELSE ${f(inputs.fastest)} / greatest(1.0::float8, c.latency_p50_ms) END))
      + ${f(w.reputation)} * coalesce(rated.value::float8, ${f(inputs.otherReputation)}))
      + ${f(w.verification)} * 1) * 10000.0::float8 + 0.5)::bigint`;
    const reputations = JSON.stringify(Object.fromEntries(inputs.reputations));
    const r = await this.db.execute<Row>(sql`
      SELECT * FROM (
        SELECT c.id, c.provider_id, c.price_minor::text AS price_minor, c.latency_p50_ms, (${key})::text AS k
        FROM capabilities c ${SELLERS}
        LEFT JOIN jsonb_each_text(${reputations}::jsonb) AS rated(id, value) ON rated.id = c.provider_id
        WHERE ${conditions(filter)}) ranked
      ${'limit' in take ? sql`` : sql`WHERE k::bigint >= ${take.minKey}`}
      ORDER BY k::bigint DESC, id COLLATE "C" ${'limit' in take ? sql`LIMIT ${take.limit}` : sql``}`);
    return r.rows.map((row): KeyedRankingRow => ({ ...toRow(row), key: Number(row.k) }));
  }

  async ratingSummaries() {
    const r = await this.db.execute<{ provider_id: string; n: string; s: string }>(sql`SELECT provider_id, count(*)::text AS n, sum(rating)::text AS s FROM ratings GROUP BY provider_id`);
    return new Map(r.rows.map((x) => [x.provider_id, { count: Number(x.n), sum: Number(x.s) }]));
  }
}
