/**
 * `agentpay-sdk/seller/web`: paid web-standard handlers, `Request → Response`: Next.js route
 * handlers, Cloudflare Workers, Bun.serve, Deno.serve, and hono (./hono.ts) on top of it.
 *
 *   export const GET = paidHandler({ gatewayUrl, apiKey, capabilityId }, async (req, { call }) =>
 *     Response.json({ sunny: true, paidBy: call?.walletId }));
 *
 * The seller core (core.ts) decides and this file renders: an unpaid call is answered 402 with a
 * challenge, a refused proof with the gateway's refusal, HEAD with 405, a CORS preflight with 204;
 * an admitted call runs the handler within the time limit, its Response is read whole, hashed,
 * completed or failed, and the same bytes are answered with x-service-receipt. A handler that
 * throws is answered 500 (provider error, refund), one past its time 504.
 *
 * Nothing here needs Node (WebCrypto, fetch, Request/Response); `ca` is the one Node-only option.
 */
import { PAYMENT_HEADER } from '../protocol.js';
import {
  createSellerPayments, decide, finish, renderHeader, runWithinDeadline, thrownAnswer, timeoutAnswer,
  type AdmittedDecision, type Answer, type PaidCall, type SellerOptions, type SellerPayments,
} from './core.js';
import type { CorsOptions } from './cors.js';

export type WebSellerOptions = (SellerOptions | { seller: SellerPayments; capabilityId?: string }) & {
  /** answer CORS preflights of paid routes and allow the given origin */
  cors?: CorsOptions;
};

/** What a paid handler is told besides the request. */
export interface PaidContext {
  /** the authorized call (transaction, buyer wallet, amount); undefined on a free route */
  call: PaidCall | undefined;
}

/**
 * A web handler. Extra arguments the platform passes after the request (Next.js `{ params }`,
 * a Worker's `env` and `ctx`) are passed on after the context.
 */
export type WebHandler<A extends unknown[] = []> = (req: Request, ctx: PaidContext, ...rest: A) => Response | Promise<Response>;

/** The seller behind a web adapter: the gateway connection, the route lookup and the CORS setting. */
export interface WebSeller {
  readonly seller: SellerPayments;
  /**
   * Runs the payment table around `run`: answers unpaid, refused, HEAD and preflight requests
   * itself; `run` is called only for a free route or an admitted call, and its Response is settled.
   */
  serve(req: Request, run: (ctx: PaidContext) => Response | Promise<Response>): Promise<Response>;
}

const toResponse = (answer: Answer, base?: Headers): Response => {
  const headers = new Headers(base);
  for (const [name, value] of Object.entries(answer.headers)) headers.set(name, renderHeader(name, headers.get(name) ?? undefined, value));
  return new Response(answer.body.byteLength > 0 ? (answer.body as Uint8Array<ArrayBuffer>) : null, { status: answer.status, headers });
};

/** The payment table for web requests; `paidHandler` and the hono middleware are made of it. */
export function webSeller(opts: WebSellerOptions = {}): WebSeller {
  const seller = 'seller' in opts ? opts.seller : createSellerPayments(opts);
  const fixed = 'seller' in opts ? opts.capabilityId : undefined;

  /** The handler's answer as it will be sent, or the seller's own in its place. */
  async function outcomeOf(admitted: AdmittedDecision, run: () => Response | Promise<Response>): Promise<{ status: number; headers: Headers; body: Uint8Array; threw: boolean }> {
    const ran = await runWithinDeadline(admitted, async () => {
      const res = await run();
      if (!(res instanceof Response)) throw new TypeError('agentpay seller: a paid web handler must return a Response');
      // read whole inside the time limit: a stream that never ends is a handler that never answers
      return { status: res.status, headers: new Headers(res.headers), body: new Uint8Array(await res.arrayBuffer()) };
    });
    if (ran.kind === 'done') return { ...ran.value, threw: false };
    const answer = ran.kind === 'timeout' ? timeoutAnswer(admitted) : thrownAnswer();
    return { status: answer.status, headers: new Headers(answer.headers), body: answer.body, threw: true };
  }

  return {
    seller,
    async serve(req, run) {
      const url = new URL(req.url);
      const preflightMethod = req.method === 'OPTIONS' ? req.headers.get('access-control-request-method') : null;
      // a preflight is looked up by the method it asks about, so that a 'GET /x' route answers it
      const capabilityId = fixed ?? seller.capabilityFor(preflightMethod ?? req.method, url.pathname);
      const decision = await decide(seller, {
        method: req.method,
        capabilityId,
        payment: req.headers.get(PAYMENT_HEADER) ?? undefined,
        origin: req.headers.get('origin') ?? undefined,
        preflight: preflightMethod ? { method: preflightMethod, headers: req.headers.get('access-control-request-headers') ?? undefined } : undefined,
        http: { header: (name) => req.headers.get(name) ?? undefined, path: url.pathname + url.search, origin: url.origin },
        // read only for a call with an idempotency key (its fingerprint), from a clone: the handler reads the request
        body: async () => (req.body ? new Uint8Array(await req.clone().arrayBuffer()) : undefined),
      }, opts.cors);
      if (decision.kind === 'free') return run({ call: undefined });
      if (decision.kind !== 'admitted') return toResponse(decision);

      const outcome = await outcomeOf(decision, () => run({ call: decision.call }));
      const answer = await finish(seller, decision, { status: outcome.status, body: outcome.body, threw: outcome.threw, contentType: outcome.headers.get('content-type') ?? undefined });
      // the body is sent as bytes: the platform sets its length; a 204/304 goes without one
      outcome.headers.delete('content-length');
      outcome.headers.delete('transfer-encoding');
      return toResponse(answer.bodyless ? { ...answer, body: new Uint8Array(0) } : answer, outcome.headers);
    },
  };
}

/**
 * Wraps a web handler so that it runs only for paid calls (or as is on a route the options do
 * not sell). The result is a plain `(req, ...rest) => Promise<Response>`: export it as a Next.js
 * route handler, a Worker's `fetch`, or pass it to `Bun.serve` / `Deno.serve`.
 */
export function paidHandler<A extends unknown[] = []>(opts: WebSellerOptions, handler: WebHandler<A>): (req: Request, ...rest: A) => Promise<Response> {
  const web = webSeller(opts);
  return (req, ...rest) => web.serve(req, (ctx) => handler(req, ctx, ...rest));
}

export { createSellerPayments, type PaidCall, type SellerOptions, type SellerPayments } from './core.js';
export type { CorsOptions } from './cors.js';
