/**
 * `agentpay-sdk/seller/hono`: paid hono routes (hono is an optional peer dependency).
 *
 *   const app = new Hono();
 *   app.use('/forecast/*', agentpayHono({ gatewayUrl, apiKey, capabilityId: 'cap_…' }));
 *   app.get('/forecast/:city', (c) => c.json({ sunny: true, paidBy: c.get('agentpayCall')?.walletId }));
 *
 * The web-standard seller (web.ts) around `next()`: unpaid, refused, HEAD and preflight requests
 * are answered by the middleware; an admitted call runs the rest of the chain within the time
 * limit, and its response (c.res) is hashed, completed or failed and answered with
 * x-service-receipt. An error the app's error handler turns into a 5xx settles as a provider
 * error, a 4xx (an HTTPException) as a client error. Use `app.use` (not only `app.get`) for CORS
 * preflights to reach the middleware; a hono `cors()` middleware placed before this one must
 * expose x-payment and x-service-receipt itself, or leave CORS to this middleware's `cors` option.
 */
import type { MiddlewareHandler } from 'hono';
import type { PaidCall } from './core.js';
import { webSeller, type WebSellerOptions } from './web.js';

/** The context variable a paid handler reads its call from: `c.get('agentpayCall')`. */
export type AgentpayVariables = { agentpayCall: PaidCall | undefined };

export function agentpayHono(opts: WebSellerOptions = {}): MiddlewareHandler<{ Variables: AgentpayVariables }> {
  const web = webSeller(opts);
  return async (c, next) => {
    let ran = false;
    const res = await web.serve(c.req.raw, async ({ call }) => {
      ran = true;
      c.set('agentpayCall', call);
      await next();
      // the app's error handler answered a thrown error: a 5xx fails as provider_error, a 4xx as client_error
      if (c.error && c.res.status < 400) throw c.error;
      return c.res;
    });
    if (!ran) return res; // answered without the handler (402, refusal, 405, preflight)
    // replaces the handler's response as is (assigning over it would copy its headers back on)
    c.res = undefined;
    c.res = res;
  };
}

export default agentpayHono;

export { paidHandler, webSeller, type PaidContext, type WebSellerOptions } from './web.js';
export { createSellerPayments, type PaidCall, type SellerOptions, type SellerPayments } from './core.js';
export type { CorsOptions } from './cors.js';
