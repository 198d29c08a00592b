/**
 * Forwarding one request to the upstream of `agentpay proxy` and its answer back, streamed both
 * ways with node:http: the method, the path and query (under the upstream URL's own path), the
 * headers and the body go as received, minus the hop-by-hop headers (RFC 9110 §7.6.1) and the
 * buyer's payment headers; `Host` becomes the upstream's, and X-Forwarded-For/-Host/-Proto say
 * where the request came from. The upstream's status, headers (minus hop-by-hop) and body come
 * back unchanged. On a paid route the response object is the seller adapter's (agentpay-sdk/seller/node),
 * which holds the bytes back until they are hashed and the call is settled.
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';

/** Hop-by-hop headers: they describe one connection, never forwarded (plus those named in Connection). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Answered by the proxy's own server already (100 Continue), not asked of the upstream again. */
const EXPECT = 'expect';

/** The buyer's payment headers: the proxy's business, not the upstream's. */
const PAYMENT_HEADERS = new Set(['x-payment', 'payment-signature', 'accept-payment']);

/** Receipt headers are the seller core's to set on a paid answer: an upstream's own never pass for one. */
const RECEIPT_HEADERS = new Set(['x-service-receipt', 'payment-response', 'payment-receipt']);

/** `Authorization: Payment …` (the Payment scheme's credential); any other Authorization goes to the upstream. */
const isPaymentAuthorization = (value: string) => /(^|,)\s*Payment\s+/i.test(value);

/** The headers of a raw header list, lower-cased, repeated ones as arrays, minus `drop`. */
function headersOf(raw: readonly string[], drop: (name: string, value: string) => boolean): Record<string, string | string[]> {
  const connection = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) connection.add(t.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (HOP_BY_HOP.has(name) || connection.has(name) || drop(name, value)) continue;
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

/** The request headers the upstream gets. */
export function upstreamRequestHeaders(req: IncomingMessage, upstream: URL): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = headersOf(req.rawHeaders, (name, value) => PAYMENT_HEADERS.has(name) || (name === 'authorization' && isPaymentAuthorization(value)) || name === 'host' || name === EXPECT);
  const appended = (name: string, value: string) => {
    const had = headers[name];
    headers[name] = had === undefined ? value : `${Array.isArray(had) ? had.join(', ') : String(had)}, ${value}`;
  };
  headers.host = upstream.host;
  if (req.socket.remoteAddress) appended('x-forwarded-for', req.socket.remoteAddress);
  if (req.headers.host && headers['x-forwarded-host'] === undefined) headers['x-forwarded-host'] = req.headers.host;
  if (headers['x-forwarded-proto'] === undefined) headers['x-forwarded-proto'] = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return headers;
}

/** The upstream's path for a request target: the upstream URL's path, then the request's path and query. */
export function upstreamPath(upstream: URL, target: string): string {
  const base = upstream.pathname.replace(/\/+$/, '');
  return `${base}${target.startsWith('/') ? target : `/${target}`}`;
}

/** What the buyer gets when the upstream cannot be reached (a paid call then fails as provider_error: refunded). */
export function upstreamUnavailable(res: ServerResponse, paid: boolean): void {
  const body = JSON.stringify({
    error: {
      code: 'UPSTREAM_UNAVAILABLE',
      message: `the API behind this paywall could not be reached${paid ? '; you were refunded (see the failed receipt)' : ''}, retry later`,
      details: {},
    },
  });
  res.statusCode = 502;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', String(Buffer.byteLength(body)));
  res.end(body);
}

export interface Forwarder {
  /**
   * Sends the request to the upstream and pipes its answer into `res`. Resolves once the answer
   * ended (or the 502 of an unreachable upstream was written); rejects when the upstream's answer
   * broke off after it started (the caller fails the call or drops the connection). `body`: the
   * request body already read (an idempotent call's fingerprint needed it), else `req` is piped.
   */
  forward(req: IncomingMessage, res: ServerResponse, o: { paid: boolean; body?: Buffer | undefined; onUpstreamError?: (e: Error) => void }): Promise<void>;
  close(): void;
}

export function createForwarder(upstream: URL): Forwarder {
  const secure = upstream.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const request = secure ? https.request : http.request;

  return {
    forward(req, res, o) {
      return new Promise<void>((resolve, reject) => {
        const headers = upstreamRequestHeaders(req, upstream);
        if (o.body) {
          headers['content-length'] = String(o.body.length);
          delete headers['transfer-encoding'];
        }
        const out = request({
          protocol: upstream.protocol,
          hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
          port: upstream.port || (secure ? 443 : 80),
          method: req.method,
          path: upstreamPath(upstream, req.url ?? '/'),
          headers,
          agent,
        });
        let answered = false;
        let finished = false;
        // the buyer went away, or the seller adapter answered in the upstream's place (past the time limit)
        res.once('close', () => {
          if (!finished) out.destroy();
        });
        out.on('error', (e) => {
          if (answered) return; // the response's own error (below) tells
          answered = true;
          finished = true;
          o.onUpstreamError?.(e);
          req.resume(); // what is left of the body is not needed
          if (!res.headersSent) upstreamUnavailable(res, o.paid);
          resolve();
        });
        out.on('response', (up) => {
          answered = true;
          res.statusCode = up.statusCode ?? 502;
          if (up.statusMessage) res.statusMessage = up.statusMessage;
          // on a paid route the adapter sets the length of the exact bytes it sends
          const back = headersOf(up.rawHeaders, (name) => o.paid && (name === 'content-length' || RECEIPT_HEADERS.has(name)));
          for (const [name, value] of Object.entries(back)) res.setHeader(name, value);
          up.on('end', () => {
            finished = true;
            resolve();
          });
          up.on('close', () => {
            if (finished) return;
            finished = true;
            const e = new Error('the upstream closed the connection before its answer ended');
            o.onUpstreamError?.(e);
            reject(e);
          });
          up.on('error', () => {}); // told by 'close' above
          up.pipe(res);
        });
        if (o.body) out.end(o.body);
        else req.pipe(out);
      });
    },
    close() {
      agent.destroy();
    },
  };
}
