/**
 * Discovery's ranking queries: they read only the few columns a score needs (no texts, schema or
 * address: nothing to parse) and keep the scan in the database. The conditions are those of
 * `discoverable()` in ./market.ts (active listing, active and verified seller, the filter);
 * test/market/discovery-scale.test.ts holds them to the same results.
 *
 * Dialect switch, ranking: one query per method, with the pieces where the two databases differ
 * named below (`sellers`, `scoreKey`). SQLite's planner is steered (a seller table gathered once,
 * a list of ids looked up one by one, `likelihood`); PostgreSQL needs its number types spelled out.
 */
import type { DiscoverableFilter } from '../repos/market.js';
import type { KeyedRankingRow, RankingRow, ScoreInputs } from '../repos/discovery.js';
import type { Sql } from './sql.js';

type Filter = DiscoverableFilter;
/** SQL text and its values, in the text's order */
type Part = { text: string; values: unknown[] };

const ACTIVE_SELLER = `t.status = 'active' AND t.verified = ?`;

/**
 * The filter's conditions on the listing. SQLite: most listings are active, and likelihood() tells
 * the planner so (the same condition); without it SQLite reads every listing through the index on
 * status, 80 ms instead of 30 for a pass over 50,000.
 */
function conditions(c: Sql, f: Filter): Part {
  const pg = c.dialect === 'pg';
  const conds = [pg ? `c.status = 'active'` : `likelihood(c.status = 'active', 0.9)`];
  const values: unknown[] = [];
  const add = (cond: string, v: unknown) => { conds.push(cond); values.push(v); };
  if (f.category !== undefined) add('c.category = ?', f.category);
  if (f.protocol !== undefined) add('c.protocol = ?', f.protocol);
  if (f.maxPriceMinor !== undefined) add('c.price_minor <= ?', f.maxPriceMinor);
  // NULL latency never satisfies the comparison: an unknown latency is not under any ceiling
  if (f.maxLatencyMs !== undefined) add(`c.latency_p50_ms <= ?${pg ? '::float8' : ''}`, f.maxLatencyMs);
  if (pg && f.ids) add(c.anyOf('c.id'), c.list(f.ids));
  return { text: conds.join(' AND '), values };
}

/**
 * Dialect switch, ranking: the listings joined to the sellers that may show them (`WITH` clause,
 * `FROM` clause). PostgreSQL joins `tenants` as `discoverable()` does. SQLite, given ids (one JSON
 * array, no repeats), looks them up one by one by key (CROSS JOIN keeps that order: without it
 * SQLite scans every listing and checks it against the list, 40 to 60 ms at 50,000 listings
 * instead of a few); otherwise it checks each listing's seller against the sellers that may show
 * listings, gathered once (`sellers`): one lookup per listing instead of two in `tenants`, which
 * halved the pass at 50,000 listings. With `reputations`, each seller also carries its reputation
 * (`s.reputation`; sellers left out have `otherReputation`).
 */
function sellers(c: Sql, f: Filter, reputations?: Part): { with: Part; from: Part } {
  if (c.dialect === 'pg') {
    return { with: { text: '', values: [] }, from: { text: `FROM capabilities c JOIN tenants t ON t.id = c.provider_id AND ${ACTIVE_SELLER}`, values: [true] } };
  }
  if (f.ids) {
    return {
      with: { text: '', values: [] },
      from: { text: `FROM json_each(?) AS wanted CROSS JOIN capabilities c ON c.id = wanted.value JOIN tenants t ON t.id = c.provider_id AND ${ACTIVE_SELLER}`, values: [JSON.stringify(f.ids), true] },
    };
  }
  const from = { text: 'FROM capabilities c JOIN sellers s ON s.id = c.provider_id', values: [] };
  if (!reputations) return { with: { text: `WITH sellers(id) AS MATERIALIZED (SELECT id FROM tenants t WHERE ${ACTIVE_SELLER})`, values: [true] }, from };
  return {
    with: {
      text: `WITH rated(id, value) AS MATERIALIZED (SELECT key, value FROM json_each(?)),
        sellers(id, reputation) AS MATERIALIZED (
          SELECT t.id, coalesce(rated.value, ?) FROM tenants t LEFT JOIN rated ON rated.id = t.id WHERE ${ACTIVE_SELLER})`,
      values: [...reputations.values, true],
    },
    from,
  };
}

/**
 * Dialect switch, ranking: the score of src/domain/market/discovery.ts without a query, term by
 * term in the same order, as Math.round(score * 10^4) computed as floor(x + 0.5) (the same for
 * x >= 0.5; every score here is at least 0.05 * 10^4), in IEEE doubles as JavaScript computes
 * (SQLite's REAL; PostgreSQL's float8, spelled out, and greatest() for max()), so the key is
 * normally the domain's exactly; the domain does not rely on that: it scores what this returns
 * again and allows the key a difference of one (see the top of src/domain/market/discovery.ts).
 * SQLite reads the seller's reputation from `sellers`, PostgreSQL from the JSON of reputations.
 */
function scoreKey(c: Sql, inputs: ScoreInputs): { key: Part; reputations: Part } {
  const w = inputs.weights;
  const pg = c.dialect === 'pg';
  const d = pg ? '::float8' : '';
  const max = pg ? 'greatest' : 'max';
  const json = JSON.stringify(Object.fromEntries(inputs.reputations));
  const reputation = pg ? `coalesce(rated.value::float8, ?${d})` : 's.reputation';
  const sum = `(((((0.0${d} + ?${d} * ?${d})
    + ?${d} * (?${d} / ${max}(1.0${d}, c.price_minor${d})))
    + ?${d} * (CASE WHEN c.latency_p50_ms IS NULL THEN ?${d} ELSE ?${d} / ${max}(1.0${d}, c.latency_p50_ms) END))
    + ?${d} * ${reputation})
    + ?${d} * 1) * 10000.0${d} + 0.5`;
  const values = [w.relevance, inputs.relevance, w.price, inputs.cheapest, w.latency, inputs.unknownLatency, inputs.fastest, w.reputation,
    ...(pg ? [inputs.otherReputation] : []), w.verification];
  return {
    key: { text: pg ? `floor(${sum})::bigint` : `CAST(${sum} AS INTEGER)`, values },
    reputations: { text: '', values: pg ? [json] : [json, inputs.otherReputation] },
  };
}

/** the columns of a RankingRow; every seller that passes `sellers` is verified */
const COLUMNS = 'c.id, c.provider_id, c.price_minor, c.latency_p50_ms';

const toRow = (r: unknown[]): RankingRow => ({
  id: r[0] as string,
  providerId: r[1] as string,
  priceMinor: BigInt(r[2] as bigint | string),
  latencyP50Ms: r[3] === null ? null : Number(r[3]),
  sellerVerified: true,
});

const orNull = <T>(v: unknown, f: (v: never) => T): T | null => (v === null || v === undefined ? null : f(v as never));

export class Discovery {
  constructor(private readonly c: Sql) {}

  async stats(filter: Omit<Filter, 'ids'>) {
    const s = sellers(this.c, filter);
    const cond = conditions(this.c, filter);
    const [count, cheapest, fastest] = (await this.c.one(`${s.with.text} SELECT count(*), min(c.price_minor), min(c.latency_p50_ms) ${s.from.text} WHERE ${cond.text}`,
      [...s.with.values, ...s.from.values, ...cond.values]))!;
    return { count: Number(count), cheapestMinor: orNull(cheapest, BigInt), fastestMs: orNull(fastest, Number) };
  }

  /** the ranking rows of the listings discovery may show that pass the filter, in no set order; at most `limit` */
  async rows(filter: Filter, limit?: number) {
    if (filter.ids?.length === 0) return [];
    const s = sellers(this.c, filter);
    const cond = conditions(this.c, filter);
    const rows = await this.c.rows(`${s.with.text} SELECT ${COLUMNS} ${s.from.text} WHERE ${cond.text}${limit === undefined ? '' : ' LIMIT ?'}`,
      [...s.with.values, ...s.from.values, ...cond.values, ...(limit === undefined ? [] : [BigInt(limit)])]);
    return rows.map(toRow);
  }

  /**
   * The listings that pass the filter by their score key, highest first, equal keys by id: the
   * first `limit`, or with `minKey` every one whose key is at least that.
   */
  async byScore(filter: Omit<Filter, 'ids'>, inputs: ScoreInputs, take: { limit: number } | { minKey: number }) {
    const pg = this.c.dialect === 'pg';
    const score = scoreKey(this.c, inputs);
    const s = sellers(this.c, filter, score.reputations);
    const cond = conditions(this.c, filter);
    const rated = pg ? 'LEFT JOIN jsonb_each_text(?::jsonb) AS rated(id, value) ON rated.id = c.provider_id' : '';
    const byLimit = 'limit' in take;
    const rows = await this.c.rows(`${s.with.text}
      SELECT * FROM (SELECT ${COLUMNS}, ${score.key.text} AS k ${s.from.text} ${rated} WHERE ${cond.text}) AS ranked
      ${byLimit ? '' : 'WHERE k >= ?'} ORDER BY k DESC, id${pg ? ' COLLATE "C"' : ''} ${byLimit ? 'LIMIT ?' : ''}`, [
      ...s.with.values, ...score.key.values, ...s.from.values, ...(pg ? score.reputations.values : []), ...cond.values,
      // integers, not doubles: LIMIT takes an integer
      byLimit ? BigInt(take.limit) : BigInt(take.minKey),
    ]);
    return rows.map((r): KeyedRankingRow => ({ ...toRow(r), key: Number(r[4]) }));
  }

  /** count and sum of the ratings of every seller that has any */
  async ratingSummaries() {
    const rows = await this.c.rows('SELECT provider_id, count(*), sum(rating) FROM ratings GROUP BY provider_id');
    return new Map(rows.map((r) => [r[0] as string, { count: Number(r[1]), sum: Number(r[2]) }]));
  }
}
