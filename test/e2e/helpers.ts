/**
 * Real parts for the end-to-end tests: sellers on 127.0.0.1 (fastify with the fastify
 * adapter over HTTPS, plain node:http with the node adapter), capabilities published
 * through the API, funded agent wallets, and the ledger checks every money test ends with.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { Agent, fetch as undiciFetch } from 'undici';
import { expect } from 'vitest';
import { balanceOf } from '../../src/domain/wallets/ledger.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { paid, paidMiddleware } from '../../packages/sdk/src/seller/node.js';
import type { SellerOptions } from '../../packages/sdk/src/seller/core.js';
import type { CorsOptions } from '../../packages/sdk/src/seller/cors.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * A fetch that trusts the test gateway's CA (its certificate also serves the HTTPS seller),
 * with a connection pool as a real agent's would have: two hundred simultaneous TLS
 * handshakes on the one event loop of a test process would hit the connect timeout.
 */
export function fetchTrusting(ca: string): typeof fetch {
  const dispatcher = new Agent({ connect: { ca }, connections: 32 });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}

/** One request a recording fetch saw: its path, and for a batch how many operations it carried. */
export interface RecordedRequest {
  path: string;
  operations?: number;
}

/**
 * fetchTrusting that records every request; `answer` may answer one itself (or throw, as a
 * network failure does) instead of sending it.
 */
export function recordingFetch(ca: string, answer?: (request: RecordedRequest) => Response | undefined) {
  const inner = fetchTrusting(ca);
  const log: RecordedRequest[] = [];
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    const recorded: RecordedRequest = path === '/v1/x402/batch'
      ? { path, operations: (JSON.parse(String(init?.body)) as { operations: unknown[] }).operations.length }
      : { path };
    log.push(recorded);
    return answer?.(recorded) ?? inner(input, init);
  }) as typeof globalThis.fetch;
  return { fetch, log };
}

export const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

export async function publish(t: TestGateway, priceMinor: string, name = `Forecast ${priceMinor}`): Promise<string> {
  const { capability } = await t.provider.capabilities.publish({
    name,
    description: `weather forecast for ${priceMinor} minor units`,
    protocol: 'rest',
    priceMinor,
    category: 'weather',
    endpoint: 'https://127.0.0.1/forecast',
  });
  return capability.id;
}

export interface AgentWallet {
  walletId: string;
  publicKeyPem: string;
  privateKeyPem: string;
}

export async function fundedAgent(t: TestGateway, amountMinor: string, ownerId = `agent-${Math.random().toString(36).slice(2, 8)}`): Promise<AgentWallet> {
  const a = await t.newAgentWallet(t.workspace, ownerId);
  if (amountMinor !== '0') await t.workspace.wallets.fund(a.walletId, amountMinor);
  return a;
}

export async function platformRevenue(t: TestGateway): Promise<bigint> {
  return (await t.gw.store.read((r) => balanceOf(r, PLATFORM_REVENUE_WALLET_ID))).balanceMinor;
}

/** The ledger of a wallet adds up to its balance, holds included, and never went below zero. */
export async function expectLedgerConsistent(client: AgentpayClient, walletId: string): Promise<void> {
  const [entries, balance] = await Promise.all([client.wallets.ledger(walletId), client.wallets.balance(walletId)]);
  let sum = 0n;
  let held = 0n;
  for (const e of entries) {
    sum += BigInt(e.amountMinor);
    held += BigInt(e.holdMinor);
    expect(BigInt(e.balanceAfterMinor)).toBe(sum);
    expect(BigInt(e.heldAfterMinor)).toBe(held);
    expect(sum - held).toBeGreaterThanOrEqual(0n);
  }
  expect(String(sum)).toBe(balance.balanceMinor);
  expect(String(sum - held)).toBe(balance.availableMinor);
}

/** What a seller saw: handler runs per route and every x-payment header that arrived. */
export interface SellerLog {
  handled: Record<string, number>;
  paymentsReceived: number;
}

export interface RunningSeller {
  url: string;
  log: SellerLog;
  close(): Promise<void>;
}

function newLog(): SellerLog {
  return { handled: {}, paymentsReceived: 0 };
}

const count = (log: SellerLog, route: string) => {
  log.handled[route] = (log.handled[route] ?? 0) + 1;
};

/** The bytes of the streamed route: several chunks, so the hash must cover their concatenation. */
export const STREAM_CHUNKS = ['{"part":1,', '"text":"héllo wörld",', '"part2":true}'];

/**
 * A fastify seller over HTTPS on 127.0.0.1 (the gateway's localhost certificate).
 * `caps.price100` sells /forecast, /client-error, /server-error, /throws and /stream;
 * `caps.price1` sells /cheap; /free is free.
 */
export async function startFastifySeller(t: TestGateway, caps: { price100: string; price1: string }, extra: Partial<SellerOptions> = {}): Promise<RunningSeller & { app: FastifyInstance }> {
  const log = newLog();
  const app = Fastify({ https: { cert: t.gw.tls!.cert, key: t.gw.tls!.key } });
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-payment']) log.paymentsReceived++;
  });
  await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, cors: { origin: '*' }, ...extra });
  const paidBy = (capabilityId: string) => ({ config: { agentpay: { capabilityId } } });

  app.get<{ Querystring: { city?: string } }>('/forecast', paidBy(caps.price100), async (request) => {
    count(log, 'forecast');
    return { city: request.query.city ?? 'Lisbon', sunny: true, tempC: 21 };
  });
  app.get('/cheap', paidBy(caps.price1), async () => {
    count(log, 'cheap');
    return 'ok';
  });
  app.get('/client-error', paidBy(caps.price100), async (_request, reply) => {
    count(log, 'client-error');
    return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'no forecast for that city' } });
  });
  app.get('/server-error', paidBy(caps.price100), async (_request, reply) => {
    count(log, 'server-error');
    return reply.code(503).send({ error: { code: 'UPSTREAM_DOWN', message: 'weather service down' } });
  });
  app.get('/throws', paidBy(caps.price100), async () => {
    count(log, 'throws');
    throw new Error('kaboom');
  });
  app.get('/stream', paidBy(caps.price100), async (_request, reply) => {
    count(log, 'stream');
    return reply.type('application/json').send(Readable.from(STREAM_CHUNKS.map((c) => Buffer.from(c))));
  });
  app.get('/free', { config: { agentpay: false } }, async () => {
    count(log, 'free');
    return { free: true };
  });
  // onSend hooks that change the body, on the route itself and in a child plugin: agentpay still hashes last
  app.get('/decorated', { ...paidBy(caps.price100), onSend: async (_request: unknown, reply: FastifyReply, payload: unknown) => (reply.statusCode === 200 ? `${String(payload)}\n<!-- route hook -->` : payload) }, async () => {
    count(log, 'decorated');
    return 'decorated';
  });
  await app.register(async (child) => {
    child.addHook('onSend', async (_request, reply, payload) => (reply.statusCode === 200 ? `${String(payload)}\n<!-- child hook -->` : payload));
    child.get('/child-decorated', paidBy(caps.price100), async () => {
      count(log, 'child-decorated');
      return 'child';
    });
  });
  // a paid call answered with a redirect: completed on the 3xx, to a free route or to another paid one
  app.get('/moved', paidBy(caps.price100), async (_request, reply) => {
    count(log, 'moved');
    return reply.redirect('/free');
  });
  app.get('/moved-to-paid', paidBy(caps.price100), async (_request, reply) => {
    count(log, 'moved-to-paid');
    return reply.redirect('/forecast');
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  return { app, url: `https://127.0.0.1:${port}`, log, close: () => app.close() };
}

/**
 * A plain node:http seller with the node adapter: `paid(handler)` for /forecast and
 * friends, and the middleware form in a connect-style chain on /mw.
 */
export async function startNodeSeller(t: TestGateway, capabilityId: string, extra: Partial<SellerOptions> & { cors?: CorsOptions } = {}): Promise<RunningSeller> {
  const log = newLog();
  const options = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, ...extra };

  const handler = paid(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    switch (path) {
      case '/forecast': {
        count(log, 'forecast');
        // headers through writeHead, the body in several writes: all of it is the hashed body
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"city":"Porto",');
        await new Promise((r) => setTimeout(r, 5));
        res.write(Buffer.from('"sunny":false,'));
        res.end('"tempC":17}');
        return;
      }
      case '/client-error':
        count(log, 'client-error');
        res.statusCode = 422;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: { code: 'BAD_CITY', message: 'city is required' } }));
        return;
      case '/throws':
        count(log, 'throws');
        res.write('partial output that must never reach the buyer');
        throw new Error('kaboom');
      default:
        count(log, 'unknown');
        res.statusCode = 404;
        res.end('not found');
    }
  }, options);

  // the middleware form, as express would run it: (req, res, next) then the route handler
  const middleware = paidMiddleware(options);
  const chain = (req: http.IncomingMessage, res: http.ServerResponse) =>
    middleware(req, res, (err?: unknown) => {
      if (err) {
        res.statusCode = 500;
        res.end('middleware error');
        return;
      }
      count(log, 'mw');
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end('from the middleware chain');
    });

  const server = http.createServer((req, res) => {
    if (req.headers['x-payment']) log.paymentsReceived++;
    if ((req.url ?? '').startsWith('/mw')) return chain(req, res);
    void handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}
