/**
 * Every metric the gateway exposes at `GET /metrics` (Prometheus text format, docs/metrics.md),
 * defined here and nowhere else. Each gateway has a Registry of its own (never prom-client's
 * global one), so several gateways in one process do not share or collide.
 *
 * The domain knows nothing of this: it is instrumented from outside, by wrapping service
 * methods (`instrumentServices`), by the store's observer (`storeObserver`), by the domain
 * context's event observer (`domainObserver`), by the webhook deliverer's `onDeliveryFailed` and
 * by the rate-limit plugin's `onLimited`. Other parts may call the counters directly
 * (`gateway.metrics`, also `app.metrics` inside fastify).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isAppError } from '../core/errors.js';
import type { DomainObserver } from '../domain/platform/context.js';
import type { StoreObserver } from '../store/observer.js';
import type { Services } from './services.js';

/** Latency buckets in seconds: sub-millisecond commits up to requests stuck for seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export type PaidCallOutcome = 'completed' | 'failed_provider_error' | 'failed_client_error' | 'expired' | 'refused';

export interface HoldsOutstanding {
  /** authorized transactions not yet completed, failed or expired */
  count: number;
  /** their amounts by currency, in minor units */
  amounts: { currency: string; amountMinor: bigint }[];
}

export interface MetricsSources {
  /** what is held right now; computed when scraped (absent: the gauges are not exported) */
  holdsOutstanding?: () => Promise<HoldsOutstanding>;
  /** open payment sessions and what they hold (cap less claimed); computed when scraped (absent: not exported) */
  sessionHolds?: () => Promise<HoldsOutstanding>;
  /** epoch ms (the gateway's clock), for the rail job lag */
  now: () => number;
  /**
   * prom-client's process metrics (CPU, memory, event loop, GC) too. They hold a GC observer
   * and an event loop monitor for the life of the process, so only a gateway that serves
   * /metrics collects them (not the many short-lived gateways of a test run).
   */
  processMetrics?: boolean;
}

export class GatewayMetrics {
  readonly registry = new Registry();

  readonly paidCalls = new Counter({
    name: 'agentpay_paid_calls_total',
    help: 'Paid calls by how they ended: completed, failed_provider_error, failed_client_error (refunded), expired (refunded by the sweeper), refused (authorize refused: funds, policy, replay, ...)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly paymentOperations = new Counter({
    name: 'agentpay_payment_operations_total',
    help: 'Payment operations (challenge, authorize, complete, fail) by result: ok, or the error code',
    labelNames: ['operation', 'result'] as const,
    registers: [this.registry],
  });

  readonly authorizeSeconds = new Histogram({
    name: 'agentpay_authorize_duration_seconds',
    help: 'Time to authorize a payment in the gateway (proof check, policy, hold, durable commit), by result',
    labelNames: ['result'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly completeSeconds = new Histogram({
    name: 'agentpay_complete_duration_seconds',
    help: 'Time to complete a paid call in the gateway (capture, fee, signed receipt, durable commit), by result',
    labelNames: ['result'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly storeCommitSeconds = new Histogram({
    name: 'agentpay_store_commit_duration_seconds',
    help: 'Time from BEGIN to COMMIT of one store commit (group commit: one or more transactions)',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly storeCommitTransactions = new Counter({
    name: 'agentpay_store_committed_transactions_total',
    help: 'Transactions the store committed (several share one commit under load)',
    registers: [this.registry],
  });

  readonly storeSyncSeconds = new Histogram({
    name: 'agentpay_store_sync_duration_seconds',
    help: 'Time from COMMIT until the commit is on disk (SQLite background log sync); absent when the store syncs inside COMMIT',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly sweeperRefunds = new Counter({
    name: 'agentpay_sweeper_refunds_total',
    help: 'Authorized transactions the expiry sweeper refunded because nobody completed or failed them in time',
    registers: [this.registry],
  });

  readonly breakerPauses = new Counter({
    name: 'agentpay_breaker_pauses_total',
    help: 'Times the breaker paused a seller for a wallet (consecutive provider errors)',
    registers: [this.registry],
  });

  readonly events = new Counter({
    name: 'agentpay_events_total',
    help: 'Events recorded for GET /v1/events, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'agentpay_rate_limited_requests_total',
    help: 'Requests refused 429 RATE_LIMITED, by limit: general, signup, payment',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly railJobRuns = new Counter({
    name: 'agentpay_rail_job_runs_total',
    help: 'Runs of the rail job (deposits, payouts, reconciliation) this instance finished',
    registers: [this.registry],
  });

  /** Each failed webhook delivery attempt (counted through `WebhookDeliverer.onDeliveryFailed`, instrumentServices). */
  readonly webhookDeliveryFailures = new Counter({
    name: 'agentpay_webhook_delivery_failures_total',
    help: 'Webhook delivery attempts that failed (no answer, or not 2xx); each is retried with backoff',
    registers: [this.registry],
  });

  /** when this instance's rail job last finished a run (epoch ms), or when the gateway started */
  private railJobLastRunAt: number;

  constructor(private readonly sources: MetricsSources) {
    this.railJobLastRunAt = sources.now();
    const now = sources.now;
    const self = this;
    new Gauge({
      name: 'agentpay_rail_job_lag_seconds',
      help: 'Seconds since the rail job last finished a run on this instance (since start if it has not yet)',
      registers: [this.registry],
      collect() {
        this.set(Math.max(0, now() - self.railJobLastRunAt) / 1000);
      },
    });
    if (sources.holdsOutstanding) {
      holdGauges(this.registry, sources.holdsOutstanding, {
        name: 'agentpay_holds_outstanding',
        help: 'Authorized transactions holding buyer funds, not yet completed, failed or expired (read from the store at scrape)',
      }, {
        name: 'agentpay_holds_outstanding_minor',
        help: 'Amount those transactions hold, by currency, in minor units (read from the store at scrape)',
      });
    }
    if (sources.sessionHolds) {
      holdGauges(this.registry, sources.sessionHolds, {
        name: 'agentpay_sessions_open',
        help: 'Payment sessions open, holding part of a buyer wallet for their seller (read from the store at scrape)',
      }, {
        name: 'agentpay_session_holds_minor',
        help: 'What the open sessions still hold (their caps less what was claimed), by currency, in minor units (read from the store at scrape)',
      });
    }
    if (sources.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'agentpay_' });
  }

  /** the rail job finished a run */
  railJobRan(): void {
    this.railJobLastRunAt = this.sources.now();
    this.railJobRuns.inc();
  }

  /** the store's observer: commit and sync latency */
  storeObserver(): StoreObserver {
    return {
      committed: (seconds, transactions) => {
        this.storeCommitSeconds.observe(seconds);
        this.storeCommitTransactions.inc(transactions);
      },
      synced: (seconds) => this.storeSyncSeconds.observe(seconds),
    };
  }

  /** the domain context's observer: events as they are recorded */
  domainObserver(): DomainObserver {
    return {
      event: (type) => {
        this.events.inc({ type });
        if (type === 'wallet_provider.paused') this.breakerPauses.inc();
      },
    };
  }

  /** The exposition: Prometheus text format 0.0.4. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

const resultOf = (e: unknown) => (isAppError(e) ? e.code : 'INTERNAL');

/**
 * Times and counts the payment operations, the sweeper and the rail job by wrapping the
 * methods of these services (the routes and timers call them through the instances), and counts
 * failed webhook delivery attempts through the deliverer's `onDeliveryFailed`.
 */
export function instrumentServices(services: Pick<Services, 'payments' | 'sweeper' | 'rails' | 'webhookDeliverer'>, m: GatewayMetrics): void {
  const { payments, sweeper } = services;
  const timed = <A extends unknown[], R>(operation: string, f: (...a: A) => Promise<R>, histogram?: Histogram<'result'>, after?: (r: R, a: A) => void, refused?: () => void) =>
    async (...a: A): Promise<R> => {
      const stop = histogram?.startTimer();
      try {
        const r = await f(...a);
        stop?.({ result: 'ok' });
        m.paymentOperations.inc({ operation, result: 'ok' });
        after?.(r, a);
        return r;
      } catch (e) {
        stop?.({ result: 'error' });
        m.paymentOperations.inc({ operation, result: resultOf(e) });
        // a refusal the buyer caused (4xx); a 5xx is no outcome of the call
        if (isAppError(e) && e.status < 500) refused?.();
        throw e;
      }
    };
  payments.challenge = timed('challenge', payments.challenge.bind(payments));
  payments.authorize = timed('authorize', payments.authorize.bind(payments), m.authorizeSeconds, undefined, () => m.paidCalls.inc({ outcome: 'refused' }));
  payments.complete = timed('complete', payments.complete.bind(payments), m.completeSeconds, () => m.paidCalls.inc({ outcome: 'completed' }));
  payments.fail = timed('fail', payments.fail.bind(payments), undefined, (_r, [, input]) => m.paidCalls.inc({ outcome: `failed_${input.reason}` as PaidCallOutcome }));
  const sweepOnce = sweeper.sweepOnce.bind(sweeper);
  sweeper.sweepOnce = async () => {
    const n = await sweepOnce();
    if (n > 0) {
      m.sweeperRefunds.inc(n);
      m.paidCalls.inc({ outcome: 'expired' }, n);
    }
    return n;
  };
  const jobs = services.rails.jobs;
  const runOnce = jobs.runOnce.bind(jobs);
  jobs.runOnce = async (...a) => {
    const r = await runOnce(...a);
    m.railJobRan();
    return r;
  };
  // each failed delivery attempt (no answer, or not 2xx), whether retried or given up
  const deliveryFailed = services.webhookDeliverer.onDeliveryFailed;
  services.webhookDeliverer.onDeliveryFailed = (f) => {
    m.webhookDeliveryFailures.inc();
    deliveryFailed?.(f);
  };
}

/** A count gauge and an amount-by-currency gauge over one read of the store per scrape. */
function holdGauges(registry: Registry, source: () => Promise<HoldsOutstanding>, count: { name: string; help: string }, amount: { name: string; help: string }): void {
  let pending: Promise<HoldsOutstanding> | undefined;
  const read = () => (pending ??= source().finally(() => setImmediate(() => (pending = undefined))));
  new Gauge({
    ...count,
    registers: [registry],
    async collect() {
      this.set((await read()).count);
    },
  });
  new Gauge({
    ...amount,
    labelNames: ['currency'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const a of (await read()).amounts) this.set({ currency: a.currency }, Number(a.amountMinor));
    },
  });
}
