/**
 * Plain HTTP is refused before anything else happens, authentication included. The
 * gateway serves one app on an HTTPS listener and a plain listener; `request.protocol`
 * tells them apart (and, with trustProxy, honours x-forwarded-proto from the proxy).
 *
 * One exception, `healthOverPlainHttp` (a gateway started with --no-tls, behind a proxy): the
 * health routes (config `health`, routes/health.ts) answer plain HTTP too, because a load
 * balancer's health check goes straight to the instance, without x-forwarded-proto. They say
 * nothing secret and take no key. A gateway serving HTTPS itself keeps its refuse-only plain
 * listener refusing everything.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { insecureTransportError, sendError } from './errors.js';

export interface TransportOptions {
  /** the health routes answer plain HTTP (the gateway serves plain HTTP behind a proxy) */
  healthOverPlainHttp?: boolean;
}

export default fp(async function transport(app: FastifyInstance, opts: TransportOptions) {
  const healthExempt = opts.healthOverPlainHttp === true;
  app.addHook('onRequest', async (request, reply) => {
    if (request.protocol !== 'https') {
      if (healthExempt && request.routeOptions.config?.health === true) return;
      return sendError(reply, insecureTransportError(request.protocol));
    }
  });
});
