/**
 * The simulation of the money (test/sim, docs/simulation.md) on this run's backend: a fixed set
 * of seeds passes, and it can fail: with a bug planted between the domain and the store it
 * finds the bug, shrinks the steps to a short list, and that list fails again on a fresh store.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Repos } from '../../src/store/store.js';
import { createTestDatabase } from '../helpers/pg.js';
import { report, runSeed } from '../sim/runner.js';
import { runSteps, type RunOptions } from '../sim/sim.js';
import { generateSteps } from '../sim/steps.js';
import { Stores, type Plant } from '../sim/store.js';

const backend = process.env.AGENTPAY_TEST_BACKEND === 'postgres' ? 'postgres' as const : 'sqlite' as const;
/** on PostgreSQL one copy of the run's migrated template (test/pg-setup.ts), emptied before each simulation run */
const stores = new Stores(backend, () => createTestDatabase('agentpay_sim', { migrated: true }));
const opts: RunOptions = { stores };
afterAll(() => stores.close());

// PostgreSQL: fewer seeds (a run there costs about a second more: every commit is synced)
const SEEDS = backend === 'postgres' ? [1, 2, 3, 4] : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
/** steps of a seed that looks for a planted bug, and the candidate runs the shrinker may make */
const PLANTED_STEPS = 60;
const SHRINK_RUNS = backend === 'postgres' ? 80 : 120;
const STEPS = 150;

/** `obj` with some methods replaced; the others still called on `obj` itself. */
function patched<T extends object>(obj: T, patch: Partial<T>): T {
  return new Proxy(obj, {
    get(target, key) {
      if (key in patch) return patch[key as keyof T];
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** Planted: the platform's fee of a completed call is never written (the seller and buyer entries are). */
const dropFees: Plant = (r: Repos) => patched(r, {
  ledger: patched(r.ledger, { place: (ps) => r.ledger.place(ps.filter((p) => p.type !== 'fee')) }),
});

/** Planted: a resolved transaction reads as still authorized, so a late fail or expiry resolves it a second time. */
const resolvedLooksOpen: Plant = (r: Repos) => patched(r, {
  transactions: patched(r.transactions, {
    get: async (id) => {
      const t = await r.transactions.get(id);
      return t && { ...t, status: 'authorized' };
    },
  }),
});

/** Planted: a success does not reset the seller's count of failures in a row (the breaker). */
const successNotCounted: Plant = (r: Repos) => patched(r, { breakers: patched(r.breakers, { clearFailures: async () => {} }) });

describe(`the simulation of the money on ${backend}`, () => {
  it.each(SEEDS)(`seed %i passes ${STEPS} steps`, async (seed) => {
    const v = await runSeed(seed, STEPS, opts, { maxRuns: 40 });
    expect(v.ok, report(v, STEPS)).toBe(true);
  }, 120_000);

  it('replays a seed from the seed alone: the same steps, the same failure at the same step', () => {
    expect(generateSteps(7, 50)).toEqual(generateSteps(7, 50));
    expect(generateSteps(7, 50)).not.toEqual(generateSteps(8, 50));
  });

  it.each([
    ['a completion that forgets the platform fee', dropFees, /not conserved|wallet wal_platform_revenue|fees 0/],
    ['a resolved transaction read as open (resolved twice)', resolvedLooksOpen, /racing|transaction|refund|crashed|answered/],
    ['a success that does not reset the breaker', successNotCounted, /breaker/],
  ] as const)('finds %s, and shrinks it to a short list that fails again', async (_name, plant, message) => {
    const planted: RunOptions = { ...opts, plant };
    let found;
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const v = await runSeed(seed, PLANTED_STEPS, planted, { maxRuns: SHRINK_RUNS });
      // a failure that depends on how concurrent calls interleave (PostgreSQL) may not come back: the next seed
      if (!v.ok && v.reproduced) {
        found = v;
        break;
      }
    }
    expect(found, 'no seed found the planted bug').toBeDefined();
    expect(found!.message).toMatch(message);
    const shrunk = found!.shrunk!;
    expect(shrunk.length, report(found!, PLANTED_STEPS)).toBeLessThanOrEqual(8);
    expect(shrunk.length).toBeLessThan(found!.failedAt! + 1);
    // the shrunk list alone fails on a fresh store, and passes without the bug
    expect((await runSteps(shrunk, planted)).ok).toBe(false);
    expect((await runSteps(shrunk, opts)).ok).toBe(true);
  }, 240_000);
});
