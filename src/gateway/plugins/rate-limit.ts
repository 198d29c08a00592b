/**
 * 50 requests a second per key (per IP without one), and a stricter separate per-IP
 * budget on signup and password recovery. Keys are hashed before they become
 * counters, so no secret sits in the limiter's memory. A key the gateway does not know
 * counts as no key: otherwise a new made-up key per request would escape the per-IP limit.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { AppError } from '../../core/errors.js';
import { notFoundHandler } from './errors.js';
import { hashKey } from '../../domain/api-keys.js';
import type { DomainContext } from '../../domain/context.js';
import type { GatewayConfig } from '../config.js';

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

function limiterKey(ctx: DomainContext) {
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

export default fp(async function limits(app: FastifyInstance, opts: { config: GatewayConfig }) {
  const { rateLimit: rl } = opts.config;
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: rl.max,
    timeWindow: rl.windowMs,
    keyGenerator: limiterKey(app.services.ctx),
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: rateLimitedError(rl.windowMs),
  });
  // requests no route serves count too: otherwise probing unknown paths would be unlimited
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, notFoundHandler);
});

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
