/**
 * Seeds in, verdicts out: a seed's steps run (./sim.ts); a failing list is shrunk to the shortest
 * list that still fails (cut after the failing step, then delta debugging: drop chunks of steps,
 * halving the chunk size, while the list still fails; then single steps), each candidate on a
 * fresh store. Everything follows from the seed and the step count, so a failure replays from
 * the seed alone.
 */
import { describeStep, generateSteps, type Step } from './steps.js';
import { runSteps, type RunOptions, type RunResult } from './sim.js';

export interface SeedVerdict {
  seed: number;
  ok: boolean;
  /** the failure of the full list */
  message?: string;
  failedAt?: number;
  /** the shortest failing list found, and its failure */
  shrunk?: Step[];
  shrunkMessage?: string;
  /** whether the failure came back when its steps ran again (false: it depends on timing) */
  reproduced?: boolean;
  ms: number;
  /** what the full list's calls answered (runSeed with `tally`) */
  tally?: Map<string, number>;
}

export interface ShrinkOptions {
  /** candidate runs at most (default 300) */
  maxRuns?: number;
  /** stop shrinking after this many ms (default 120 s) */
  maxMs?: number;
}

/** The shortest failing list found below `steps` (which fails at `failedAt`). */
export async function shrink(steps: Step[], failedAt: number, opts: RunOptions, s: ShrinkOptions = {}): Promise<{ steps: Step[]; result: RunResult; reproduced: boolean }> {
  const maxRuns = s.maxRuns ?? 300;
  const deadline = Date.now() + (s.maxMs ?? 120_000);
  let runs = 0;
  let best = steps.slice(0, failedAt + 1);
  // concurrent calls may commit in another order on PostgreSQL: a failure that depends on it may
  // take a few runs to come back
  let bestResult: RunResult = { ok: true, steps: 0 };
  for (let i = 0; i < 3 && bestResult.ok; i++, runs++) bestResult = await runSteps(best, opts);
  if (bestResult.ok) return { steps, result: { ok: false, step: failedAt, message: 'the failure did not happen again on the same steps (timing-dependent)' }, reproduced: false };
  const fails = async (candidate: Step[]): Promise<RunResult | undefined> => {
    if (runs >= maxRuns || Date.now() > deadline) return undefined;
    runs++;
    const r = await runSteps(candidate, opts);
    return r.ok ? undefined : r;
  };
  let chunk = Math.max(1, Math.floor(best.length / 2));
  while (chunk >= 1 && runs < maxRuns && Date.now() <= deadline) {
    let changed = false;
    for (let start = 0; start < best.length && runs < maxRuns; ) {
      const candidate = [...best.slice(0, start), ...best.slice(start + chunk)];
      const r = candidate.length ? await fails(candidate) : undefined;
      if (r && !r.ok) {
        // keep only what runs up to the failure
        best = candidate.slice(0, r.step + 1);
        bestResult = r;
        changed = true;
      } else {
        start += chunk;
      }
    }
    if (!changed) {
      if (chunk === 1) break;
      chunk = Math.max(1, Math.floor(chunk / 2));
    }
  }
  return { steps: best, result: bestResult, reproduced: true };
}

export async function runSeed(seed: number, stepCount: number, opts: RunOptions, s: ShrinkOptions & { shrink?: boolean } = {}): Promise<SeedVerdict> {
  const started = Date.now();
  const steps = generateSteps(seed, stepCount);
  const result = await runSteps(steps, opts);
  if (result.ok) return { seed, ok: true, ms: Date.now() - started };
  const verdict: SeedVerdict = { seed, ok: false, message: result.message, failedAt: result.step, ms: 0 };
  if (s.shrink !== false) {
    const shrunk = await shrink(steps, result.step, opts, s);
    verdict.shrunk = shrunk.steps;
    verdict.shrunkMessage = shrunk.result.ok ? undefined : shrunk.result.message;
    verdict.reproduced = shrunk.reproduced;
  }
  verdict.ms = Date.now() - started;
  return verdict;
}

/** How a failure is printed: the seed, how to replay it, the failure, and the shrunk step list. */
export function report(v: SeedVerdict, stepCount: number): string {
  if (v.ok) return `seed ${v.seed}: passed (${v.ms} ms)`;
  const lines = [
    `seed ${v.seed}: FAILED at step ${v.failedAt! + 1} of ${stepCount}: ${v.message}`,
    `  replay: npm run simulate -- --seed ${v.seed} --steps ${stepCount}`,
  ];
  if (v.shrunk) {
    lines.push(`  shrunk to ${v.shrunk.length} steps, failing with: ${v.shrunkMessage}`);
    v.shrunk.forEach((s, i) => lines.push(`    ${i + 1}. ${describeStep(s)}`));
  }
  return lines.join('\n');
}
