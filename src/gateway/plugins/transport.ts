/**
 * Plain HTTP is refused before anything else happens, authentication included. The
 * gateway serves one app on an HTTPS listener and a plain listener; `request.protocol`
 * tells them apart (and, with trustProxy, honours x-forwarded-proto from the proxy).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { insecureTransportError, sendError } from './errors.js';

export default fp(async function transport(app: FastifyInstance) {
  app.addHook('onRequest', async (request, reply) => {
    if (request.protocol !== 'https') {
      return sendError(reply, insecureTransportError(request.protocol));
    }
  });
});
