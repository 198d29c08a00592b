/**
 * The expiry sweeper: refunds authorized transactions that nobody completed or
 * failed within the in-flight time. Started by the gateway; tests call `sweepOnce`
 * with a manual clock instead of waiting.
 */
import type { PaymentDeps } from './deps.js';
import { expireTransaction } from './resolution.js';
import { Periodic } from '../platform/periodic.js';

/** Per database transaction, so a large backlog never holds the store for long. */
const BATCH = 100;

export class ExpirySweeper {
  private readonly periodic = new Periodic(() => this.sweepOnce());

  /** `sessions`: also releases the payment sessions whose claim window ended (./sessions/claim.ts) */
  constructor(private deps: Pick<PaymentDeps, 'ctx' | 'signingKeys'>, private sessions?: { sweep(): Promise<number> }) {}

  /** Expires everything overdue now; returns how many transactions it refunded. */
  async sweepOnce(): Promise<number> {
    const { ctx } = this.deps;
    let total = 0;
    for (;;) {
      // listed inside the transaction that resolves them: a complete that won the race is not listed
      const n = await ctx.store.tx(async (r) => {
        const due = await r.transactions.listExpired(ctx.clock.now(), BATCH);
        for (const txn of due) await expireTransaction(r, this.deps, txn);
        return due.length;
      });
      total += n;
      if (n < BATCH) break;
    }
    // idempotency keys past their 24 hours: forgotten (authorize also ignores them)
    while ((await ctx.store.tx((r) => r.paymentIdempotency.removeExpired(ctx.clock.now(), BATCH))) === BATCH) {
      // next batch
    }
    await this.sessions?.sweep();
    return total;
  }

  /** Sweeps every `intervalMs`; a failed sweep is reported to `onError` and retried next time. */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(intervalMs, onError, when);
  }

  /** Stops the timer and waits for a sweep in progress, so the store can close after. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
