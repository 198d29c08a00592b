import type { DiscoverableFilter } from './market.js';

/** What ranking reads of a listing: no texts, tags, schema or address (nothing to parse). */
export interface RankingRow {
  id: string;
  providerId: string;
  priceMinor: bigint;
  latencyP50Ms: number | null;
  sellerVerified: boolean;
}

/** Over the listings discovery may show that pass a filter. */
export interface RankingStats {
  count: number;
  /** null when there are none */
  cheapestMinor: bigint | null;
  /** null when none advertises a latency */
  fastestMs: number | null;
}

/**
 * The inputs of discovery's score without a query (src/domain/market/discovery.ts computes the score;
 * these let the store order listings by the same formula): weights, the neutral relevance, the
 * price and latency normalisers, the seller reputations (sellers left out have `otherReputation`).
 */
export interface ScoreInputs {
  weights: { relevance: number; price: number; latency: number; reputation: number; verification: number };
  relevance: number;
  cheapest: number;
  fastest: number;
  unknownLatency: number;
  reputations: ReadonlyMap<string, number>;
  otherReputation: number;
}

/** A ranking row with its score as the store computed it: Math.round(score * 10^4). */
export type KeyedRankingRow = RankingRow & { key: number };
