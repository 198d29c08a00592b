/**
 * The demo's sample seller: a plain node:http server on 127.0.0.1 (a loopback http://
 * endpoint is allowed) with agentpay's node seller middleware, `paid()`. Two paid
 * routes and a free one:
 *   GET /forecast?city=…  100 minor units, answers 200 with a forecast
 *   GET /alerts?region=…  100 minor units, answers 503 (its feed is down): a provider
 *                         error, so the buyer's hold is refunded
 *   GET /health           free
 * It listens before its capabilities exist, so they can be published with its real
 * URL; `sell` then puts the paid handler in place.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paid } from 'agentpay-sdk/seller/node';

export interface DemoSellerOptions {
  gatewayUrl: string;
  /** the gateway's CA (PEM): the seller middleware calls the gateway over HTTPS */
  ca: string;
  /** a provider key with payments:write */
  apiKey: string;
}

export interface DemoSeller {
  /** http://127.0.0.1:PORT */
  url: string;
  /** problems the middleware met that the buyer cannot see (none expected) */
  errors: string[];
  sell(caps: { forecast: string; alerts: string }): void;
  close(): Promise<void>;
}

const TEMPERATURES: Record<string, number> = { lisbon: 21, faro: 24, porto: 17 };

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(value));
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://seller');
  switch (url.pathname) {
    case '/forecast': {
      const city = url.searchParams.get('city') ?? 'Lisbon';
      return sendJson(res, 200, { city, forecast: 'sunny', tempC: TEMPERATURES[city.toLowerCase()] ?? 20 });
    }
    case '/alerts':
      return sendJson(res, 503, { error: { code: 'UPSTREAM_DOWN', message: 'the storm-alert feed is down; try again later' } });
    case '/health':
      return sendJson(res, 200, { ok: true });
    default:
      return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no route ${url.pathname}` } });
  }
}

export async function startDemoSeller(opts: DemoSellerOptions): Promise<DemoSeller> {
  const errors: string[] = [];
  let handler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  const server = http.createServer((req, res) => {
    if (!handler) return sendJson(res, 503, { error: { code: 'NOT_READY', message: 'not selling yet' } });
    handler(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    errors,
    sell(caps) {
      handler = paid(route, {
        gatewayUrl: opts.gatewayUrl,
        apiKey: opts.apiKey,
        ca: opts.ca,
        routes: { 'GET /forecast': caps.forecast, 'GET /alerts': caps.alerts },
        onError: (e, c) => errors.push(`${c.stage}: ${(e as Error).message}`),
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}
