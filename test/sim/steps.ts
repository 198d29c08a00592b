/**
 * The steps of a simulation and their seeded generation. A step names what it acts on by index
 * (the k-th buyer wallet, the k-th transaction still open, ...), resolved against the model when
 * it runs, modulo what exists then: any subsequence of a step list is a valid step list, which is
 * what lets the shrinker drop steps.
 */

export type Fault = 'before' | 'after';
export type FailReason = 'client_error' | 'provider_error';
export type PayoutRail = 'bank_transfer' | 'ach' | 'usdc_base';

export type PaymentStep =
  /** a buyer wallet pays a seller's capability (optionally under a new idempotency key) */
  | { op: 'authorize'; w: number; s: number; key: boolean; fault?: Fault }
  /** the seller completes the k-th open transaction */
  | { op: 'complete'; t: number; fault?: Fault }
  /** the seller reports a failure of the k-th open transaction */
  | { op: 'fail'; t: number; reason: FailReason; fault?: Fault }
  /** a duplicate: the k-th resolved transaction's complete or fail sent again */
  | { op: 'again'; t: number }
  /** a duplicate: the k-th transaction's proof sent again */
  | { op: 'replayProof'; t: number }
  /** a retry: the k-th idempotency key sent again for the same request, with a new proof */
  | { op: 'retryKey'; k: number };

export type Step =
  | PaymentStep
  /** several payment calls in flight at once, each on another buyer wallet (its transactions and keys), started in this order; no faults */
  | { op: 'concurrent'; calls: { w: number; call: PaymentStep }[] }
  /** a complete and a fail of the same open transaction race (reordered: `failFirst` starts the fail first) */
  | { op: 'race'; t: number; failFirst: boolean }
  | { op: 'sweep'; fault?: Fault }
  | { op: 'clock'; ms: number }
  | { op: 'resume'; w: number; s: number }
  | { op: 'fund'; w: number; amount: number; fault?: Fault }
  | { op: 'topUp'; w: number; amount: number; outcome: 'succeeded' | 'declined'; duplicate: boolean }
  | { op: 'deposit'; w: number; units: number }
  | { op: 'payout'; s: number; amount: number; rail: PayoutRail; fault?: Fault }
  /** a duplicate: the k-th payout request sent again with its idempotency key */
  | { op: 'payoutAgain'; p: number }
  | { op: 'settlePayout'; p: number; outcome: 'confirmed' | 'returned' }
  /** the rail job: observe deposits, follow and resubmit payouts, reconcile */
  | { op: 'railJobs' }
  /** the process dies: services are built again on the same store; what was not committed is gone */
  | { op: 'restart' }
  /** a seller opens a payment session with a buyer wallet's signed open request: its cap held, for `minutes` */
  | { op: 'sessionOpen'; w: number; s: number; cap: number; minutes: number }
  /** the seller claims a voucher of the k-th session: `add` above what was claimed (0: the claimed amount again), or one below it (`stale`) */
  | { op: 'sessionClaim'; k: number; add: number; stale: boolean; fault?: Fault }
  /** the seller closes the k-th session: the rest of its cap goes back to the buyer */
  | { op: 'sessionClose'; k: number; fault?: Fault };

/** A small fast seeded generator (mulberry32); the same seed gives the same steps on every machine. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  /** by weight: [[weight, value], ...] */
  weighted<T>(xs: readonly (readonly [number, T])[]): T {
    let n = this.next() * xs.reduce((s, [w]) => s + w, 0);
    for (const [w, v] of xs) {
      n -= w;
      if (n < 0) return v;
    }
    return xs[xs.length - 1]![1];
  }
}

export const WALLETS = 4;
export const SELLERS = 2;
const MINUTE = 60_000;

function faultOf(g: Rng): Fault | undefined {
  return g.chance(0.1) ? g.pick(['before', 'after'] as const) : undefined;
}

function paymentStep(g: Rng, w = g.int(WALLETS), faults = true): PaymentStep {
  const fault = (x: Rng) => (faults ? faultOf(x) : undefined);
  const kind = g.weighted([[6, 'authorize'], [4, 'complete'], [3, 'fail'], [1, 'again'], [1, 'replayProof'], [1, 'retryKey']] as const);
  switch (kind) {
    case 'authorize': return { op: 'authorize', w, s: g.int(SELLERS), key: g.chance(0.4), ...opt(fault(g)) };
    case 'complete': return { op: 'complete', t: g.int(8), ...opt(fault(g)) };
    case 'fail': return { op: 'fail', t: g.int(8), reason: g.chance(0.6) ? 'provider_error' : 'client_error', ...opt(fault(g)) };
    case 'again': return { op: 'again', t: g.int(16) };
    case 'replayProof': return { op: 'replayProof', t: g.int(16) };
    case 'retryKey': return { op: 'retryKey', k: g.int(8) };
  }
}

const opt = (f: Fault | undefined) => (f ? { fault: f } : {});

function step(g: Rng): Step {
  const kind = g.weighted([
    [30, 'payment'], [5, 'concurrent'], [3, 'race'], [3, 'sweep'], [5, 'clock'], [1, 'resume'], [7, 'fund'], [3, 'topUp'],
    [2, 'deposit'], [4, 'payout'], [1, 'payoutAgain'], [2, 'settlePayout'], [2, 'railJobs'], [1, 'restart'],
    [3, 'sessionOpen'], [5, 'sessionClaim'], [1, 'sessionClose'],
  ] as const);
  switch (kind) {
    case 'payment': return paymentStep(g);
    case 'concurrent': {
      // distinct buyer wallets: the calls' outcomes do not depend on the order they commit in
      const ws = [0, 1, 2, 3].sort(() => g.next() - 0.5).slice(0, g.between(2, 3));
      return { op: 'concurrent', calls: ws.map((w) => ({ w, call: paymentStep(g, w, false) })) };
    }
    case 'race': return { op: 'race', t: g.int(8), failFirst: g.chance(0.5) };
    case 'sweep': return { op: 'sweep', ...opt(faultOf(g)) };
    case 'clock': return { op: 'clock', ms: g.weighted([[3, g.between(1, 4) * MINUTE], [3, 16 * MINUTE], [1, 25 * 60 * MINUTE], [1, 4 * 24 * 60 * MINUTE]] as const) };
    case 'resume': return { op: 'resume', w: g.int(WALLETS), s: g.int(SELLERS) };
    case 'fund': return { op: 'fund', w: g.int(WALLETS), amount: g.between(1, 20_000), ...opt(faultOf(g)) };
    case 'topUp': return { op: 'topUp', w: g.int(WALLETS), amount: g.between(1, 30_000), outcome: g.chance(0.8) ? 'succeeded' : 'declined', duplicate: g.chance(0.3) };
    case 'deposit': return { op: 'deposit', w: g.int(WALLETS), units: g.between(1, 200_000_000) };
    case 'payout': return { op: 'payout', s: g.int(SELLERS), amount: g.between(1, 2_000), rail: g.pick(['bank_transfer', 'ach', 'usdc_base'] as const), ...opt(faultOf(g)) };
    case 'payoutAgain': return { op: 'payoutAgain', p: g.int(8) };
    case 'settlePayout': return { op: 'settlePayout', p: g.int(8), outcome: g.chance(0.5) ? 'returned' : 'confirmed' };
    case 'railJobs': return { op: 'railJobs' };
    case 'restart': return { op: 'restart' };
    case 'sessionOpen': return { op: 'sessionOpen', w: g.int(WALLETS), s: g.int(SELLERS), cap: g.between(1, 20_000), minutes: g.pick([5, 30, 120]) };
    case 'sessionClaim': {
      const add = g.weighted([[6, g.between(1, 6_000)], [1, 0]] as const);
      return { op: 'sessionClaim', k: g.int(8), add, stale: g.chance(0.1), ...opt(faultOf(g)) };
    }
    case 'sessionClose': return { op: 'sessionClose', k: g.int(8), ...opt(faultOf(g)) };
  }
}

/** The steps of a seed: the same list for the same (seed, count). */
export function generateSteps(seed: number, count: number): Step[] {
  const g = new Rng(seed);
  return Array.from({ length: count }, () => step(g));
}

/** One line per step, for a failure report. */
export function describeStep(s: Step): string {
  return JSON.stringify(s);
}
