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
 * - reputation:   the seller's reputation (src/domain/reputation.ts)
 * - verification: 1 for a verified seller; every discoverable seller is verified today, so it
 *                 only matters once unverified listings can be shown
 * Scores and signals are rounded to 4 decimals; equal scores are ordered by capability id.
 * Amounts are divided as numbers only to rank: they are exact below 2^53, and MAX_MINOR is 10^15.
 */
import { MAX_MINOR, parseMinor } from '../core/money.js';
import type { Repos } from '../store/store.js';
import type { Capability } from '../store/repos/market.js';
import type { DomainContext } from './context.js';
import { reputations } from './reputation.js';
import { providerSummary } from './providers.js';
import { capabilityView, type Protocol } from './capabilities.js';

export const WEIGHTS = { relevance: 0.5, price: 0.2, latency: 0.1, reputation: 0.15, verification: 0.05 } as const;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/** how many full-text matches are considered (among the listings that pass the filters) */
export const MATCH_CEILING = 1000;
const NEUTRAL = 0.5;

export interface SearchFilters {
  query?: string;
  category?: string;
  protocol?: Protocol;
  maxPriceMinor?: unknown;
  maxLatencyMs?: number;
  limit?: number;
}

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

export class DiscoveryService {
  constructor(private ctx: DomainContext) {}

  async search(filters: SearchFilters) {
    const maxPriceMinor = filters.maxPriceMinor === undefined ? undefined : priceCeiling(filters.maxPriceMinor);
    const limit = Math.min(Math.max(1, Math.floor(filters.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
    return this.ctx.store.read(async (r) => {
      const results = await this.rank(r, { ...filters, maxPriceMinor });
      return { results: results.slice(0, limit) };
    });
  }

  private async rank(r: Repos, f: Omit<SearchFilters, 'maxPriceMinor'> & { maxPriceMinor: bigint | undefined }) {
    const filter = {
      ...(f.category !== undefined ? { category: f.category } : {}),
      ...(f.protocol !== undefined ? { protocol: f.protocol } : {}),
      ...(f.maxPriceMinor !== undefined ? { maxPriceMinor: f.maxPriceMinor } : {}),
      ...(f.maxLatencyMs !== undefined ? { maxLatencyMs: f.maxLatencyMs } : {}),
    };
    let bm25: Map<string, number> | undefined;
    if (hasWords(f.query)) {
      // the ceiling counts only listings that pass the filters and could be shown
      const matches = await r.capabilitySearch.match(f.query, MATCH_CEILING, filter);
      if (matches.length === 0) return [];
      // SQLite reports BM25 negated (lower is better); flip it so that higher is better
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

    // loops, not Math.min(...list): spreading a large candidate list overflows the call stack
    let bestRelevance = 0;
    let cheapest = Infinity;
    let fastest = Infinity;
    for (const c of candidates) {
      if (bm25) bestRelevance = Math.max(bestRelevance, bm25.get(c.id) ?? 0);
      cheapest = Math.min(cheapest, Number(c.priceMinor));
      if (c.latencyP50Ms !== null) fastest = Math.min(fastest, c.latencyP50Ms);
    }
    // prices under 1 minor unit and latencies under 1 ms count as 1: no division by zero, and
    // below a millisecond an advertised median says nothing a buyer could notice
    cheapest = Math.max(1, cheapest);
    fastest = Number.isFinite(fastest) ? Math.max(1, fastest) : 1;

    const scored = candidates.map((c) => {
      const seller = sellers.get(c.providerId)!;
      const reputation = reps.get(c.providerId)!;
      const signals: Signals = {
        relevance: bm25 ? (bestRelevance > 0 ? (bm25.get(c.id) ?? 0) / bestRelevance : 1) : NEUTRAL,
        price: cheapest / Math.max(1, Number(c.priceMinor)),
        latency: c.latencyP50Ms === null ? NEUTRAL : fastest / Math.max(1, c.latencyP50Ms),
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
}
