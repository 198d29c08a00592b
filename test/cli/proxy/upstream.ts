/**
 * An existing API that knows nothing of agentpay: a plain node:http server on 127.0.0.1 that
 * records every request it gets (method, target, headers, body) and answers by path:
 *   /forecast      200 JSON of the query, with headers of its own (x-upstream, two set-cookie)
 *   /echo          200 JSON of the method, target, headers and body it received
 *   /boom          500 JSON
 *   /missing       404 JSON
 *   /health        200 "ok"
 *   /reports/...   200 JSON of the path
 *   /stream...     200 chunked: the first chunk at once, the rest once the test calls `release()`
 *   /upload...     200 with the byte count and sha256 of the body; `firstChunk` resolves when the
 *                  first bytes of the body arrive (before the client has sent the rest)
 *   /slow          never answers
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

export interface Upstream {
  url: string;
  host: string;
  seen: Seen[];
  /** how many /slow requests were given up by the proxy (their connection closed) */
  slowClosed(): number;
  /** lets the /stream routes send their last chunks */
  release(): void;
  /** resolves with the first chunk of the next /upload request's body */
  firstChunk(): Promise<Buffer>;
  close(): Promise<void>;
}

export const STREAM_FIRST = '{"part":1,';
export const STREAM_REST = ['"text":"héllo wörld",', '"part2":true}'];

export async function startUpstream(): Promise<Upstream> {
  const seen: Seen[] = [];
  let release!: () => void;
  let released = new Promise<void>((r) => (release = r));
  let onFirst: ((b: Buffer) => void) | undefined;
  let slowClosed = 0;

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const chunks: Buffer[] = [];
    const record = () => seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
    if (path.startsWith('/upload')) {
      req.on('data', (c: Buffer) => {
        if (chunks.length === 0) onFirst?.(c);
        chunks.push(c);
      });
      req.on('end', () => {
        record();
        const body = Buffer.concat(chunks);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') }));
      });
      return;
    }
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      record();
      const query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
      if (path === '/forecast') {
        res.writeHead(200, [['content-type', 'application/json'], ['x-upstream', 'yes'], ['set-cookie', 'a=1; Path=/'], ['set-cookie', 'b=2; Path=/']].flat());
        res.end(JSON.stringify({ city: query.city ?? 'Lisbon', sunny: true, query }));
      } else if (path === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }));
      } else if (path === '/boom') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'the database is down' }));
      } else if (path === '/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'no such city' }));
      } else if (path === '/health') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else if (path.startsWith('/reports/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ report: path.slice('/reports/'.length) }));
      } else if (path.startsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(STREAM_FIRST);
        void released.then(() => {
          for (const c of STREAM_REST) res.write(c);
          res.end();
        });
      } else if (path === '/slow') {
        // never answers
        res.once('close', () => slowClosed++);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`upstream ${path}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    seen,
    slowClosed: () => slowClosed,
    release() {
      release();
      released = new Promise<void>((r) => (release = r));
    },
    firstChunk: () => new Promise<Buffer>((r) => (onFirst = (b) => {
      onFirst = undefined;
      r(b);
    })),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A port nothing listens on (listened on, then closed). */
export async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
