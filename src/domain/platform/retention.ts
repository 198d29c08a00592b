/**
 * The retention duty (docs/deploy.md § Retention): deletes what is finished and old, so the
 * tables that grow with use do not grow without end. Finished webhook deliveries and alert
 * mails after `webhookDeliveriesDays` and `alertMailsDays`; events (GET /v1/events) after
 * `railEventsDays`, except those a pending delivery or mail still has to send; idempotency keys
 * of paid calls once they have expired. Nothing else is touched: the ledger, transactions,
 * receipts and the rest are kept for good.
 *
 * Each batch is its own short transaction (the oldest first), and the duty is safe to run twice
 * at once (a fleet runs it as the `retention` duty, on one instance at a time).
 */
import type { DomainContext } from './context.js';
import { Periodic } from './periodic.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionSettings {
  /** how often it runs (ms; default an hour; 0 never) */
  intervalMs: number;
  /** delivered or given-up webhook deliveries are kept this many days after they finished */
  webhookDeliveriesDays: number;
  /** events are kept this many days after they were recorded */
  railEventsDays: number;
  /** sent or given-up alert mails are kept this many days after they finished */
  alertMailsDays: number;
}

export const DEFAULT_RETENTION: RetentionSettings = {
  intervalMs: 60 * 60 * 1000,
  webhookDeliveriesDays: 30,
  railEventsDays: 90,
  alertMailsDays: 30,
};

/** The setting names, for the config check. */
export const RETENTION_DAYS_KEYS = ['webhookDeliveriesDays', 'railEventsDays', 'alertMailsDays'] as const;
/** A retention of fewer days than this is refused: deliveries are retried for a day. */
export const MIN_RETENTION_DAYS = 1;

export interface RetentionResult {
  webhookDeliveries: number;
  railEvents: number;
  alertMails: number;
  idempotencyKeys: number;
}

/** Rows deleted per transaction. */
const BATCH = 500;
/** Batches per table per run: a huge backlog is worked off over several runs, never in one long run. */
const MAX_BATCHES = 200;

export class RetentionJob {
  private readonly periodic = new Periodic(() => this.runOnce());
  readonly settings: RetentionSettings;

  constructor(private readonly ctx: DomainContext, settings: Partial<RetentionSettings> = {}) {
    this.settings = { ...DEFAULT_RETENTION, ...settings };
  }

  /** Deletes what is past its time now; returns how many rows of each kind. */
  async runOnce(): Promise<RetentionResult> {
    const { ctx, settings: s } = this;
    const now = ctx.clock.now();
    const drain = async (remove: (limit: number) => Promise<number>): Promise<number> => {
      let total = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await remove(BATCH);
        total += n;
        if (n < BATCH) break;
      }
      return total;
    };
    // deliveries and mails first: an event is kept while a pending one needs it
    const webhookDeliveries = await drain((limit) => ctx.store.tx((r) => r.webhookDeliveries.removeFinished(now - s.webhookDeliveriesDays * DAY_MS, limit)));
    const alertMails = await drain((limit) => ctx.store.tx((r) => r.alertMails.removeFinished(now - s.alertMailsDays * DAY_MS, limit)));
    const railEvents = await drain((limit) => ctx.store.tx((r) => r.railEvents.removeOlderThan(now - s.railEventsDays * DAY_MS, limit)));
    const idempotencyKeys = await drain((limit) => ctx.store.tx((r) => r.paymentIdempotency.removeExpired(now, limit)));
    return { webhookDeliveries, railEvents, alertMails, idempotencyKeys };
  }

  /** Runs every `settings.intervalMs` (0: never); a failed run is reported to `onError` and tried again next time. */
  start(onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(this.settings.intervalMs, onError, when);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
