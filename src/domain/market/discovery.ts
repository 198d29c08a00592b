/**
 * Discovery: buyers search the active capabilities of verified, unsuspended sellers.
 *
 * Candidates: every discoverable capability that passes the filters (category exact, protocol,
 * price ceiling, latency ceiling). With a query, only those the full-text index matches, best
 * BM25 first, up to MATCH_CEILING of them (counted among those that pass the rest).
 *
 * Each signal is normalised to 0..1 within the candidate set, then weighted (WEIGHTS):
 * - relevance:    BM25 of the query against name, description, tags and category, as a share
 *                 of the best match's (best = 1); without a query 0.5 for all (neutral)
 * - price:        cheapest price / this price (cheapest = 1, twice the price = 0.5)
 * - latency:      fastest advertised p50 / this p50 (fastest = 1; under 1 ms counts as 1 ms); unknown = 0.5 (neutral)
 * - reputation:   the seller's reputation (src/domain/market/reputation.ts)
 * - verification: 1 for a verified seller; every discoverable seller is verified today, so it
 *                 only matters once unverified listings can be shown
 * Scores and signals are rounded to 4 decimals; equal scores are ordered by capability id.
 * Amounts are divided as numbers only to rank: they are exact below 2^53, and MAX_MINOR is 10^15.
 *
 * How, so that a search does not load the catalogue (numbers in docs/performance.md, "Discovery"):
 * only the few columns a score needs are read (no texts, schema or address to parse), and only
 * the page gets its full listing, version and seller.
 * - With a query: the full-text match picks at most MATCH_CEILING listings, and all of them are
 *   scored here.
 * - Without one, up to SCORE_ALL_UP_TO listings are scored here too. Beyond that the store orders
 *   the listings by the same score (src/store/sql/discovery.ts): exact SQL ordering is not
 *   needed, nor relied on. Its key, Math.round(score * 10^4), comes from the same formula on the
 *   same numbers, so it is at most 1 away from ours (float rounding, far below half a step). Let k
 *   be the store's key of its `limit`-th listing: the `limit` listings it ranks first have keys of
 *   ours of at least k - 1, so a listing whose store key is below k - 2 has one of ours below
 *   k - 1 and comes after all of them; it cannot be on the page. The listings with a store key of
 *   at least k - 2 (the page plus those near its edge: ties and near-ties) are scored here, and
 *   their order, scores and breakdowns are computed exactly as for the others.
 */
import { MAX_MINOR, parseMinor } from '../../core/money.js';
import type { Repos } from '../../store/store.js';
import type { Capability, DiscoverableFilter } from '../../store/repos/market.js';
import type { RankingRow, ScoreInputs } from '../../store/repos/discovery.js';
import type { DomainContext } from '../platform/context.js';
import { reputationOf, reputations } from './reputation.js';
import { providerSummary } from './providers.js';
import { capabilityView } from './capabilities.js';
import { MAX_DISCOVERY_LIMIT, type DiscoveryFilters } from 'agentpay-sdk/contract';

export const WEIGHTS = { relevance: 0.5, price: 0.2, latency: 0.1, reputation: 0.15, verification: 0.05 } as const;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = MAX_DISCOVERY_LIMIT;
/** how many full-text matches are considered (among the listings that pass the filters) */
export const MATCH_CEILING = 1000;
/**
 * Without a query, up to this many listings are read and scored here; more are ordered by the store
 * first. Reading a listing's ranking row costs about 3 us, a pass over 50,000 listings 30 to 60 ms
 * (docs/performance.md), and ordering by the store takes two passes.
 */
export const SCORE_ALL_UP_TO = 5000;
/** how many listings past the page the store returns at first: enough for the edge of the page unless it is a long tie */
export const EDGE = 100;
const NEUTRAL = 0.5;

/** The search request: the contract's body (agentpay-sdk/contract) without the ignored tenant ids. */
export type SearchFilters = DiscoveryFilters;

export type Signals = Record<keyof typeof WEIGHTS, number>;

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** A price ceiling; one above the largest amount any listing can have is no ceiling, not an error. */
function priceCeiling(value: unknown): bigint {
  if (typeof value === 'string' && /^[0-9]+$/.test(value) && BigInt(value) > MAX_MINOR) return MAX_MINOR;
  return parseMinor(value, 'maxPriceMinor', { allowZero: true });
}

/** A query with no letters or digits searches nothing, so it filters nothing either. */
const hasWords = (q: string | undefined): q is string => q !== undefined && /[\p{L}\p{N}]/u.test(q);

/** A listing as discovery shows it: the capability's view without its seller id and times. */
export function discoveryCapabilityView(c: Capability) {
  const { providerId: _p, createdAt: _c, updatedAt: _u, ...listing } = capabilityView(c);
  return listing;
}

/** What a signal is relative to: the best BM25, the cheapest price and the fastest latency among the candidates. */
interface Scale {
  bm25: Map<string, number> | undefined;
  bestRelevance: number;
  cheapest: number;
  fastest: number;
  reputations: ReadonlyMap<string, number>;
}

interface Scored {
  row: RankingRow;
  signals: Signals;
  score: number;
}

/** The scale over a candidate set read whole (loops, not Math.min(...list): spreading a large list overflows the stack). */
function scaleOf(rows: readonly RankingRow[], bm25: Map<string, number> | undefined, reps: ReadonlyMap<string, number>): Scale {
  let bestRelevance = 0;
  let cheapest = Infinity;
  let fastest = Infinity;
  for (const c of rows) {
    if (bm25) bestRelevance = Math.max(bestRelevance, bm25.get(c.id) ?? 0);
    cheapest = Math.min(cheapest, Number(c.priceMinor));
    if (c.latencyP50Ms !== null) fastest = Math.min(fastest, c.latencyP50Ms);
  }
  return { bm25, bestRelevance, ...floors(cheapest, fastest), reputations: reps };
}

/**
 * Prices under 1 minor unit and latencies under 1 ms count as 1: no division by zero, and below a
 * millisecond an advertised median says nothing a buyer could notice. No latency at all: 1.
 */
function floors(cheapest: number, fastest: number) {
  return { cheapest: Math.max(1, cheapest), fastest: Number.isFinite(fastest) ? Math.max(1, fastest) : 1 };
}

function score(row: RankingRow, s: Scale): Scored {
  const signals: Signals = {
    relevance: s.bm25 ? (s.bestRelevance > 0 ? (s.bm25.get(row.id) ?? 0) / s.bestRelevance : 1) : NEUTRAL,
    price: s.cheapest / Math.max(1, Number(row.priceMinor)),
    latency: row.latencyP50Ms === null ? NEUTRAL : s.fastest / Math.max(1, row.latencyP50Ms),
    reputation: s.reputations.get(row.providerId)!,
    verification: row.sellerVerified ? 1 : 0,
  };
  const total = (Object.keys(WEIGHTS) as (keyof Signals)[]).reduce((sum, k) => sum + WEIGHTS[k] * signals[k], 0);
  return { row, signals, score: round4(total) };
}

/** The first `limit` of the rows, best score first, equal scores by capability id. */
function best(rows: readonly RankingRow[], s: Scale, limit: number): Scored[] {
  const scored = rows.map((row) => score(row, s));
  scored.sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0));
  return scored.slice(0, limit);
}

/** For tests, which set them low to have the store order every search without a query, with tight margins. */
export interface DiscoveryOptions {
  /** default SCORE_ALL_UP_TO */
  scoreAllUpTo?: number;
  /** default EDGE */
  edge?: number;
}

export class DiscoveryService {
  private readonly opts: Required<DiscoveryOptions>;

  constructor(private ctx: DomainContext, opts: DiscoveryOptions = {}) {
    this.opts = { scoreAllUpTo: opts.scoreAllUpTo ?? SCORE_ALL_UP_TO, edge: opts.edge ?? EDGE };
  }

  /** `offset`: skip that many of the ranking first (the Bazaar list pages by offset; at most MATCH_CEILING in all) */
  async search(filters: SearchFilters, paging: { offset?: number } = {}) {
    const maxPriceMinor = filters.maxPriceMinor === undefined ? undefined : priceCeiling(filters.maxPriceMinor);
    const offset = Math.min(Math.max(0, Math.floor(paging.offset ?? 0)), MATCH_CEILING);
    const limit = Math.min(Math.max(1, Math.floor(filters.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
    const filter: Omit<DiscoverableFilter, 'ids'> = {
      ...(filters.category !== undefined ? { category: filters.category } : {}),
      ...(filters.protocol !== undefined ? { protocol: filters.protocol } : {}),
      ...(maxPriceMinor !== undefined ? { maxPriceMinor } : {}),
      ...(filters.maxLatencyMs !== undefined ? { maxLatencyMs: filters.maxLatencyMs } : {}),
    };
    return this.ctx.store.read(async (r) => {
      const ranked = hasWords(filters.query) ? await pageForQuery(r, filters.query, filter, offset + limit) : await pageWithoutQuery(r, filter, offset + limit, this.opts);
      return { results: await present(r, ranked.slice(offset)) };
    });
  }
}

/** How many listings pass the filters (without a query): the Bazaar list's `total`. */
export async function countDiscoverable(r: Repos, filters: Pick<SearchFilters, 'protocol'>): Promise<number> {
  return (await r.discovery.stats(filters.protocol !== undefined ? { protocol: filters.protocol } : {})).count;
}

async function pageForQuery(r: Repos, query: string, filter: Omit<DiscoverableFilter, 'ids'>, limit: number): Promise<Scored[]> {
  // the ceiling counts only listings that pass the filters and could be shown
  const matches = await r.capabilitySearch.match(query, MATCH_CEILING, filter);
  if (matches.length === 0) return [];
  // the search's rank is BM25 negated (lower is better, CapabilitySearch.match); flipped so that higher is better
  const bm25 = new Map(matches.map((m) => [m.capabilityId, Math.max(0, -m.rank)]));
  const rows = await r.discovery.rows({ ids: [...bm25.keys()], ...filter });
  const reps = await reputations(r, rows.map((c) => c.providerId));
  return best(rows, scaleOf(rows, bm25, reps), limit);
}

/** Why this returns exactly the page that scoring every listing would: see the top of this file. */
async function pageWithoutQuery(r: Repos, filter: Omit<DiscoverableFilter, 'ids'>, limit: number, opts: Required<DiscoveryOptions>): Promise<Scored[]> {
  // one pass when few pass the filter; when many do, this stops early (after scoreAllUpTo + 1 of them)
  const few = await r.discovery.rows(filter, opts.scoreAllUpTo + 1);
  if (few.length <= opts.scoreAllUpTo) return best(few, scaleOf(few, undefined, await reputations(r, few.map((c) => c.providerId))), limit);
  const stats = await r.discovery.stats(filter);
  if (stats.count === 0) return [];
  const { cheapest, fastest } = floors(Number(stats.cheapestMinor), stats.fastestMs ?? Infinity);
  const rated = new Map([...(await r.discovery.ratingSummaries())].map(([id, summary]) => [id, reputationOf(summary)]));
  const inputs: ScoreInputs = {
    weights: WEIGHTS, relevance: NEUTRAL, cheapest, fastest, unknownLatency: NEUTRAL, reputations: rated, otherReputation: reputationOf(undefined),
  };
  let rows = await r.discovery.byScore(filter, inputs, { limit: limit + opts.edge });
  if (rows.length === limit + opts.edge) {
    // every listing with a store key of at least k - 2 must be scored here; if the first answer
    // ends before the key falls below that, ask for all of them
    const floor = rows[limit - 1]!.key - 2;
    if (rows[rows.length - 1]!.key >= floor) rows = await r.discovery.byScore(filter, inputs, { minKey: floor });
  }
  const reps = await reputations(r, rows.map((c) => c.providerId));
  return best(rows, { bm25: undefined, bestRelevance: 0, cheapest, fastest, reputations: reps }, limit);
}

/** The page as the response shows it: each listing in full, with its version and seller. */
async function present(r: Repos, page: Scored[]) {
  const listings = new Map<string, Capability>();
  for (const { row } of page) listings.set(row.id, (await r.capabilities.get(row.id))!);
  const versions = new Map((await r.capabilityVersions.getMany([...listings.values()].map((c) => c.currentVersionId))).map((v) => [v.id, v]));
  const sellers = new Map<string, NonNullable<Awaited<ReturnType<Repos['tenants']['get']>>>>();
  for (const { row } of page) {
    if (!sellers.has(row.providerId)) sellers.set(row.providerId, (await r.tenants.get(row.providerId))!);
  }
  return page.map(({ row, signals, score }) => {
    const version = versions.get(listings.get(row.id)!.currentVersionId)!;
    return {
      capability: discoveryCapabilityView(listings.get(row.id)!),
      version: { endpoint: version.endpoint, address: version.address, version: version.version },
      provider: providerSummary(sellers.get(row.providerId)!, signals.reputation),
      score,
      scoreBreakdown: Object.fromEntries(Object.entries(signals).map(([k, v]) => [k, round4(v)])) as Signals,
    };
  });
}
