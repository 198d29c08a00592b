/**
 * GET /metrics: the gateway's metrics in Prometheus text format (src/gateway/metrics.ts,
 * docs/metrics.md), behind its own setting (config.metrics): off, the route does not exist;
 * loopback, only connections from this machine (the socket's peer, not a forwarded address)
 * that carry no x-forwarded-for, so a proxy on the same machine does not open it to the world;
 * token, `authorization: Bearer TOKEN`. Anything else is answered as if there were no such route.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import type { GatewayMetrics } from '../metrics.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function fromLoopback(request: FastifyRequest): boolean {
  return LOOPBACK.test(request.socket.remoteAddress ?? '') && request.headers['x-forwarded-for'] === undefined;
}

export default async function metricsRoutes(app: FastifyInstance, opts: { metrics: GatewayMetrics }) {
  const setting = app.services.config.metrics ?? { mode: 'off' };
  if (setting.mode === 'off') return;
  const expected = setting.mode === 'token' ? digest(setting.token!) : undefined;
  app.get('/metrics', {
    config: { public: true, errors: ['NOT_FOUND', 'UNAUTHORIZED'] },
    schema: { summary: 'Metrics in Prometheus text format (loopback or token; docs/metrics.md)', response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } } } },
  }, async (request, reply) => {
    if (setting.mode === 'loopback' && !fromLoopback(request)) {
      throw new AppError('NOT_FOUND', 'no route GET /metrics', { method: 'GET' });
    }
    if (expected) {
      const m = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
      // compared as digests: same length, constant time
      if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new AppError('UNAUTHORIZED', 'GET /metrics needs the metrics token: authorization: Bearer TOKEN');
      }
    }
    const { contentType, body } = await opts.metrics.scrape();
    reply.header('cache-control', 'no-store');
    return reply.type(contentType).send(body);
  });
}
