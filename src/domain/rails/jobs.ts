/**
 * The rail job: observes new deposits, credits held ones once the price is back in
 * band, follows submitted payouts to confirmed or returned, and reconciles every
 * `reconcileIntervalMs` (on the injected clock). Started by the gateway like the expiry
 * sweeper; tests call `runOnce` after moving a manual clock. A step that fails is
 * reported and the others still run; everything is retried on the next run.
 */
import type { Clock } from '../../core/clock.js';
import type { DepositService } from './deposits.js';
import type { PayoutService } from './payouts/service.js';
import type { Reconciler } from './reconciliation.js';
import { Periodic } from '../platform/periodic.js';

export interface RailJobResult {
  depositsObserved: number;
  heldCredited: number;
  payoutsSettled: number;
  reconciled: boolean;
}

export class RailJobs {
  private readonly periodic = new Periodic((onError) => this.runOnce(onError));
  private lastReconcileAt: number | undefined;

  constructor(
    private deps: { clock: Clock; deposits: DepositService; payouts: PayoutService; reconciler: Reconciler },
    private opts: { reconcileIntervalMs: number },
  ) {}

  async runOnce(onError: (e: unknown) => void = (e) => { throw e; }): Promise<RailJobResult> {
    const step = async (f: () => Promise<number>) => {
      try {
        return await f();
      } catch (e) {
        onError(e);
        return 0;
      }
    };
    const result: RailJobResult = {
      depositsObserved: await step(() => this.deps.deposits.observe()),
      heldCredited: await step(() => this.deps.deposits.retryHeld()),
      payoutsSettled: await step(() => this.deps.payouts.followAll()),
      reconciled: false,
    };
    const now = this.deps.clock.now();
    if (this.lastReconcileAt === undefined || now - this.lastReconcileAt >= this.opts.reconcileIntervalMs) {
      result.reconciled = (await step(async () => (await this.deps.reconciler.run(), 1))) === 1;
      if (result.reconciled) this.lastReconcileAt = now;
    }
    return result;
  }

  /** `when`: run a tick only while this instance holds the rail duty (Store.claimDuty) */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(intervalMs, onError, when);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
