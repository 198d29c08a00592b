/**
 * `agentpay-sdk/seller/fastify`: paid fastify routes.
 *
 *   await app.register(agentpaySeller, { gatewayUrl, apiKey, capabilityId: 'cap_…' });
 *   app.get('/forecast', async () => ({ sunny: true }));               // paid
 *   app.get('/health', { config: { agentpay: false } }, async () => 'ok'); // free
 *
 * preHandler: the seller core's decision (core.ts) -> its answer (402 with a challenge, a
 * refusal), or, admitted, the handler. onSend: hash exactly the serialized payload, complete or
 * fail (core `finish`), add its headers (x-service-receipt, CORS) and send the same buffer. That hook is appended to each route's own
 * onSend list when the route is registered: route-level hooks run after every instance-level
 * one (the app's and any child plugin's) and in order, so it is the last to see the body,
 * whatever other onSend hooks the route or its plugins declare.
 *
 * Only routes registered after the plugin are sold (onRoute sees only those): a route registered
 * before it gets the instance's hooks too, so the preHandler admits only routes onRoute marked.
 * One that declares `config.agentpay` anyway is a setup error, refused at ready.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { PAYMENT_HEADER } from '../protocol.js';
import { createSellerPayments, decide, finish, renderHeader, startDeadline, thrownAnswer, timeoutAnswer, type AdmittedDecision, type Answer, type PaidCall, type SellerOptions, type SellerPayments } from './core.js';
import { preflightHeaders, type CorsOptions } from './cors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the capability this route sells; `false` makes it free */
    agentpay?: { capabilityId: string } | false;
  }
  interface FastifyReply {
    /**
     * The paid call a handler serves (transaction, buyer wallet, amount), null on a free route. A
     * metered capability's handler reports its usage with `reply.agentpay?.charge(units)`.
     */
    agentpay: PaidCall | null;
  }
}

export type FastifySellerOptions = (SellerOptions | { seller: SellerPayments }) & {
  /** answer CORS preflights for every path and allow the given origin on paid routes */
  cors?: CorsOptions;
};

const firstHeader = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

const isWebResponse = (payload: unknown): payload is Response =>
  typeof payload === 'object' && payload !== null && Object.prototype.toString.call(payload) === '[object Response]';

const chunkBuffer = (c: unknown): Buffer => (Buffer.isBuffer(c) ? c : typeof c === 'string' ? Buffer.from(c) : Buffer.from(c as Uint8Array));

/**
 * The payload as the bytes fastify would send: strings, buffers, node and web streams (read
 * whole), and a web Response, whose status and headers go on the reply as fastify would put them.
 */
async function toBuffer(payload: unknown, reply: FastifyReply): Promise<Buffer> {
  if (isWebResponse(payload)) {
    reply.code(payload.status);
    payload.headers.forEach((value, name) => reply.header(name, value));
    return toBuffer(payload.body, reply);
  }
  if (payload === null || payload === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string') return Buffer.from(payload);
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  const chunks: Buffer[] = [];
  if (typeof (payload as Readable).pipe === 'function') {
    for await (const c of payload as Readable) chunks.push(chunkBuffer(c));
    return Buffer.concat(chunks);
  }
  if (typeof (payload as ReadableStream).getReader === 'function') {
    const reader = (payload as ReadableStream<unknown>).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(chunkBuffer(r.value));
    return Buffer.concat(chunks);
  }
  throw new TypeError('agentpay seller: cannot hash a payload of this type; send a string, Buffer, stream or Response');
}

/**
 * Routes that declare `config.agentpay`, per server, as they are registered: fastify publishes
 * every new instance on this channel (its documented hook for instrumentation), so the plugin can
 * find, at ready, the routes registered before it, which its own onRoute never sees.
 */
const declared = new WeakMap<object, { instance: FastifyInstance; route: RouteOptions }[]>();
subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onRoute', function (this: FastifyInstance, route) {
    if (!route.config?.agentpay) return;
    const list = declared.get(fastify.server) ?? [];
    list.push({ instance: this, route });
    declared.set(fastify.server, list);
  });
});

/** Marks an instance (and, through the prototype chain, its children) as selling through agentpay. */
const REGISTERED = Symbol.for('agentpay.seller');

const plugin: FastifyPluginAsync<FastifySellerOptions> = async (app, opts) => {
  if (app.hasDecorator(REGISTERED)) {
    throw new Error('agentpay seller: agentpaySeller is already registered on this fastify instance (or a parent of it); register it once, and choose capabilities per route with config.agentpay or the routes option');
  }
  app.decorate(REGISTERED, true);
  if (!app.hasReplyDecorator('agentpay')) app.decorateReply('agentpay', null);
  const seller = 'seller' in opts ? opts.seller : createSellerPayments(opts);
  // the last claims of payment sessions when the server closes (a seller passed in is its owner's to close)
  if (!('seller' in opts)) app.addHook('onClose', async () => { await seller.close?.(); });
  /** set on the config of every route this plugin's onRoute saw: the only routes it sells */
  const ours = Symbol('agentpay.route');
  const paid = new WeakMap<FastifyRequest, { admitted: AdmittedDecision; stop: () => void; timedOut: boolean }>();

  const capabilityOf = (request: FastifyRequest): string | undefined => {
    const config = request.routeOptions.config as { agentpay?: { capabilityId: string } | false; [ours]?: true } | undefined;
    // not a route registered after the plugin (one before it, a 404): free; refused at ready if it asks to be sold
    if (config?.[ours] !== true) return undefined;
    const own = config.agentpay;
    if (own === false) return undefined;
    if (own) return own.capabilityId;
    if (request.routeOptions.url === undefined) return undefined;
    return seller.capabilityFor(request.method, request.routeOptions.url);
  };

  /** A decision's headers on the reply, merged with what it has (core renderHeader). */
  const putHeaders = (reply: FastifyReply, headers: Record<string, string>) => {
    for (const [name, value] of Object.entries(headers)) {
      const existing = reply.getHeader(name);
      reply.header(name, renderHeader(name, existing === undefined ? undefined : String(existing), value));
    }
  };
  const sendAnswer = async (reply: FastifyReply, answer: Answer) => {
    putHeaders(reply, answer.headers);
    await reply.code(answer.status).send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
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
    const header = request.headers[PAYMENT_HEADER];
    const origin = request.headers.origin;
    const decision = await decide(seller, {
      method: request.method,
      capabilityId: capabilityOf(request),
      payment: typeof header === 'string' ? header : undefined,
      origin: typeof origin === 'string' ? origin : undefined,
      http: { header: (name) => firstHeader(request.headers[name]), path: request.url, secure: request.protocol === 'https' },
      // parsed by now (preHandler): the idempotency fingerprint hashes it as JSON, or its bytes
      body: request.body,
    }, opts.cors);
    if (decision.kind === 'free') return;
    if (decision.kind === 'admitted') {
      const state = { admitted: decision, stop: () => {}, timedOut: false };
      paid.set(request, state);
      reply.agentpay = decision.call;
      // answered 504 in the handler's place; onSend then fails the call as provider_error
      state.stop = startDeadline(decision, () => {
        // not request.raw.destroyed: node sets it once a request body was read, and a buyer
        // that left still has a hold that only this answer's `fail` releases
        if (reply.sent) return;
        state.timedOut = true;
        const answer = timeoutAnswer(decision);
        void reply.code(answer.status).headers(answer.headers).send(Buffer.from(answer.body));
      });
      return;
    }
    await sendAnswer(reply, decision);
    return reply;
  });

  const settleOnSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = paid.get(request);
    if (!state) return payload;
    paid.delete(request); // settle once, even if an error handler sends again
    state.stop();
    // serialize first, hash this buffer, send this same buffer
    let body: Buffer;
    let threw = state.timedOut;
    try {
      body = await toBuffer(payload, reply);
    } catch {
      const answer = thrownAnswer();
      body = Buffer.from(answer.body);
      threw = true;
      reply.code(answer.status).headers(answer.headers);
    }
    const contentType = reply.getHeader('content-type');
    const answer = await finish(seller, state.admitted, { status: reply.statusCode, body, threw, ...(typeof contentType === 'string' ? { contentType } : {}) });
    putHeaders(reply, answer.headers);
    reply.removeHeader('transfer-encoding');
    if (answer.bodyless) {
      reply.removeHeader('content-length');
      return null; // fastify sends no body and no content-length for a null payload
    }
    return body;
  };
  app.addHook('onRoute', (route) => {
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...own, settleOnSend] as typeof route.onSend;
    route.config = { ...route.config, [ours]: true } as typeof route.config;
  });

  app.addHook('onReady', async () => {
    const early = (declared.get(app.server) ?? [])
      .filter(({ instance, route }) => (instance === app || Object.prototype.isPrototypeOf.call(app, instance)) && (route.config as Record<symbol, unknown>)[ours] !== true)
      .map(({ route }) => `${[route.method].flat().join(',')} ${route.url}`);
    // fastify adds a HEAD route for each GET one: name the GET only
    const names = [...new Set(early)].filter((n, _i, all) => !(n.startsWith('HEAD ') && all.includes(`GET ${n.slice(5)}`)));
    if (names.length > 0) {
      throw new Error(`agentpay seller: ${names.join(', ')} ${names.length === 1 ? 'declares' : 'declare'} config.agentpay but ${names.length === 1 ? 'was' : 'were'} registered before the agentpaySeller plugin, which sells only routes registered after it; register the plugin first`);
    }
  });
};

/** The seller middleware as a fastify plugin (applies to the routes of the instance it is registered on). */
export const agentpaySeller = fp(plugin, { name: 'agentpay-seller', fastify: '5.x' });
export default agentpaySeller;

export { createSellerPayments, type SellerOptions, type SellerPayments, type PaidCall } from './core.js';
export { responseHashSync } from './sync-hash.js';
export type { CorsOptions } from './cors.js';
