/** Latency summaries: every sample is kept (a phase holds at most some tens of thousands). */

export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

const round = (x: number) => Math.round(x * 100) / 100;

export function summarize(samples: readonly number[]): LatencySummary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN;
  return {
    count: s.length,
    meanMs: round(mean),
    p50Ms: round(percentile(s, 50)),
    p90Ms: round(percentile(s, 90)),
    p99Ms: round(percentile(s, 99)),
    maxMs: round(s[s.length - 1] ?? NaN),
  };
}
