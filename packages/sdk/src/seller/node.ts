/**
 * `agentpay-sdk/seller/node`: paid node:http handlers and express routes.
 *
 *   http.createServer(paid((req, res) => res.end('hello'), { gatewayUrl, apiKey, capabilityId }));
 *   app.get('/forecast', paidMiddleware({ seller, capabilityId }), (req, res) => res.json({ sunny: true }));
 *
 * After authorization the response is captured: whatever the handler writes (writeHead,
 * write, end, pipe) is buffered, then hashed, completed or failed, and the same bytes are
 * sent with the x-service-receipt header. Nothing reaches the socket before settlement.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { PAYMENT_HEADER } from '../protocol.js';
import { createSellerPayments, decide, finish, renderHeader, startDeadline, thrownAnswer, timeoutAnswer, type Answer, type PaidCall, type SellerOptions, type SellerPayments } from './core.js';
import type { CorsOptions } from './cors.js';

export type NodeSellerOptions = (SellerOptions | { seller: SellerPayments; capabilityId?: string }) & {
  /** answer CORS preflights and allow the given origin */
  cors?: CorsOptions;
};

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

const calls = new WeakMap<ServerResponse, PaidCall>();

/**
 * The paid call a response answers (transaction, buyer wallet, amount), undefined on a free
 * route. A metered capability's handler reports its usage with `paidCallOf(res)?.charge(units)`.
 */
export function paidCallOf(res: ServerResponse): PaidCall | undefined {
  return calls.get(res);
}
type Next = (err?: unknown) => void;

/** A decision's headers on the response, merged with what it has (core renderHeader). */
function putHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const existing = res.getHeader(name);
    res.setHeader(name, renderHeader(name, existing === undefined ? undefined : String(existing), value));
  }
}

function send(res: ServerResponse, answer: Answer): void {
  res.statusCode = answer.status;
  putHeaders(res, answer.headers);
  res.end(answer.body);
}

function setHeaders(res: ServerResponse, headers: OutgoingHttpHeaders | readonly unknown[] | undefined): void {
  if (!headers) return;
  if (Array.isArray(headers)) {
    // raw form: [name, value, name, value, …] or [[name, value], …]
    const flat = (headers as unknown[]).flat() as string[];
    for (let i = 0; i + 1 < flat.length; i += 2) res.setHeader(flat[i]!, flat[i + 1]!);
    return;
  }
  for (const [k, v] of Object.entries(headers as OutgoingHttpHeaders)) if (v !== undefined) res.setHeader(k, v);
}

type Callback = (err?: Error | null) => void;

interface Capture {
  /**
   * Stops capturing and drops what was written (the handler threw or ran out of time); whatever
   * the handler writes afterwards is dropped too. False if the handler had already ended.
   */
  abort(): boolean;
  /** ends the real response, whatever the handler does meanwhile */
  end(body: Buffer): void;
}

/**
 * Holds back everything the handler writes; `onEnd` gets the status and the exact bytes
 * once the handler ends the response, and decides what goes out.
 */
function capture(res: ServerResponse, onEnd: (statusCode: number, body: Buffer) => void): Capture {
  const original = { write: res.write, end: res.end, writeHead: res.writeHead, flushHeaders: res.flushHeaders };
  const chunks: Buffer[] = [];
  const callbacks: Callback[] = [];
  let ended = false;
  const push = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array));
  };
  const stop = () => {
    ended = true;
    Object.assign(res, original);
    res.once('finish', () => callbacks.forEach((f) => f()));
  };

  res.writeHead = function (statusCode: number, ...rest: unknown[]) {
    res.statusCode = statusCode;
    if (typeof rest[0] === 'string') res.statusMessage = rest.shift() as string;
    setHeaders(res, rest[0] as OutgoingHttpHeaders | undefined);
    return res;
  } as ServerResponse['writeHead'];
  res.flushHeaders = () => {};
  res.write = function (chunk: unknown, encoding?: unknown, cb?: unknown) {
    push(chunk, encoding);
    const done = [encoding, cb].find((a) => typeof a === 'function') as Callback | undefined;
    if (done) callbacks.push(done);
    return true;
  } as ServerResponse['write'];
  res.end = function (chunk?: unknown, encoding?: unknown, cb?: unknown) {
    push(chunk, encoding);
    const done = [chunk, encoding, cb].find((a) => typeof a === 'function') as Callback | undefined;
    if (done) callbacks.push(done);
    stop();
    onEnd(res.statusCode, Buffer.concat(chunks));
    return res;
  } as ServerResponse['end'];

  return {
    abort() {
      if (ended) return false;
      ended = true;
      // the handler may still be running (timeout): its later output must not reach the socket
      const drop = (...args: unknown[]) => {
        const cb = args.find((a) => typeof a === 'function') as Callback | undefined;
        if (cb) queueMicrotask(() => cb());
        return res;
      };
      Object.assign(res, { write: () => true, end: drop, writeHead: () => res, flushHeaders: () => {} });
      return true;
    },
    end(body) {
      // the real methods for this end (node's end calls this.writeHead), the droppers again after it
      const current = { write: res.write, end: res.end, writeHead: res.writeHead, flushHeaders: res.flushHeaders };
      Object.assign(res, original);
      res.end(body);
      Object.assign(res, current);
    },
  };
}

interface Guard {
  seller: SellerPayments;
  capabilityFor(req: IncomingMessage): string | undefined;
  cors: CorsOptions | undefined;
}

/** The method a CORS preflight asks about; undefined for any other request. */
function preflightMethod(req: IncomingMessage): string | undefined {
  const requested = req.headers['access-control-request-method'];
  return req.method === 'OPTIONS' && typeof requested === 'string' ? requested : undefined;
}

function guardOf(opts: NodeSellerOptions): Guard {
  const seller = 'seller' in opts ? opts.seller : createSellerPayments(opts);
  const fixed = 'seller' in opts ? opts.capabilityId : undefined;
  return {
    seller,
    cors: opts.cors,
    // express rewrites req.url under a mounted router; originalUrl is the path the buyer called.
    // A preflight is looked up by the method it asks about, so that a 'GET /x' route answers it.
    capabilityFor: (req) => fixed ?? seller.capabilityFor(preflightMethod(req) ?? req.method ?? 'GET', new URL((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/', 'http://x').pathname),
  };
}

type Admitted =
  | { state: 'free' }
  | { state: 'answered' }
  /** the handler may run; call `threw` if it throws before ending the response */
  | { state: 'paid'; threw: () => void };

/** Renders the seller core's decision up to the handler: an answer sent, or a paid call being captured. */
async function admit(g: Guard, req: IncomingMessage, res: ServerResponse): Promise<Admitted> {
  const header = req.headers[PAYMENT_HEADER];
  const requested = preflightMethod(req);
  const requestedHeaders = req.headers['access-control-request-headers'];
  const decision = await decide(g.seller, {
    method: req.method ?? 'GET',
    capabilityId: g.capabilityFor(req),
    payment: typeof header === 'string' ? header : undefined,
    origin: req.headers.origin,
    preflight: requested ? { method: requested, headers: typeof requestedHeaders === 'string' ? requestedHeaders : undefined } : undefined,
    http: {
      header: (name) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      },
      path: (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/',
      secure: (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true,
    },
    // the body is the handler's to read (a stream): the idempotency fingerprint uses one an
    // earlier middleware parsed (express.json()), else covers the method, path and query only
    body: (req as { body?: unknown }).body,
  }, g.cors);
  if (decision.kind === 'free') return { state: 'free' };
  if (decision.kind !== 'admitted') {
    send(res, decision);
    return { state: 'answered' };
  }
  calls.set(res, decision.call);
  const settle = async (statusCode: number, written: Buffer, threw: boolean) => {
    const contentType = res.getHeader('content-type');
    const answer = await finish(g.seller, decision, { status: statusCode, body: written, threw, ...(typeof contentType === 'string' ? { contentType } : {}) });
    putHeaders(res, answer.headers);
    res.removeHeader('transfer-encoding');
    if (answer.bodyless) res.removeHeader('content-length');
    else res.setHeader('content-length', String(answer.body.length));
    res.statusCode = statusCode;
    captured.end(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
  };
  let stop = () => {};
  const captured = capture(res, (statusCode, body) => {
    stop();
    void settle(statusCode, body, false).catch(() => res.destroy());
  });
  /** The handler's output (if any) is dropped and this answer settles the call as a provider error. */
  const abandon = (answer: Answer) => {
    if (!captured.abort()) return;
    stop();
    for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
    void settle(answer.status, Buffer.from(answer.body), true).catch(() => res.destroy());
  };
  stop = startDeadline(decision, () => abandon(timeoutAnswer(decision)));
  return {
    state: 'paid',
    // partial output of a handler that threw is dropped; the buyer gets a 500 and a refund
    threw: () => abandon(thrownAnswer()),
  };
}

/**
 * Express (or connect) middleware: answers 402 and refusals itself, and calls `next()`
 * only after authorization. An error that express's error handler turns into a 5xx
 * settles as a provider error, a 4xx as a client error.
 */
export function paidMiddleware(opts: NodeSellerOptions = {}): (req: IncomingMessage, res: ServerResponse, next: Next) => void {
  const g = guardOf(opts);
  return (req, res, next) => {
    admit(g, req, res).then((a) => {
      if (a.state !== 'answered') next();
    }, next);
  };
}

/** Wraps a node:http handler `(req, res)` so that it runs only for paid calls. */
export function paid(handler: Handler, opts: NodeSellerOptions = {}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const g = guardOf(opts);
  return async (req, res) => {
    const a = await admit(g, req, res);
    if (a.state === 'answered') return;
    try {
      await handler(req, res);
    } catch (e) {
      if (a.state !== 'paid') throw e;
      a.threw();
    }
  };
}

export { createSellerPayments, type SellerOptions, type SellerPayments, type PaidCall } from './core.js';
export { responseHashSync } from './sync-hash.js';
export type { CorsOptions } from './cors.js';
