/**
 * Raw HTTP/1.1 over a socket, for requests no well-behaved client would send (bytes a URL may
 * not hold, no Host header, broken framing): write the bytes, half-close, read until the server
 * closes, and split what came back into responses.
 */
import net from 'node:net';
import { connect } from 'node:tls';

/**
 * Sends `request` on a new connection (TLS when a CA is given) and returns every byte received
 * until the server closes it. `safetyMs` only ends a test that would otherwise hang: a server
 * still holding the connection by then is reported by what was (or was not) received.
 * `halfClose` (default true) ends the sending side right after the request; node's HTTP server
 * then abandons a request it has not answered yet (httpAllowHalfOpen is false), so a test that
 * needs the answer of a request the gateway answers after a store read (on PostgreSQL always a
 * round trip later) passes false and sends `connection: close` or HTTP/1.0.
 */
export function rawExchange(port: number, ca: string | null, request: Buffer | string, safetyMs = 10_000, halfClose = true): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const onConnect = () => {
      socket.write(request);
      if (halfClose) socket.end();
    };
    const socket = ca ? connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, onConnect) : net.connect({ host: '127.0.0.1', port }, onConnect);
    const timer = setTimeout(() => socket.destroy(), safetyMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {}); // a reset after (or instead of) an answer: what was received is checked
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The responses in `data`, in order (1xx interim answers included). `headOnly` when the (first)
 * request was HEAD: its answer has no body then; answers after it are read as any other. Throws on bytes that are not a well-formed response.
 */
export function parseResponses(data: Buffer, headOnly = false): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < data.length) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`an incomplete response head: ${JSON.stringify(data.subarray(at).toString('latin1').slice(0, 200))}`);
    const [statusLine, ...lines] = data.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(`${statusLine} `);
    if (!m) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const c = l.indexOf(':');
      if (c <= 0) throw new Error(`not a header line: ${JSON.stringify(l)}`);
      headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim();
    }
    at = end + 4;
    let body: Buffer = Buffer.alloc(0);
    if (status >= 200 && status !== 204 && status !== 304 && !headOnly) {
      if (headers['content-length'] !== undefined) {
        const n = Number(headers['content-length']);
        if (at + n > data.length) throw new Error(`a body shorter than its content-length ${n}`);
        body = data.subarray(at, at + n);
        at += n;
      } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        const parts: Buffer[] = [];
        for (;;) {
          const le = data.indexOf('\r\n', at);
          if (le < 0) throw new Error('an incomplete chunk');
          const size = parseInt(data.subarray(at, le).toString('latin1'), 16);
          at = le + 2;
          if (size === 0) {
            at += 2;
            break;
          }
          parts.push(data.subarray(at, at + size));
          at += size + 2;
        }
        body = Buffer.concat(parts);
      } else {
        body = data.subarray(at);
        at = data.length;
      }
    }
    out.push({ status, headers, body });
    if (status >= 200) headOnly = false;
  }
  return out;
}
