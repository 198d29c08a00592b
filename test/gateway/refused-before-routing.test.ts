/**
 * What fastify and node refused outside the error envelope before a route runs, as a newcomer
 * tries it on a real HTTPS gateway: a URL the router cannot decode (`%ff`), a 101-character id,
 * a request without Host. Each is answered in the envelope with a code of the API, after the
 * plain-HTTP check (403 INSECURE_TRANSPORT first), and counts toward the rate limit. Ids echoed
 * in messages are escaped: no control or bidirectional character reaches a terminal raw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxHeaderSize } from 'node:http';
import { systemClock } from '../../src/core/clock.js';
import { displaySafe } from '../../src/core/errors.js';
import { randomIds } from '../../src/core/ids.js';
import { ensurePlatform } from '../../src/domain/tenancy/tenants.js';
import { buildApp } from '../../src/gateway/app.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { buildServices } from '../../src/gateway/services.js';
import { openTestStore, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/matrix.js';
import { parseResponses, rawExchange } from '../helpers/raw-http.js';

let t: TestGateway;
let limited: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
  // a window far longer than the test: the count cannot reset in between
  limited = await startTestGateway({ config: { rateLimit: { max: 3, windowMs: 600_000, signupMax: 10_000, signupWindowMs: 60_000 } } });
});
afterAll(async () => {
  await t?.close();
  await limited?.close();
});

const port = (url: string) => Number(new URL(url).port);

/** One raw request over TLS (or plain HTTP with `plain`), and its one answer with the body parsed. */
async function raw(gw: TestGateway, head: string, opts: { plain?: boolean } = {}) {
  // not half-closed: each request here ends the connection itself (connection: close, HTTP/1.0)
  const data = await rawExchange(port(opts.plain ? gw.httpUrl : gw.baseUrl), opts.plain ? null : gw.ca, head, 10_000, false);
  const [res, ...more] = parseResponses(data);
  expect(more).toEqual([]);
  return { status: res!.status, headers: res!.headers, body: JSON.parse(res!.body.toString('utf8')) as { error: { code: string; message: string; details: Record<string, unknown> } } };
}

const requests = (key: string) => ({
  'a URL the router cannot decode (%ff)': `GET /v1/wallets/%ff HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${key}\r\nconnection: close\r\n\r\n`,
  'a 101-character id': `GET /v1/wallets/${'a'.repeat(101)} HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${key}\r\nconnection: close\r\n\r\n`,
  'a request without Host': `GET /v1/wallets HTTP/1.1\r\nx-api-key: ${key}\r\nconnection: close\r\n\r\n`,
});

describe('refused before a route runs', () => {
  it('a URL the router cannot decode: 400 VALIDATION_FAILED naming the url, in the envelope', async () => {
    const res = await raw(t, requests(t.creds.workspace.apiKey)['a URL the router cannot decode (%ff)']);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: expect.stringMatching(/^url: is not a valid URL path .*encodeURIComponent/),
        details: { field: 'url', location: 'path', problems: [{ field: 'url', problem: expect.any(String) }] },
      },
    });
    // the same through a client that sends a well-formed request with a bad escape in it
    const viaClient = await call(t, 'GET', '/v1/wallets/%zz', { apiKey: t.creds.workspace.apiKey });
    expect(viaClient.status).toBe(400);
    expect(viaClient.body.error?.details.field).toBe('url');
  });

  it('an id of 101 characters: 400 VALIDATION_FAILED naming the parameter (no 414 outside the envelope), and one of 10,000 too', async () => {
    for (const n of [101, 10_000]) {
      const res = await raw(t, `GET /v1/wallets/${'a'.repeat(n)}/ledger HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${t.creds.workspace.apiKey}\r\nconnection: close\r\n\r\n`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'id (params): must NOT have more than 100 characters', details: { field: 'id', location: 'params', problems: [{ field: 'id', problem: 'must NOT have more than 100 characters' }] } },
      });
    }
    // 100 is still an id: looked up, not found
    const ok = await call(t, 'GET', `/v1/wallets/${'a'.repeat(100)}`, { apiKey: t.creds.workspace.apiKey });
    expect(ok.status).toBe(404);
    expect(ok.body.error?.code).toBe('WALLET_NOT_FOUND');
  });

  it('a request without Host (HTTP/1.1): 400 VALIDATION_FAILED naming the header, not an empty 400; HTTP/1.0 needs none', async () => {
    const res = await raw(t, requests(t.creds.workspace.apiKey)['a request without Host']);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'host: is required in HTTP/1.1 (headers); send a Host header naming the gateway',
        details: { field: 'host', location: 'headers', problems: [{ field: 'host', problem: 'is required in HTTP/1.1 (headers); send a Host header naming the gateway' }] },
      },
    });
    const http10 = await raw(t, `GET /v1/wallets HTTP/1.0\r\nx-api-key: ${t.creds.workspace.apiKey}\r\n\r\n`);
    expect(http10.status).toBe(200);
    expect(http10.body).toEqual({ wallets: expect.any(Array) });
  });

  it('over plain HTTP, each is 403 INSECURE_TRANSPORT first, and so is a request node cannot parse', async () => {
    for (const [label, head] of Object.entries({ ...requests(t.creds.workspace.apiKey), 'bytes that are not HTTP': 'NOT HTTP AT ALL\r\n\r\n' })) {
      const res = await raw(t, head, { plain: true });
      expect(res.status, label).toBe(403);
      expect(res.body, label).toEqual({ error: { code: 'INSECURE_TRANSPORT', message: 'plain HTTP is refused; use https://', details: { protocol: 'http' } } });
    }
  });

  it('each counts toward the rate limit: after three such refusals the next request of the same client is 429', async () => {
    const key = limited.creds.workspace.apiKey;
    const refusals = Object.values(requests(key));
    for (const head of refusals) expect((await raw(limited, head)).status).toBe(400);
    const next = await call(limited, 'GET', '/v1/wallets', { apiKey: key });
    expect(next.status).toBe(429);
    expect(next.body.error?.code).toBe('RATE_LIMITED');
    // another client (no key: counted per IP) is unaffected
    const other = await call(limited, 'GET', '/v1/platform', {});
    expect(other.status).not.toBe(429);
  });
});

describe("what fastify's router still refuses itself (frameworkErrors)", () => {
  it('is answered in the envelope, after the plain-HTTP check: a parameter longer than any URL node would read', async () => {
    // only app.inject() can send a URL past node's header limit: the fallback that no real request reaches
    const store = await openTestStore();
    const ctx = { store, clock: systemClock, ids: randomIds };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keys = new Map<string, string>();
    const services = await buildServices(ctx, resolveConfig({ trustProxy: true }), { read: (id) => keys.get(id), write: (id, pem) => void keys.set(id, pem) });
    const app = await buildApp({ services, logger: false });
    try {
      const url = `/v1/wallets/${'a'.repeat(maxHeaderSize + 1)}`;
      const https = await app.inject({ method: 'GET', url, headers: { 'x-forwarded-proto': 'https' } });
      expect(https.statusCode).toBe(400);
      expect(https.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^url: /), details: { field: 'url', location: 'path', problems: [{ field: 'url', problem: expect.any(String) }] } } });
      const plain = await app.inject({ method: 'GET', url });
      expect(plain.statusCode).toBe(403);
      expect(plain.json()).toEqual({ error: { code: 'INSECURE_TRANSPORT', message: 'plain HTTP is refused; use https://', details: { protocol: 'http' } } });
    } finally {
      await app.close();
      await store.close();
    }
  });
});

describe('ids echoed in error messages', () => {
  it('reach the client escaped: a right-to-left override, an escape sequence and a newline arrive as \\uXXXX text', async () => {
    // bidirectional controls are text an id may hold (404, echoed escaped)
    const id = 'wal_\u202egnp.exe\u2066x';
    const res = await call(t, 'GET', `/v1/wallets/${encodeURIComponent(id)}`, { apiKey: t.creds.workspace.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'WALLET_NOT_FOUND', message: 'wallet wal_\\u202Egnp.exe\\u2066x not found', details: { id: 'wal_\\u202Egnp.exe\\u2066x' } });
    // control characters are refused before any route (docs/api/conventions.md § Text), and what is echoed is escaped too
    const controlled = await call(t, 'GET', `/v1/wallets/${encodeURIComponent('wal_\u001b[31m\nx')}`, { apiKey: t.creds.workspace.apiKey });
    expect(controlled.status).toBe(400);
    expect(controlled.body.error?.code).toBe('VALIDATION_FAILED');
    expect(`${controlled.body.error?.message} ${JSON.stringify(controlled.body.error?.details)}`).not.toMatch(/[\u001b\n]/);
    const unknownField = await call(t, 'POST', '/v1/wallets', { apiKey: t.creds.workspace.apiKey, body: { ownerType: 'agent', ownerId: 'a', ['x\u2066y']: 1 } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error?.message).toBe('x\\u2066y: is not a field of this request: remove it, or check its spelling');
    expect(JSON.stringify(unknownField.body)).not.toMatch(/[\u2066\u202e\u001b]/);
  });

  it('displaySafe leaves ordinary text, accents and emoji alone and escapes only what a terminal would act on', () => {
    expect(displaySafe('wallet wal_abc not found — déjà vu 😀')).toBe('wallet wal_abc not found — déjà vu 😀');
    expect(displaySafe('a\tb\rc\u0000d\u007fe\u0085f\u200fg\u2067h\ufeffi')).toBe('a\\u0009b\\u000Dc\\u0000d\\u007Fe\\u0085f\\u200Fg\\u2067h\\uFEFFi');
  });
});
