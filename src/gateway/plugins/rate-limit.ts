/**
 * 50 requests a second per key (per IP without one), and a stricter separate per-IP
 * budget on signup and password recovery. Keys are hashed before they become
 * counters, so no secret sits in the limiter's memory. A key the gateway does not know
 * counts as no key: otherwise a new made-up key per request would escape the per-IP limit.
 *
 * The payment operations a seller's middleware calls on every purchase (challenge, authorize,
 * complete, fail) have a limit of their own per key and per operation (`paymentMax`), apart
 * from the general one: see `PaymentLimits`.
 *
 * With a shared counter (Redis, `config.redis`) every limit counts across all gateways of a
 * fleet; what happens when Redis is down is in src/gateway/rate-counter.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { AppError } from '../../core/errors.js';
import { notFoundHandler } from './errors.js';
import { hashKey } from '../../domain/tenancy/api-keys.js';
import type { DomainContext } from '../../domain/platform/context.js';
import { DEFAULT_CONFIG, type GatewayConfig } from '../config.js';
import { LocalCounter, type RateCounter } from '../rate-counter.js';

declare module 'fastify' {
  interface FastifyInstance {
    paymentLimits: PaymentLimits;
  }
}

export const PAYMENT_OPERATIONS = ['challenge', 'authorize', 'complete', 'fail'] as const;
export type PaymentOperation = (typeof PAYMENT_OPERATIONS)[number];

const KNOWN_KEYS_CACHED = 10_000;

/**
 * The 429 of a limit of `windowMs`. The window comes from the limit's own settings: the
 * library's context only has the time left until the window resets (`after`, `ttl`).
 */
function rateLimitedError(windowMs: number) {
  const window = `${windowMs / 1000} second${windowMs === 1000 ? '' : 's'}`;
  return (_request: FastifyRequest, context: { max: number; ttl: number }): object => {
    const retryAfterSeconds = Math.ceil(context.ttl / 1000);
    const e = new AppError('RATE_LIMITED', `too many requests: at most ${context.max} per ${window}; retry after ${retryAfterSeconds}s`, {
      limit: context.max,
      retryAfterSeconds,
    });
    // @fastify/rate-limit throws what this returns; the error handler renders AppError
    return e as unknown as object;
  };
}

function limiterKey(ctx: DomainContext): (request: FastifyRequest) => Promise<string> {
  // hashes of keys seen in the database; revocation does not matter here (auth answers 401)
  const known = new Map<string, true>();
  return async (request: FastifyRequest): Promise<string> => {
    const h = request.headers['x-api-key'];
    const key = Array.isArray(h) ? h[0] : h;
    if (!key) return `ip:${request.ip}`;
    const hash = hashKey(key);
    if (!known.has(hash)) {
      if (!(await ctx.store.read((r) => r.apiKeys.byHash(hash)))) return `ip:${request.ip}`;
      if (known.size >= KNOWN_KEYS_CACHED) known.delete(known.keys().next().value!);
      known.set(hash, true);
    }
    return `k:${hash.slice(0, 32)}`;
  };
}

export interface LimitsOptions {
  config: GatewayConfig;
  /** where the limits count; default: in this process, on the domain's clock */
  counter?: RateCounter;
  /** told of every request a limit refuses (metrics) */
  onLimited?: (limit: 'general' | 'signup' | 'payment') => void;
}

export default fp(async function limits(app: FastifyInstance, opts: LimitsOptions) {
  const { rateLimit: rl } = opts.config;
  const keyOf = limiterKey(app.services.ctx);
  const counter = opts.counter ?? new LocalCounter(app.services.ctx.clock);
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: rl.max,
    timeWindow: rl.windowMs,
    keyGenerator: keyOf,
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: rateLimitedError(rl.windowMs),
    ...(opts.onLimited ? { onExceeded: (request: FastifyRequest) => opts.onLimited!(request.routeOptions.config && (request.routeOptions.config as { rateLimit?: { keyGenerator?: unknown } }).rateLimit ? 'signup' : 'general') } : {}),
    // without a shared counter, one in this process on the gateway's clock (a test moves the
    // clock past a window instead of waiting for it)
    store: counterStore(counter),
  });
  // requests no route serves count too: otherwise probing unknown paths would be unlimited
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, notFoundHandler);
  app.decorate('paymentLimits', new PaymentLimits(counter, keyOf, { ...DEFAULT_CONFIG.rateLimit, ...rl }, opts.onLimited));
});

/**
 * The library's store on a RateCounter (the Redis one, for a fleet). A route with a limit of
 * its own (signup) counts under its method and path, as the library's stores do.
 */
function counterStore(counter: RateCounter, prefix = 'g:'): FastifyRateLimitStoreCtor {
  return class CounterStore {
    incr(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void {
      counter.incr(prefix + key, timeWindow ?? 1000).then(
        (r) => cb(null, { current: r.current, ttl: r.ttlMs }),
        (e: Error) => cb(e),
      );
    }
    child(routeOptions: { routeInfo?: { method?: string; url?: string } }) {
      const Child = counterStore(counter, `${prefix}${routeOptions.routeInfo?.method ?? ''}${routeOptions.routeInfo?.url ?? ''}:`);
      return new Child({});
    }
  } as unknown as FastifyRateLimitStoreCtor;
}

/**
 * Challenge, authorize, complete and fail: `paymentMax` per `paymentWindowMs` per key, each
 * operation on a counter of its own, none on the general budget. A purchase costs its seller a
 * challenge, an authorize and a complete (one each of their own budgets), so the general limit
 * (50/s by default) no longer holds a seller key to about 16 paid calls a second: it gets
 * `paymentMax` purchases a window. In a batch (one request on the general budget) each of these
 * operations counts on its own counter too, all of the batch or none of it.
 */
export class PaymentLimits {
  constructor(
    private readonly counter: RateCounter,
    private readonly keyOf: (request: FastifyRequest) => Promise<string>,
    private readonly rl: Required<GatewayConfig['rateLimit']>,
    private readonly onLimited?: (limit: 'payment') => void,
  ) {}

  /** the counter of an operation for this caller; the caller's counters share a Redis Cluster hash tag */
  private key(op: PaymentOperation, caller: string) {
    return `pay:${op}:{${caller}}`;
  }

  private window() {
    const w = this.rl.paymentWindowMs;
    return `${w / 1000} second${w === 1000 ? '' : 's'}`;
  }

  /** onRequest hook of the route of `op` (its route config turns the general limit off) */
  hook(op: PaymentOperation) {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const { allowed, counts } = await this.counter.take([{ key: this.key(op, await this.keyOf(request)), n: 1 }], this.rl.paymentMax, this.rl.paymentWindowMs);
      const c = counts[0]!;
      const reset = Math.ceil(c.ttlMs / 1000);
      reply.header('x-ratelimit-limit', this.rl.paymentMax);
      reply.header('x-ratelimit-remaining', Math.max(0, this.rl.paymentMax - c.current));
      reply.header('x-ratelimit-reset', reset);
      if (allowed) return;
      this.onLimited?.('payment');
      reply.header('retry-after', reset);
      throw new AppError('RATE_LIMITED', `too many ${op} requests: at most ${this.rl.paymentMax} per ${this.window()} for each payment operation; retry after ${reset}s`, {
        limit: this.rl.paymentMax,
        operation: op,
        retryAfterSeconds: reset,
      });
    };
  }

  /**
   * Counts a batch's operations (challenge, authorize, complete, fail) on their counters, all
   * or none; RATE_LIMITED (nothing counted) when one does not fit.
   */
  async takeBatch(request: FastifyRequest, reply: FastifyReply, operations: Partial<Record<string, number>>): Promise<void> {
    const { paymentMax: max, paymentWindowMs } = this.rl;
    const ops = PAYMENT_OPERATIONS.filter((op) => (operations[op] ?? 0) > 0);
    if (ops.length === 0) return;
    const tooMany = ops.find((op) => operations[op]! > max);
    if (tooMany) {
      this.onLimited?.('payment');
      throw new AppError('RATE_LIMITED', `too many ${tooMany} operations: this gateway allows ${max} per ${this.window()} for each payment operation; send at most ${max} ${tooMany} operations per batch`, {
        limit: max,
        operation: tooMany,
        operations: operations[tooMany],
      });
    }
    const caller = await this.keyOf(request);
    const { allowed, counts } = await this.counter.take(ops.map((op) => ({ key: this.key(op, caller), n: operations[op]! })), max, paymentWindowMs);
    if (allowed) return;
    this.onLimited?.('payment');
    const i = ops.findIndex((op, j) => counts[j]!.current + operations[op]! > max);
    const op = ops[i]!;
    const retryAfterSeconds = Math.ceil(counts[i]!.ttlMs / 1000);
    reply.header('retry-after', String(retryAfterSeconds));
    throw new AppError('RATE_LIMITED', `too many ${op} operations: ${Math.max(0, max - counts[i]!.current)} of ${max} per ${this.window()} were left for ${operations[op]}; nothing was run, retry after ${retryAfterSeconds}s or with fewer operations`, {
      limit: max,
      operation: op,
      operations: operations[op],
      remaining: Math.max(0, max - counts[i]!.current),
      retryAfterSeconds,
    });
  }
}

/**
 * Route config for signup and password recovery:
 *   config: { public: true, rateLimit: strictRateLimit(config) }
 */
export function strictRateLimit(config: GatewayConfig) {
  return {
    max: config.rateLimit.signupMax,
    timeWindow: config.rateLimit.signupWindowMs,
    // a route's options replace the global ones, so its message names its own window
    errorResponseBuilder: rateLimitedError(config.rateLimit.signupWindowMs),
    keyGenerator: (request: FastifyRequest) => `strict:${request.ip}`,
  };
}
