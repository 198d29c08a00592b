/**
 * A seller's reputation, 0 to 1, from the ratings (1 to 5) of buyers who hold a receipt.
 *
 * A Bayesian mean: each rating counts as (rating - 1) / 4, so 1 star is 0 and 5 stars is 1,
 * and a prior of 0.5 weighs as much as PRIOR_WEIGHT ratings. A seller with no ratings is 0.5;
 * one 5-star rating moves it to 0.625, not to 1, so a handful of ratings cannot outrank a
 * long record. Rounded to 4 decimals so that it reads the same on every call.
 */
import type { Repos } from '../../store/store.js';

export const PRIOR = 0.5;
export const PRIOR_WEIGHT = 3;

export function reputationOf(summary: { count: number; sum: number } | undefined): number {
  const count = summary?.count ?? 0;
  const points = summary ? (summary.sum - count) / 4 : 0;
  return Math.round(((PRIOR * PRIOR_WEIGHT + points) / (PRIOR_WEIGHT + count)) * 10_000) / 10_000;
}

/** Reputation of each provider id (every id gets a value; 0.5 without ratings). */
export async function reputations(r: Repos, providerIds: readonly string[]): Promise<Map<string, number>> {
  const ids = [...new Set(providerIds)];
  const summaries = await r.ratings.summary(ids);
  return new Map(ids.map((id) => [id, reputationOf(summaries.get(id))]));
}
