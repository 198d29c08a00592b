/**
 * `npm run simulate -- [--seed N | --seeds K [--from S]] [--steps M] [--minutes T] [--no-shrink]`
 * (docs/simulation.md). Prints a line per failing seed (with its shrunk step list), and
 * `N passed, M failed` last; exits 1 if any failed.
 */
import { parseArgs } from 'node:util';
import { simBackend, Stores } from './store.js';
import { report, runSeed } from './runner.js';

const USAGE = 'usage: npm run simulate -- [--seed N | --seeds K [--from S]] [--steps M] [--minutes T] [--no-shrink] [--verbose]';

function int(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number ≥ 0, not ${JSON.stringify(v)}\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        seed: { type: 'string' }, seeds: { type: 'string' }, from: { type: 'string' }, steps: { type: 'string' },
        minutes: { type: 'string' }, 'no-shrink': { type: 'boolean' }, verbose: { type: 'boolean' }, help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const steps = int('steps', values.steps, 200);
  const minutes = values.minutes === undefined ? undefined : Number(values.minutes);
  if (minutes !== undefined && !(minutes > 0)) {
    console.error(`--minutes must be a number > 0\n${USAGE}`);
    process.exit(2);
  }
  const seeds: number[] = values.seed !== undefined
    ? [int('seed', values.seed, 1)]
    : Array.from({ length: int('seeds', values.seeds, 16) }, (_, i) => int('from', values.from, 1) + i);
  const backend = simBackend();
  const until = minutes === undefined ? Infinity : Date.now() + minutes * 60_000;
  console.log(`simulating ${seeds.length === 1 ? `seed ${seeds[0]}` : `seeds ${seeds[0]}..${seeds[seeds.length - 1]}`}, ${steps} steps each, on ${backend}${minutes ? `, for at most ${minutes} minutes` : ''}`);
  const tally = new Map<string, number>();
  const stores = new Stores(backend);
  let passed = 0;
  let failed = 0;
  try {
    for (const seed of seeds) {
      if (Date.now() > until) {
        console.log(`time budget spent after ${passed + failed} seeds`);
        break;
      }
      let v;
      try {
        v = await runSeed(seed, steps, { stores, ...(values.verbose ? { tally } : {}) }, { shrink: !values['no-shrink'] });
      } catch (e) {
        // the run could not start (a store that cannot be opened): counted, and the next seeds would fail alike
        console.log(`seed ${seed}: could not run: ${e instanceof Error ? e.message : String(e)}`);
        failed++;
        break;
      }
      if (v.ok) passed++;
      else failed++;
      if (!v.ok || values.verbose) console.log(report(v, steps));
    }
  } finally {
    await stores.close();
  }
  if (values.verbose) {
    console.log('what the calls answered, over all runs (shrinking included):');
    for (const [k, n] of [...tally].sort()) console.log(`  ${k}: ${n}`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

await main();
