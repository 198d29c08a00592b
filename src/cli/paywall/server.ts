/**
 * `agentpay proxy`: a paywall in front of an existing HTTP API, no code change in it. A node:http
 * server whose every request goes through the SDK's node:http seller adapter (`paid` of
 * agentpay-sdk/seller/node, over the seller core): unpaid calls of a sold route are answered 402 in
 * every dialect the core speaks (x-payment, x402's PAYMENT-REQUIRED, WWW-Authenticate: Payment),
 * refused proofs with the gateway's refusal; an admitted call is forwarded to the upstream
 * (./forward.ts) and its answer is settled by the adapter as for any handler: 2xx/3xx completes
 * (charged), 4xx fails as client_error, 5xx, an unreachable upstream (502) or an answer broken off
 * fails as provider_error (refunded); the bytes the buyer gets are the ones the receipt hashes.
 * Free routes (and, with "pass", unlisted ones) are streamed through untouched; unlisted routes
 * are otherwise answered 404 here. Which route sells what: ./routes.ts.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentpayError } from 'agentpay-sdk/errors';
import { readPaymentCredential } from 'agentpay-sdk/interop';
import { decodeHeader, RECEIPT_HEADER, type Receipt } from 'agentpay-sdk/protocol';
import { createSellerPayments, type SellerPayments } from 'agentpay-sdk/seller/core';
import { paid } from 'agentpay-sdk/seller/node';
import { CliError, EXIT } from '../errors/index.js';
import { createForwarder } from './forward.js';
import { capabilitiesOf, lookup, type RouteTable } from './routes.js';

export interface PaywallOptions {
  /** the API behind the paywall (http:// or https://, with an optional base path) */
  upstream: URL;
  table: RouteTable;
  /** how messages name the config file */
  configFile?: string | undefined;
  host: string;
  /** 0: any free port (the URL says which) */
  port: number;
  gatewayUrl: string;
  /** a provider key of the capabilities' provider (payments:write) */
  apiKey: string;
  /** PEM of the gateway's CA */
  ca?: string | undefined;
  /** how long the upstream may take on a paid call, ms; past it the buyer gets 504 and is refunded */
  timeoutMs: number;
  /** the public base URL buyers use (the x402 resource URL and the Payment realm), e.g. https://api.example.com */
  publicUrl?: string | undefined;
  /** x402 network of the gateway (agentpay:sandbox by default) */
  network?: string | undefined;
  /** answer CORS preflights of paid routes and allow this origin */
  corsOrigin?: string | undefined;
  /** one line per request and per problem (stderr) */
  log: (line: string) => void;
  /** fetch for the gateway (tests) */
  fetch?: typeof fetch;
}

/** A capability sold, and its price now. */
export interface Price {
  capabilityId: string;
  from: string;
  amountMinor: string;
  currency: string;
}

export interface RunningPaywall {
  url: string;
  prices: Price[];
  close(): Promise<void>;
}

/** The most request bytes read whole for an idempotent call's fingerprint. */
export const MAX_FINGERPRINTED_BODY = 8 * 1024 * 1024;

const pathnameOf = (target: string | undefined) => new URL(target ?? '/', 'http://x').pathname;

/**
 * The price of each capability, asked of the gateway the way the first buyer's call will be (a
 * challenge: nothing is stored). A capability that is not there, not the key's provider's, or not
 * for sale is refused here, at start, naming where it was configured.
 */
async function pricesOf(seller: SellerPayments, table: RouteTable, configFile: string | undefined): Promise<Price[]> {
  const prices: Price[] = [];
  for (const { capabilityId, from } of capabilitiesOf(table, configFile)) {
    try {
      const c = await seller.client.payments.challenge(capabilityId);
      prices.push({ capabilityId, from, amountMinor: c.amountMinor, currency: c.currency });
    } catch (e) {
      if (!(e instanceof AgentpayError) || e.status === undefined || e.status === 401 || e.status >= 500) throw e;
      const tryNext = e.code === 'CAPABILITY_NOT_FOUND'
        ? `check the id (agentpay capabilities list --as provider), or publish one: agentpay publish`
        : e.status === 403
          ? 'use the API key of the provider that published it (agentpay dev env --role seller prints the dev one), and a verified provider'
          : 'publish a new capability and name it instead';
      throw new CliError(e.code, `capability ${capabilityId} (${from}) cannot be sold: ${e.message}`, { exit: EXIT.REFUSED, tryNext, details: { capabilityId, from, status: e.status } });
    }
  }
  return prices;
}

/** The 404 of a route the table does not list (nothing reaches the upstream). */
function notRouted(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({
    error: {
      code: 'NOT_FOUND',
      message: `${req.method ?? 'GET'} ${pathnameOf(req.url)} is not a route of this API`,
      details: { method: req.method ?? 'GET', path: pathnameOf(req.url) },
    },
  });
  res.statusCode = 404;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', String(Buffer.byteLength(body)));
  res.end(body);
}

/** Reads a request body whole, or undefined past `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function receiptOf(res: ServerResponse): Receipt | undefined {
  const header = res.getHeader(RECEIPT_HEADER);
  if (typeof header !== 'string') return undefined;
  try {
    return decodeHeader<Receipt>(header);
  } catch {
    return undefined;
  }
}

/** The log line of a request once answered. */
function requestLine(req: IncomingMessage, res: ServerResponse, kind: 'paid' | 'free' | 'reject', ms: number): string {
  const receipt = receiptOf(res);
  const what = receipt
    ? receipt.status === 'success'
      ? `paid ${receipt.amount.amountMinor} ${receipt.amount.currency} minor units (receipt ${receipt.id})`
      : `not charged, refunded (receipt ${receipt.id}, failed)`
    : kind === 'free' ? 'free'
      : kind === 'reject' ? 'not a route (unknown routes are rejected; --pass-unknown forwards them)'
        : res.statusCode === 402 ? 'payment required' : 'refused';
  return `${req.method ?? 'GET'} ${pathnameOf(req.url)} ${res.statusCode} ${what} ${ms} ms`;
}

/** Starts the paywall: checks every capability with the gateway, then listens. */
export async function startPaywall(o: PaywallOptions): Promise<RunningPaywall> {
  const seller = createSellerPayments({
    env: false, // the CLI resolved its settings (flags, environment, profile)
    gatewayUrl: o.gatewayUrl,
    apiKey: o.apiKey,
    ...(o.ca ? { ca: o.ca } : {}),
    handlerTimeoutMs: o.timeoutMs,
    ...(o.publicUrl ? { publicUrl: o.publicUrl } : {}),
    ...(o.network ? { network: o.network } : {}),
    ...(o.fetch ? { fetch: o.fetch } : {}),
    onError: (e, c) => o.log(`agentpay proxy: the gateway's ${c.stage}${c.transactionId ? ` of ${c.transactionId}` : ''} failed: ${e instanceof Error ? e.message : String(e)}`),
  });
  const prices = await pricesOf(seller, o.table, o.configFile);
  const targetOf = (method: string, path: string) => lookup(o.table, method, path).target;
  // the seller core asks which capability a request sells: the table's answer
  const priced: SellerPayments = {
    ...seller,
    capabilityFor: (method, path) => {
      const t = targetOf(method, path);
      return t.kind === 'paid' ? t.capabilityId : undefined;
    },
  };
  const forwarder = createForwarder(o.upstream);
  const upstreamName = o.upstream.origin + o.upstream.pathname.replace(/\/+$/, '');

  const handle = paid(async (req, res) => {
    const target = targetOf(req.method ?? 'GET', pathnameOf(req.url));
    if (target.kind === 'reject') return notRouted(req, res);
    await forwarder.forward(req, res, {
      paid: target.kind === 'paid',
      body: (req as { body?: Buffer }).body,
      onUpstreamError: (e) => o.log(`agentpay proxy: ${req.method} ${pathnameOf(req.url)}: the upstream ${upstreamName} (--upstream) failed: ${(e as { code?: string }).code ?? e.message}`),
    });
  }, { seller: priced, ...(o.corsOrigin ? { cors: { origin: o.corsOrigin } } : {}) });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const target = targetOf(req.method ?? 'GET', pathnameOf(req.url));
    res.once('finish', () => o.log(requestLine(req, res, target.kind, Date.now() - started)));
    try {
      // an idempotent paid call: the core fingerprints the body too, so it is read whole first
      if (target.kind === 'paid' && idempotencyKeyOf(req)) {
        const body = await readBody(req, MAX_FINGERPRINTED_BODY);
        if (!body) return tooLarge(res);
        (req as { body?: Buffer }).body = body;
      }
      await handle(req, res);
    } catch (e) {
      // a free route whose upstream broke off mid-answer (a paid one is failed and refunded by the adapter)
      o.log(`agentpay proxy: ${req.method} ${pathnameOf(req.url)}: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) upstreamBroke(res);
      else res.destroy();
    }
  }

  const server = http.createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'EADDRINUSE' ? 'is in use' : e.code === 'EACCES' ? 'is not allowed for this user' : e.code === 'EADDRNOTAVAIL' ? 'is not an address of this machine' : `failed (${e.code ?? e.message})`;
      forwarder.close();
      reject(new CliError('LISTEN_FAILED', `--listen ${o.host}:${o.port} ${why}`, { exit: EXIT.USAGE, tryNext: 'pick another port: --listen 127.0.0.1:PORT', details: { flag: '--listen', cause: e.code ?? e.message } }));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  return {
    url,
    prices,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // calls in flight finish (and settle) first; a connection still open after 10 s is cut
      const cut = setTimeout(() => server.closeAllConnections(), 10_000);
      await closed;
      clearTimeout(cut);
      forwarder.close();
    },
  };
}

/** The buyer's idempotency key (Idempotency-Key, or x402's payment-identifier), if the call has one. */
function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const read = readPaymentCredential((name) => {
    const v = req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  });
  return read.kind === 'payment' ? read.idempotencyKey : undefined;
}

function jsonError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message, details: {} } });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', String(Buffer.byteLength(body)));
  res.end(body);
}

const tooLarge = (res: ServerResponse) =>
  jsonError(res, 413, 'PAYLOAD_TOO_LARGE', `an idempotent paid call's body is read whole to fingerprint it, at most ${MAX_FINGERPRINTED_BODY} bytes; nothing was charged. Send a bigger body without an idempotency key`);

const upstreamBroke = (res: ServerResponse) => jsonError(res, 502, 'UPSTREAM_UNAVAILABLE', 'the API behind this paywall broke off its answer, retry later');
