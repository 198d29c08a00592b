/**
 * `agentpay/seller/fastify`: paid fastify routes.
 *
 *   await app.register(agentpaySeller, { gatewayUrl, apiKey, capabilityId: 'cap_…' });
 *   app.get('/forecast', async () => ({ sunny: true }));               // paid
 *   app.get('/health', { config: { agentpay: false } }, async () => 'ok'); // free
 *
 * preHandler: no x-payment -> 402 with a challenge; a proof -> authorize, and only then
 * the handler. onSend: hash exactly the serialized payload, complete or fail, add
 * x-service-receipt and send the same buffer. That hook is appended to each route's own
 * onSend list when the route is registered: route-level hooks run after every instance-level
 * one (the app's and any child plugin's) and in order, so it is the last to see the body,
 * whatever other onSend hooks the route or its plugins declare.
 */
import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { PAYMENT_HEADER } from '../protocol.js';
import { createSellerPayments, handlerTimeoutBody, HEAD_NOT_ALLOWED_BODY, INTERNAL_ERROR_BODY, type PaidCall, type SellerOptions, type SellerPayments } from './core.js';
import { exposeHeaders, preflightHeaders, type CorsOptions } from './cors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the capability this route sells; `false` makes it free */
    agentpay?: { capabilityId: string } | false;
  }
}

export type FastifySellerOptions = (SellerOptions | { seller: SellerPayments }) & {
  /** answer CORS preflights for every path and allow the given origin on paid routes */
  cors?: CorsOptions;
};

async function toBuffer(payload: unknown): Promise<Buffer> {
  if (payload === null || payload === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string') return Buffer.from(payload);
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  if (typeof (payload as Readable).pipe === 'function') {
    const chunks: Buffer[] = [];
    for await (const c of payload as Readable) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
    return Buffer.concat(chunks);
  }
  throw new TypeError('agentpay seller: cannot hash a payload of this type; send a string, Buffer or stream');
}

const plugin: FastifyPluginAsync<FastifySellerOptions> = async (app, opts) => {
  const seller = 'seller' in opts ? opts.seller : createSellerPayments(opts);
  const paid = new WeakMap<FastifyRequest, PaidCall>();
  const deadlines = new WeakMap<FastifyRequest, NodeJS.Timeout>();
  const timeoutMs = seller.handlerTimeoutMs ?? 0;

  const capabilityOf = (request: FastifyRequest): string | undefined => {
    const own = request.routeOptions.config?.agentpay;
    if (own === false) return undefined;
    if (own) return own.capabilityId;
    if (request.routeOptions.url === undefined) return undefined; // 404s are free
    return seller.capabilityFor(request.method, request.routeOptions.url);
  };

  const decorate = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('access-control-expose-headers', exposeHeaders(reply.getHeader('access-control-expose-headers')));
    if (opts.cors && request.headers.origin && !reply.hasHeader('access-control-allow-origin')) reply.header('access-control-allow-origin', opts.cors.origin ?? '*');
  };

  if (opts.cors) {
    const cors = opts.cors;
    app.options('*', { config: { agentpay: false } }, async (request, reply) => {
      const method = request.headers['access-control-request-method'];
      if (typeof method !== 'string') return reply.code(404).send();
      const requested = request.headers['access-control-request-headers'];
      return reply.code(204).headers(preflightHeaders(cors, method, typeof requested === 'string' ? requested : undefined)).send();
    });
  }

  app.addHook('preHandler', async (request, reply) => {
    const capabilityId = capabilityOf(request);
    if (!capabilityId) return;
    if (request.method === 'HEAD') {
      // fastify adds HEAD to every GET route; without a body there is nothing to pay for
      decorate(request, reply);
      await reply.code(405).header('allow', 'GET').header('content-type', 'application/json; charset=utf-8').send(HEAD_NOT_ALLOWED_BODY);
      return reply;
    }
    const header = request.headers[PAYMENT_HEADER];
    const admission = await seller.admit(capabilityId, typeof header === 'string' ? header : undefined);
    if (admission.kind === 'paid') {
      paid.set(request, admission.call);
      if (timeoutMs > 0) {
        // answered 504 in the handler's place; onSend then fails the call as provider_error
        deadlines.set(request, setTimeout(() => {
          if (reply.sent || request.raw.destroyed) return;
          void reply.code(504).header('content-type', 'application/json; charset=utf-8').send(handlerTimeoutBody(timeoutMs));
        }, timeoutMs));
      }
      return;
    }
    decorate(request, reply);
    await reply.code(admission.status).headers(admission.headers).send(admission.body);
    return reply;
  });

  const settleOnSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const call = paid.get(request);
    if (!call) return payload;
    paid.delete(request); // settle once, even if an error handler sends again
    clearTimeout(deadlines.get(request));
    // serialize first, hash this buffer, send this same buffer
    let body: Buffer;
    let threw = false;
    try {
      body = await toBuffer(payload);
    } catch {
      body = Buffer.from(INTERNAL_ERROR_BODY);
      threw = true;
      reply.code(500).header('content-type', 'application/json; charset=utf-8');
    }
    const settled = await seller.settle(call, { statusCode: reply.statusCode, body, threw });
    reply.headers(settled.headers);
    reply.removeHeader('transfer-encoding');
    decorate(request, reply);
    return body;
  };
  app.addHook('onRoute', (route) => {
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...own, settleOnSend] as typeof route.onSend;
  });
};

/** The seller middleware as a fastify plugin (applies to the routes of the instance it is registered on). */
export const agentpaySeller = fp(plugin, { name: 'agentpay-seller', fastify: '5.x' });
export default agentpaySeller;

export { createSellerPayments, responseHashSync, type SellerOptions, type SellerPayments, type PaidCall } from './core.js';
export type { CorsOptions } from './cors.js';
