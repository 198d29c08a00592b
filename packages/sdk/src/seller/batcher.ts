/**
 * The seller's gateway calls, coalesced under load. While `maxInFlight` requests to the
 * gateway are under way, new operations wait, and the next request carries every one
 * that waited (up to `maxOperations`) through POST /v1/x402/batch. An operation that
 * finds a free slot goes at once on its own route, so an idle seller adds no delay and
 * a busy one pays TLS, parsing and authentication once per batch instead of per call
 * (docs/performance.md has the measurements).
 *
 * Each operation settles on its own: its result, or the AgentpayError its route would
 * have produced. A batch request that fails as a whole (network, 5xx, 429, bad key)
 * rejects each of its operations with that error, so per-operation retries still apply,
 * except one refused as larger than the gateway's rate limit allows at all: the batcher then
 * sends batches of at most half that limit, those operations again first.
 * A gateway that does not know the batch route (older than this SDK) answers it 404: the
 * batcher then sends those operations, and all later ones, on their own routes.
 */
import type { AgentpayClient } from '../client/index.js';
import { toError } from '../client/http.js';
import { AgentpayError } from '../errors.js';
import type { PaymentOperation } from '../client/payments.js';

export interface BatchOptions {
  /** the most operations one request carries (1 to 100; default 100) */
  maxOperations?: number;
  /** requests to the gateway under way at once before operations start to wait (default 2) */
  maxInFlight?: number;
}

interface Waiting {
  op: PaymentOperation;
  resolve: (body: unknown) => void;
  reject: (error: unknown) => void;
}

export class GatewayBatcher {
  private maxOperations: number;
  private readonly maxInFlight: number;
  private waiting: Waiting[] = [];
  private inFlight = 0;
  /** set when the gateway has no batch route: from then on every operation goes alone */
  private unbatched = false;

  constructor(private readonly client: AgentpayClient, opts: BatchOptions = {}) {
    this.maxOperations = Math.min(100, Math.max(1, Math.floor(opts.maxOperations ?? 100)));
    this.maxInFlight = Math.max(1, Math.floor(opts.maxInFlight ?? 2));
  }

  /** The operation's answer body (200), or its refusal as the route would have thrown it. */
  run(op: PaymentOperation): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ op, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while ((this.unbatched || this.inFlight < this.maxInFlight) && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.unbatched ? 1 : this.maxOperations);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const w = batch[0]!;
      await this.single(w.op).then(w.resolve, w.reject);
      return;
    }
    let results;
    try {
      results = await this.client.payments.batch(batch.map((w) => w.op));
    } catch (error) {
      if (error instanceof AgentpayError && error.status === 404 && error.code === 'NOT_FOUND') {
        this.unbatched = true;
        await Promise.all(batch.map((w) => this.single(w.op).then(w.resolve, w.reject)));
        return;
      }
      const fits = tooBigFor(error, batch.length);
      if (fits !== undefined) {
        // refused whole before anything ran: send them again, first in line, in batches of half the
        // limit (a batch of the whole limit would spend a window's budget at once)
        this.maxOperations = Math.max(1, Math.floor(fits / 2));
        this.waiting.unshift(...batch);
        return;
      }
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const r = results[i];
      if (!r) w.reject(new Error(`the gateway answered ${results.length} results for a batch of ${batch.length}`));
      else if (r.status < 400) w.resolve(r.body);
      else w.reject(toError({ status: r.status, headers: new Headers(), body: r.body }));
    });
  }

  /** One operation on its own route: what an idle seller sends. */
  private single(op: PaymentOperation): Promise<unknown> {
    const { op: kind, ...body } = op;
    return this.client.http.request('POST', `/v1/x402/${kind}`, { body });
  }
}

/**
 * The most operations a batch may carry when the gateway refused one as larger than its rate
 * limit allows in any window (RATE_LIMITED with `details.limit` below the batch's size), else
 * undefined. Such a batch can never pass; smaller ones can.
 */
function tooBigFor(error: unknown, size: number): number | undefined {
  if (!(error instanceof AgentpayError) || error.code !== 'RATE_LIMITED') return undefined;
  const limit = error.details.limit;
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 && limit < size && error.details.operations === size ? limit : undefined;
}
