/**
 * The delivery duty: sends what is due, one delivery per endpoint at a time and in the
 * endpoint's order, and schedules a retry with exponential backoff and jitter after a failure,
 * for at least `retryWindowMs` (24 hours) after the delivery was queued; then it gives up.
 *
 * Attempts run on a pool of workers (see the class), each within a hard deadline.
 *
 * Safe to run twice at once (two instances on one database): a delivery is claimed (held for
 * the length of one attempt) in a transaction before it is sent, and only the head of an
 * endpoint's queue is ever due, so no delivery is sent twice concurrently and none overtakes
 * another. A fleet runs it on one instance at a time anyway (the `webhooks` duty; docs/api/webhooks.md § Running it).
 */
import { performance } from 'node:perf_hooks';
import type { DomainContext } from '../context.js';
import type { WebhookAttempt, WebhookDelivery } from '../../../store/repos/webhooks.js';
import { Periodic } from '../periodic.js';
import { eventView } from '../events.js';
import { SIGNATURE_HEADER, signWebhookPayload } from 'agentpay-sdk/webhooks';
import type { SecretBox } from './secrets.js';
import { signingSecrets } from './endpoints.js';
import { failureReason, type WebhookSender } from './sender.js';

export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 60 * 60 * 1000;

/**
 * How long to wait after the `attempt`-th failed attempt (1-based): 30 s doubled each time,
 * at most an hour, then between half of that and all of it ("equal jitter"), so endpoints that
 * failed together do not all come back at the same moment.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 30), MAX_RETRY_MS);
  return Math.round(base / 2 + random() * (base / 2));
}

/** One failed attempt, as the failure hook sees it (the metrics counter counts these). */
export interface DeliveryFailure {
  tenantId: string;
  endpointId: string;
  deliveryId: string;
  eventType: string;
  /** the attempt's number, 1 for the first */
  attempt: number;
  status: number | null;
  error: string;
  /** true when this was the last attempt: the delivery is now `failed` */
  gaveUp: boolean;
}

export interface DelivererOptions {
  ctx: DomainContext;
  box: SecretBox;
  send: WebhookSender;
  /** for the jitter (default Math.random) */
  random?: () => number;
  /** the hard deadline of one attempt (default 10 s) */
  timeoutMs?: number;
  /** attempts in flight at once, in all (default 8) */
  concurrency?: number;
  /** attempts in flight at once for one tenant (default half of `concurrency`, at least 1) */
  perTenant?: number;
  retryWindowMs?: number;
}

export interface RunResult {
  attempted: number;
  delivered: number;
  failed: number;
}

type Outcome = 'delivered' | 'failed' | 'skipped';

/**
 * A pool of `concurrency` workers. Each run fills the free ones with due deliveries and does
 * not wait for them: an attempt that takes its whole deadline holds one worker, and the next
 * run (every `deliveryIntervalMs`) hands the others to whatever else is due. Fair: an endpoint
 * has at most one attempt in flight (its order), a tenant at most `perTenant`, and the free
 * workers go round the tenants that have something due, one delivery each per round, oldest due first.
 */
export class WebhookDeliverer {
  /**
   * The one place a failed attempt is reported: set it to count failures (a metric), alert, or
   * log. Called after the failure is recorded; whatever it throws is ignored.
   */
  onDeliveryFailed: ((f: DeliveryFailure) => void) | undefined;
  private readonly periodic = new Periodic((onError) => this.dispatch(onError));
  private readonly random: () => number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perTenant: number;
  private readonly retryWindowMs: number;
  /** attempts in flight, by delivery id */
  private readonly inFlight = new Map<string, { tenantId: string; endpointId: string; done: Promise<Outcome> }>();

  constructor(private readonly o: DelivererOptions) {
    this.random = o.random ?? Math.random;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.concurrency = o.concurrency ?? 8;
    this.perTenant = o.perTenant ?? Math.max(1, Math.floor(this.concurrency / 2));
    this.retryWindowMs = o.retryWindowMs ?? RETRY_WINDOW_MS;
  }

  /**
   * Starts what is due now on the free workers and waits for those attempts (tests and scripts;
   * the timer uses `dispatch`, which does not wait). A delivery that cannot be attempted (its
   * secret does not decrypt) does not stop the others; its error is thrown after them.
   */
  async runOnce(): Promise<RunResult> {
    const started = await this.fill();
    const settled = await Promise.allSettled(started);
    const broken = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (broken) throw broken.reason;
    const outcomes = settled.map((x) => (x as PromiseFulfilledResult<Outcome>).value);
    return {
      attempted: outcomes.filter((x) => x !== 'skipped').length,
      delivered: outcomes.filter((x) => x === 'delivered').length,
      failed: outcomes.filter((x) => x === 'failed').length,
    };
  }

  /** Starts what is due on the free workers; each attempt's own failure goes to `onError`. */
  async dispatch(onError: (e: unknown) => void = () => {}): Promise<number> {
    const started = await this.fill();
    for (const p of started) p.catch(onError);
    return started.length;
  }

  /** How many attempts are in flight now. */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Runs every `intervalMs` (0: never); a failed run is reported to `onError` and tried again next time. */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(intervalMs, onError, when);
  }

  /** Stops the timer and waits for the run and the attempts in progress (each ends by its deadline). */
  async stop(): Promise<void> {
    await this.periodic.stop();
    await Promise.allSettled([...this.inFlight.values()].map((x) => x.done));
  }

  private async fill(): Promise<Promise<Outcome>[]> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return [];
    const { ctx } = this.o;
    // more than there are free workers: some are skipped below for fairness, the rest wait their turn
    const due = await ctx.store.read((r) => r.webhookDeliveries.due(ctx.clock.now(), Math.max(free * 4, 32)));
    const started: Promise<Outcome>[] = [];
    for (const d of this.fairPick(due, free)) {
      const done = this.attempt(d).finally(() => this.inFlight.delete(d.id));
      this.inFlight.set(d.id, { tenantId: d.tenantId, endpointId: d.endpointId, done });
      started.push(done);
    }
    return started;
  }

  /** Up to `free` of `due` (oldest due first): round robin over tenants, one per endpoint, `perTenant` each. */
  private fairPick(due: WebhookDelivery[], free: number): WebhookDelivery[] {
    const busyEndpoints = new Set<string>();
    const perTenant = new Map<string, number>();
    for (const x of this.inFlight.values()) {
      busyEndpoints.add(x.endpointId);
      perTenant.set(x.tenantId, (perTenant.get(x.tenantId) ?? 0) + 1);
    }
    const queues = new Map<string, WebhookDelivery[]>();
    for (const d of due) {
      if (this.inFlight.has(d.id) || busyEndpoints.has(d.endpointId)) continue;
      busyEndpoints.add(d.endpointId);
      const q = queues.get(d.tenantId) ?? [];
      q.push(d);
      queues.set(d.tenantId, q);
    }
    const picked: WebhookDelivery[] = [];
    while (picked.length < free) {
      let progress = false;
      for (const [tenantId, q] of queues) {
        if (picked.length >= free) break;
        const n = perTenant.get(tenantId) ?? 0;
        if (q.length === 0 || n >= this.perTenant) continue;
        picked.push(q.shift()!);
        perTenant.set(tenantId, n + 1);
        progress = true;
      }
      if (!progress) break;
    }
    return picked;
  }

  private async attempt(d: WebhookDelivery): Promise<Outcome> {
    const { ctx } = this.o;
    const now = ctx.clock.now();
    // held a little longer than an attempt can take; a crash mid-attempt frees it after that
    const claimed = await ctx.store.tx((r) => r.webhookDeliveries.claim(d.id, now, now + this.timeoutMs + 30_000));
    if (!claimed) return 'skipped';
    const { endpoint, event } = await ctx.store.read(async (r) => ({ endpoint: await r.webhookEndpoints.get(d.endpointId), event: await r.railEvents.get(d.eventId) }));
    if (!endpoint) return 'skipped'; // deleted meanwhile, with its deliveries
    if (!event) {
      await ctx.store.tx((r) => r.webhookDeliveries.update(d.id, { state: 'failed', lockedUntil: null, finishedAt: now }));
      return 'failed';
    }
    const body = JSON.stringify(eventView(event));
    // during a rotation, one v1 per secret (the new one first)
    const signature = await signWebhookPayload(body, signingSecrets(endpoint, this.o.box, now), Math.floor(now / 1000));
    const started = performance.now();
    let status: number | undefined;
    let error: string | undefined;
    try {
      status = (await this.o.send({
        url: endpoint.url,
        body,
        timeoutMs: this.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agentpay-webhooks/1',
          [SIGNATURE_HEADER]: signature,
          'agentpay-event-id': event.id,
          'agentpay-event-type': event.type,
          'agentpay-delivery-id': d.id,
        },
      })).status;
      if (status < 200 || status > 299) error = `the endpoint answered ${status}`;
    } catch (e) {
      // in general words: the tenant reads it, and must not learn what answered inside the network
      error = failureReason(e);
    }
    const at = ctx.clock.now();
    const attempt: WebhookAttempt = { at, durationMs: Math.round(performance.now() - started), ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}) };
    const attempts = [...d.attempts, attempt];
    if (!error) {
      await ctx.store.tx((r) => r.webhookDeliveries.update(d.id, { state: 'delivered', attempts, lockedUntil: null, finishedAt: at }));
      return 'delivered';
    }
    const gaveUp = at - d.createdAt >= this.retryWindowMs;
    await ctx.store.tx((r) => r.webhookDeliveries.update(d.id, gaveUp
      ? { state: 'failed', attempts, lockedUntil: null, finishedAt: at }
      : { attempts, lockedUntil: null, nextAttemptAt: at + retryDelayMs(attempts.length, this.random) }));
    try {
      this.onDeliveryFailed?.({
        tenantId: d.tenantId, endpointId: d.endpointId, deliveryId: d.id, eventType: d.eventType,
        attempt: attempts.length, status: status ?? null, error, gaveUp,
      });
    } catch {
      // a counter must not stop deliveries
    }
    return 'failed';
  }
}
