/**
 * The gateway is a fastify plugin tree: infrastructure first (errors, validation,
 * transport, rate limit, auth), then one route plugin per resource. `server.ts`
 * only starts it; tests build the same app.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { randomId } from '../core/ids.js';
import { maxHeaderSize } from 'node:http';
import errors, { BODY_LIMIT_BYTES, clientErrorHandler, frameworkErrors, rewriteUrl } from './plugins/errors.js';
import validation from './plugins/validation.js';
import transport from './plugins/transport.js';
import limits from './plugins/rate-limit.js';
import auth from './plugins/auth.js';
import routeTable from './plugins/route-table.js';
import strictInputs from './plugins/strict-inputs.js';
import responses from './plugins/responses.js';
import openapi from './plugins/openapi.js';
import requestLog, { type RequestLogSink } from './request-log.js';
import type { Services } from './services.js';
import type { RateCounter } from './rate-counter.js';
import { GatewayMetrics } from './metrics.js';
import metricsRoutes from './routes/metrics.js';
import healthRoutes from './routes/health.js';
import platformRoutes from './routes/platform.js';
import walletRoutes from './routes/wallets.js';
import capabilityRoutes from './routes/capabilities.js';
import providerRoutes from './routes/providers.js';
import discoveryRoutes from './routes/discovery.js';
import signupRoutes from './routes/signup.js';
import accountRoutes from './routes/accounts.js';
import authRoutes from './routes/auth.js';
import paymentRoutes from './routes/payments.js';
import sessionRoutes from './routes/sessions.js';
import x402ExactRoutes from './routes/x402-exact.js';
import receiptRoutes from './routes/receipts.js';
import ratingRoutes from './routes/ratings.js';
import breakerRoutes from './routes/breaker.js';
import policyRoutes from './routes/policies.js';
import approvalRoutes from './routes/approvals.js';
import railRoutes from './routes/rails.js';
import payoutRoutes from './routes/payouts.js';
import sandboxRoutes from './routes/sandbox.js';
import dashboardRoutes from './routes/dashboard.js';
import webhookEndpointRoutes from './routes/webhooks.js';

export interface BuildAppOptions {
  services: Services;
  logger?: FastifyServerOptions['logger'] | false;
  serverFactory?: FastifyServerOptions['serverFactory'];
  /** where the rate limits count (Redis for a fleet); default: in this process */
  rateCounter?: RateCounter;
  /** this gateway's metrics (src/gateway/metrics.ts); default: a registry of its own, with no store gauges */
  metrics?: GatewayMetrics;
  /** where each request's line also goes (DATA_DIR/logs/requests.jsonl); the logger gets it anyway */
  requestLog?: RequestLogSink;
  /** the health routes answer plain HTTP too (plugins/transport.ts): the gateway serves plain HTTP behind a proxy (--no-tls) */
  healthOverPlainHttp?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** this gateway's metrics: other parts count on them, e.g. `app.metrics.webhookDeliveryFailures.inc()` */
    metrics: GatewayMetrics;
  }
}

/**
 * A URL as logged: the path, and of the query only the parameter names. A client that puts
 * a key in a query string (`?api_key=ap_...`) must not get it into the logs; a bare
 * parameter (`?ap_...`) could be a value, so it is redacted whole.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((p) => (p.includes('=') ? `${p.slice(0, p.indexOf('='))}=[redacted]` : p === '' ? '' : '[redacted]'));
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/**
 * What a request log line says of the request: no headers, no raw URL. An error is logged
 * without `rawPacket`, the raw bytes of a request node could not parse (its API key, its body).
 */
const requestSerializers = {
  req: (req: FastifyRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
  err: (err: Error) => {
    const { rawPacket: _raw, ...logged } = pino.stdSerializers.err(err) as ReturnType<typeof pino.stdSerializers.err> & { rawPacket?: unknown };
    return logged;
  },
};

/** The logger options with the request serializer added (it wins over one passed in). */
function withSerializers(logger: BuildAppOptions['logger']): BuildAppOptions['logger'] {
  if (!logger) return false;
  const base = logger === true ? {} : (logger as { serializers?: Record<string, unknown> });
  return { ...base, serializers: { ...base.serializers, ...requestSerializers } } as BuildAppOptions['logger'];
}

export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const { services } = opts;
  const app = Fastify({
    logger: withSerializers(opts.logger),
    // one line per request, at response time (request-log.ts), instead of fastify's two
    logController: new LogController({ disableRequestLogging: true }),
    // only the proxy itself (the peer of the socket, hop 0) is trusted: the client is the address
    // it appended to x-forwarded-for, and entries a client wrote itself come before that and are
    // ignored, so a client cannot pick the IP the per-IP limits count. (`true` would trust every
    // hop; a hop count makes fastify ignore x-forwarded-proto.)
    trustProxy: services.config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    genReqId: () => randomId('request'),
    bodyLimit: BODY_LIMIT_BYTES,
    // unparsable requests and requests while closing are answered in the envelope (plugins/errors.ts)
    clientErrorHandler,
    // what the router would refuse outside the envelope and every hook is refused in them (plugins/errors.ts):
    // bad URLs and a missing Host are marked by rewriteUrl; a path parameter may be as long as a URL can
    // be, and the route's params schema refuses one over 100 characters, naming it
    rewriteUrl,
    frameworkErrors,
    routerOptions: { maxParamLength: maxHeaderSize },
    return503OnClosing: false,
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
    ajv: { customOptions: { coerceTypes: false } },
  } as FastifyServerOptions);

  app.decorate('services', services);
  const metrics = opts.metrics ?? new GatewayMetrics({ now: () => services.ctx.clock.now() });
  app.decorate('metrics', metrics);
  await app.register(requestLog, { clock: services.ctx.clock, redactUrl, sink: opts.requestLog });
  await app.register(errors);
  await app.register(validation);
  await app.register(transport, { healthOverPlainHttp: opts.healthOverPlainHttp === true });
  await app.register(limits, {
    config: services.config,
    ...(opts.rateCounter ? { counter: opts.rateCounter } : {}),
    onLimited: (limit) => metrics.rateLimited.inc({ limit }),
  });
  await app.register(auth, { ctx: services.ctx });
  await app.register(strictInputs);
  await app.register(responses, { validate: services.config.validateResponses });
  await app.register(routeTable);
  await app.register(openapi);

  await app.register(healthRoutes);
  await app.register(metricsRoutes, { metrics });
  await app.register(platformRoutes);
  await app.register(walletRoutes);
  await app.register(capabilityRoutes);
  await app.register(providerRoutes);
  await app.register(discoveryRoutes);
  await app.register(signupRoutes);
  await app.register(accountRoutes);
  await app.register(authRoutes);
  await app.register(paymentRoutes);
  await app.register(sessionRoutes);
  await app.register(x402ExactRoutes);
  await app.register(receiptRoutes);
  await app.register(ratingRoutes);
  await app.register(breakerRoutes);
  await app.register(policyRoutes);
  await app.register(approvalRoutes);
  await app.register(railRoutes);
  await app.register(payoutRoutes);
  await app.register(sandboxRoutes);
  await app.register(dashboardRoutes);
  await app.register(webhookEndpointRoutes);
  return app;
}
