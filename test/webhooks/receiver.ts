/** A real HTTP receiver on 127.0.0.1 that keeps every request's raw body and headers. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** the status the next requests get (default 200) */
  status: number;
  /** resolves once `n` requests have arrived in all */
  waitFor(n: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const r: Receiver = {
    url: '',
    received,
    status: 200,
    waitFor: (n) => new Promise((resolve) => {
      if (received.length >= n) resolve(received);
      else waiters.push({ n, resolve: () => resolve(received) });
    }),
    close: () => new Promise<void>((res) => {
      server.closeAllConnections();
      server.close(() => res());
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.status < 300 ? 'ok' : 'failing on purpose');
      for (const w of waiters.filter((x) => received.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return r;
}

export interface DripReceiver {
  url: string;
  /** requests that reached it */
  hits: number;
  close(): Promise<void>;
}

/**
 * A receiver that answers as slowly as it can without going quiet: `body` sends a 200 status line
 * and headers at once, then one byte of body every `everyMs`; `status` sends even the status line
 * one byte every `everyMs`. Either keeps the connection busy for `forMs`, so a socket idle timeout
 * never fires.
 */
export async function startDripReceiver(kind: 'body' | 'status', everyMs: number, forMs: number): Promise<DripReceiver> {
  const net = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const r: DripReceiver = { url: '', hits: 0, close: async () => {} };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let started = false;
    socket.on('data', () => {
      if (started) return;
      started = true;
      r.hits++;
      const text = kind === 'body'
        ? 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n'
        : 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';
      let i = 0;
      if (kind === 'body') socket.write(text);
      const until = Date.now() + forMs;
      const timer = setInterval(() => {
        if (socket.destroyed || Date.now() > until) {
          clearInterval(timer);
          timers.delete(timer);
          socket.destroy();
          return;
        }
        socket.write(kind === 'body' ? '.' : text[i++ % text.length]!);
      }, everyMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise<void>((res) => {
    for (const t of timers) clearInterval(t);
    for (const s of sockets) s.destroy();
    server.close(() => res());
  });
  return r;
}
