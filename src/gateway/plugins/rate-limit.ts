/**
 * 50 requests a second per key (per IP without one), and a stricter separate per-IP
 * budget on signup and password recovery. Keys are hashed before they become
 * counters, so no secret sits in the limiter's memory.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import { AppError } from '../../core/errors.js';
import type { GatewayConfig } from '../config.js';

function keyOf(request: FastifyRequest): string {
  const h = request.headers['x-api-key'];
  const key = Array.isArray(h) ? h[0] : h;
  return key ? `k:${createHash('sha256').update(key).digest('base64url').slice(0, 22)}` : `ip:${request.ip}`;
}

export default fp(async function limits(app: FastifyInstance, opts: { config: GatewayConfig }) {
  const { rateLimit: rl } = opts.config;
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: rl.max,
    timeWindow: rl.windowMs,
    keyGenerator: keyOf,
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) => {
      const e = new AppError('RATE_LIMITED', `too many requests: at most ${context.max} per ${context.after}; retry after ${Math.ceil(context.ttl / 1000)}s`, {
        limit: context.max,
        retryAfterSeconds: Math.ceil(context.ttl / 1000),
      });
      // @fastify/rate-limit throws what this returns; the error handler renders AppError
      return e as unknown as object;
    },
  });
});

/**
 * Route config for signup and password recovery:
 *   config: { public: true, rateLimit: strictRateLimit(config) }
 */
export function strictRateLimit(config: GatewayConfig) {
  return {
    max: config.rateLimit.signupMax,
    timeWindow: config.rateLimit.signupWindowMs,
    keyGenerator: (request: FastifyRequest) => `strict:${request.ip}`,
  };
}
