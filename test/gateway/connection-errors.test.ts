/**
 * Answers written before or outside a route, on a real HTTPS gateway: a request node cannot parse
 * (400) or whose headers are too large (431), and a request that arrives while the gateway closes
 * (503), all in the error envelope; a request already under way when the close begins still
 * completes. Whatever the log level, no API key or body reaches the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { connect, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureDevCredentials } from '../../src/gateway/dev-credentials.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import { backendOptions } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function gateway(opts: { level?: string; closeGraceMs?: number } = {}) {
  const lines: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-conn-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const stream = new Writable({
    write(c: Buffer, _e, done) {
      lines.push(...c.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, signingKeyRefreshMs: 0, closeGraceMs: opts.closeGraceMs ?? 2000, logger: { level: opts.level ?? 'trace', stream } });
  let closed = false;
  cleanup.push(() => (closed ? undefined : gw.close()));
  const creds = await ensureDevCredentials(gw.services.ctx, dataDir);
  return { gw, lines, creds, close: () => ((closed = true), gw.close()) };
}

/** A TLS connection to the gateway, and everything it receives until it closes. */
function open(gw: RunningGateway): Promise<{ socket: TLSSocket; write(text: string): void; ended: Promise<string> }> {
  return new Promise((resolve, reject) => {
    let out = '';
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(gw.baseUrl).port), ca: gw.tls!.ca }, () => {
      socket.off('error', reject);
      socket.on('error', () => {}); // a reset after the answer is fine: the answer is what is checked
      resolve({ socket, write: (text) => socket.write(text), ended });
    });
    socket.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const ended = new Promise<string>((res) => socket.on('close', () => res(out)));
    socket.once('error', reject);
  });
}

/** Status line, headers (lower-cased) and parsed JSON body of one raw HTTP/1.1 answer. */
function parse(answer: string): { status: number; headers: Record<string, string>; body: any } {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

/** Buffers are logged as {"type":"Buffer","data":[…]}: decoded, so bytes cannot hide a key. */
const logText = (lines: string[]) =>
  lines.join('\n').replace(/\{"type":"Buffer","data":\[([0-9,]*)\]\}/g, (_m, d: string) => Buffer.from(d.split(',').filter(Boolean).map(Number)).toString('latin1'));

describe('a request node cannot parse', () => {
  it('is answered 400 VALIDATION_FAILED in the envelope, and neither its key nor its body reaches the trace log', async () => {
    const { gw, lines, creds } = await gateway({ level: 'trace' });
    const key = creds.workspace.apiKey;
    const s = await open(gw);
    s.write(`POST /v1/wallets HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\nbad header: 1\r\ncontent-length: 30\r\n\r\n{"ownerId":"body-secret-value"}`);
    const res = parse(await s.ended);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^the request is not valid HTTP\/1\.1 \(.+\); check/), details: { reason: expect.stringMatching(/^HPE_/) } } });

    await until(() => lines.some((l) => l.includes('unreadable request')), 'the unreadable request in the trace log');
    expect(logText(lines)).not.toContain(key);
    expect(logText(lines)).not.toContain('body-secret-value');
    expect(logText(lines)).not.toContain('rawPacket');
  });

  it('with headers over the limit is answered 431 HEADERS_TOO_LARGE in the envelope, without the key in the log', async () => {
    const { gw, lines, creds } = await gateway({ level: 'trace' });
    const key = creds.workspace.apiKey;
    const s = await open(gw);
    s.write(`GET /v1/whoami HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const res = parse(await s.ended);
    expect(res.status).toBe(431);
    expect(res.body).toEqual({ error: { code: 'HEADERS_TOO_LARGE', message: expect.stringMatching(/^headers: are larger than the 16 KiB limit/), details: { field: 'headers', limitBytes: 16384 } } });
    expect(logText(lines)).not.toContain(key);
  });

  it('an error logged with a rawPacket is logged without it (the err serializer)', async () => {
    const { gw, lines, creds } = await gateway({ level: 'trace' });
    gw.app.log.trace({ err: Object.assign(new Error('client error'), { rawPacket: Buffer.from(`x-api-key: ${creds.workspace.apiKey}`) }) }, 'a client error');
    const line = lines.find((l) => l.includes('"a client error"'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!).err.message).toBe('client error');
    expect(logText(lines)).not.toContain(creds.workspace.apiKey);
  });
});

describe('requests and the trace log', () => {
  it('a served request with a key and a body logs neither, at trace level', async () => {
    const { gw, lines, creds } = await gateway({ level: 'trace' });
    const s = await open(gw);
    const body = JSON.stringify({ ownerType: 'workspace', ownerId: 'body-secret-value' });
    s.write(`POST /v1/wallets HTTP/1.1\r\nHost: x\r\nx-api-key: ${creds.workspace.apiKey}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    expect(parse(await s.ended).status).toBe(200);
    expect(lines.length).toBeGreaterThan(0);
    expect(logText(lines)).not.toContain(creds.workspace.apiKey);
    expect(logText(lines)).not.toContain('body-secret-value');
  });
});

describe('a request while the gateway closes', () => {
  it('is answered 503 SERVICE_UNAVAILABLE in the envelope with retry-after, while a request under way completes', async () => {
    const { gw, creds, close } = await gateway({ level: 'silent', closeGraceMs: 1500 });
    // under way: headers read (past every onRequest hook), the body still to come
    const busy = await open(gw);
    const body = JSON.stringify({ ownerType: 'workspace', ownerId: 'in-flight' });
    busy.write(`POST /v1/wallets HTTP/1.1\r\nHost: x\r\nx-api-key: ${creds.workspace.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    const late = await open(gw); // connected, no request yet
    await new Promise((r) => setTimeout(r, 100));

    const closing = close();
    await new Promise((r) => setTimeout(r, 200));
    late.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    busy.write(body.slice(10));
    await closing;

    const refused = parse(await late.ended);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers.connection).toBe('close');
    expect(refused.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/^the gateway is shutting down; retry in 5s/), details: { retryAfterSeconds: 5 } } });

    const served = parse(await busy.ended);
    expect(served.status).toBe(200);
    expect(served.body.wallet.ownerId).toBe('in-flight');
  });
});
