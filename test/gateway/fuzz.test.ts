/**
 * Generated requests against a real HTTPS gateway (fast-check): every route and unknown ones,
 * every method, ids and query strings with odd bytes (bad escapes, bidirectional overrides,
 * over-long), odd headers and content types, bodies valid, mutated, of the wrong type or not
 * JSON at all; then raw HTTP node itself may not parse (broken request lines, header names,
 * framing, no Host), over TLS. Strings carry NULs, other control characters and lone surrogates
 * (docs/api/conventions.md § Text). Whatever arrives, the gateway answers no 5xx, every error
 * in the envelope with the status its code maps to and display-safe text, and a refused request
 * leaves the ledger as it was (entry count, sums of amounts and holds). On the backend the run
 * picks (AGENTPAY_TEST_BACKEND=postgres: a PostgreSQL gateway; else SQLite). On PostgreSQL the
 * generated requests are spread over a fleet of AGENTPAY_FUZZ_FLEET instances (default 3) on the
 * one database and data directory, as a deployment runs them.
 *
 * AGENTPAY_FUZZ_RUNS sets the number of generated requests (default 1200; the raw HTTP
 * property runs a fifth of it). AGENTPAY_FUZZ_SEED replays a failing run.
 */
import https from 'node:https';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displaySafe, ERROR_STATUS, httpStatusFor } from '../../src/core/errors.js';
import { sqliteOf, startTestGateway, testBackend, type TestGateway } from '../helpers/gateway.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import type { PgStore } from '../../src/store/pg/pg-store.js';
import { apiRoutes, bodyFor, bodySchema, type RouteEntry } from '../helpers/matrix.js';
import { parseResponses, rawExchange } from '../helpers/raw-http.js';
import { purchaseReceipt } from '../payments/helpers.js';

const RUNS = Number(process.env.AGENTPAY_FUZZ_RUNS ?? 1200);
const SEED = process.env.AGENTPAY_FUZZ_SEED ? Number(process.env.AGENTPAY_FUZZ_SEED) : undefined;
const FLEET = testBackend() === 'postgres' ? Math.max(1, Number(process.env.AGENTPAY_FUZZ_FLEET ?? 3)) : 1;

let t: TestGateway;
/** the ledger, read outside the gateway: a read-only SQLite connection, or PostgreSQL synchronously (sqliteOf) */
let db: { prepare(sql: string): { get(): unknown } };
let routes: RouteEntry[];
let agent: https.Agent;
let realIds: string[];
let keys: string[];
/** the base URL of each instance the generated requests go to: the test gateway's, then the fleet's others */
let instances: string[];
const others: RunningGateway[] = [];

beforeAll(async () => {
  t = await startTestGateway();
  // the fleet's other instances: the same database and data directory (signing keys, TLS CA)
  for (let i = 1; i < FLEET; i++) {
    others.push(await startGateway({
      dataDir: t.dataDir, database: (t.gw.store as PgStore).url, port: 0, httpPort: 0, logger: false,
      config: {
        validateResponses: true, webhooks: { deliveryIntervalMs: 0 }, alertMailIntervalMs: 0,
        rateLimit: { max: 100_000, windowMs: 1000, signupMax: 10_000, signupWindowMs: 60_000, paymentMax: 100_000, paymentWindowMs: 1000 },
      },
    }));
  }
  instances = [t.baseUrl, ...others.map((g) => g.baseUrl)];
  if (testBackend() === 'postgres') db = sqliteOf(t.gw);
  else {
    const file = new Database(join(t.dataDir, 'agentpay.db'), { readonly: true, fileMustExist: true });
    file.defaultSafeIntegers(true);
    db = file;
  }
  routes = apiRoutes(t);
  agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: t.ca });
  // real records, so that generated requests also reach the services, not only the validators
  const receipt = await purchaseReceipt(t, t.workspace);
  const wallets = (await t.workspace.wallets.list()) as unknown as { id: string }[];
  const caps = await t.provider.http.request<{ capabilities: { id: string }[] }>('GET', '/v1/capabilities');
  realIds = [receipt.id, receipt.transactionId, t.creds.provider.id, t.creds.workspace.id, ...wallets.map((w) => w.id), ...caps.capabilities.map((c) => c.id)];
  keys = [t.creds.workspace.apiKey, t.creds.provider.apiKey, t.creds.operatorKey, 'ap_w_00000000000000000000000000000000', 'not-a-key'];
}, 120_000);

afterAll(async () => {
  agent?.destroy();
  if (db instanceof Database) db.close();
  for (const g of others) await g.close();
  await t?.close();
});

/** What a refused request must leave alone: the ledger's entries and what they add up to. */
function ledgerFingerprint(): string {
  // the ledger is append-only: the count and the greatest id show any row added
  const row = db.prepare("SELECT count(*) AS n, coalesce(sum(amount_minor), 0) AS amount, coalesce(sum(hold_minor), 0) AS held, coalesce(max(id), '') AS last FROM ledger_entries").get() as Record<string, bigint>;
  return `${row.n}/${row.amount}/${row.held}/${row.last}`;
}

interface Answer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

/** Checks one answer: no 5xx, and an error is the envelope with its code's status and display-safe text. */
function checkAnswer(a: Answer, method: string, label: string): void {
  expect(a.status, label).toBeLessThan(500);
  if (a.status < 400 || method === 'HEAD') return;
  expect(a.contentType, label).toMatch(/^application\/json/);
  const body = JSON.parse(a.body.toString('utf8')) as { error?: { code: unknown; message: unknown; details: unknown } };
  expect(body.error, label).toBeTypeOf('object');
  const { code, message, details } = body.error!;
  expect(Object.keys(body.error!).sort(), label).toEqual(['code', 'details', 'message']);
  expect(Object.keys(ERROR_STATUS), label).toContain(code);
  expect(httpStatusFor(code as string), label).toBe(a.status);
  expect(typeof message, label).toBe('string');
  expect(displaySafe(message as string), label).toBe(message);
  expect(details !== null && typeof details === 'object' && !Array.isArray(details), label).toBe(true);
  expect(displaySafe(JSON.stringify(details)), label).toBe(JSON.stringify(details));
}

// ---- generated requests through an ordinary client (node's https) ----

/**
 * Text no field takes (docs/api/conventions.md § Text): NUL, other C0 and C1 controls, DEL, lone
 * surrogates, mixed into ordinary text; and line breaks, which only multi-line fields take.
 */
const ODD_CHARS = ['\u0000', '\u0001', '\u001b', '\u007f', '\u0085', '\u009b', '\ud800', '\udfff', '\n', '\t', '\r', '\u2028', '\u202e', 'a', '_', '😀'];
const oddTextArb = fc.oneof(
  fc.constantFrom('\u0000', 'cap_\u0000', 'txn_x\u0000y', '\ud800', 'wal_\udc00', '\u001b[31m', 'a\nb'),
  fc.string({ unit: fc.constantFrom(...ODD_CHARS), minLength: 1, maxLength: 12 }),
);
/** Percent-encoded UTF-8 of any text (a lone surrogate's bytes are U+FFFD's, as encoders write it). */
const encodeText = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'] as const;

/** A path parameter: a real id, printable or any text (percent-encoded), odd escapes, raw bytes over 0x7f, length limits. */
const paramArb = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...realIds) },
    { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.constantFrom('%ff', '%', '%zz', '%e2%80%ae', '%00', '%2f', '%25', '..', '.', '%c0%af', '%ed%a0%80', 'a%', '%2') },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...realIds).map((id) => `${id}%00`), oddTextArb.map(encodeText)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Buffer.from(b.map((x) => 0x80 | x)).toString('latin1')) },
    { weight: 1, arbitrary: fc.integer({ min: 95, max: 300 }).map((n) => 'w'.repeat(n)) },
    { weight: 1, arbitrary: fc.constant('') },
  );

const queryArb = fc.option(
  fc.array(fc.tuple(fc.oneof(fc.constantFrom('limit', 'cursor', 'q', 'status', 'category', 'maxPriceMinor', 'providerId', '%ff', 'a[b]', '__proto__'), fc.string({ maxLength: 8 }).map(encodeURIComponent)), fc.oneof(fc.string({ maxLength: 12 }).map(encodeURIComponent), fc.constantFrom('%ff', '-1', '1e3', '999999999999999999999', '', 'true'), oddTextArb.map(encodeText))), { maxLength: 4 })
    .map((kv) => `?${kv.map(([k, v]) => `${k}=${v}`).join('&')}`),
  { nil: '' },
);

interface Generated {
  /** which instance of the fleet is asked (0 without one) */
  instance: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1'];
const OTHER_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', '', '*/*', 'application/json;;', 'application/jsonx', 'text/json'];

function requestArb(): fc.Arbitrary<Generated> {
  const routeArb = fc.constantFrom(...routes);
  const pathArb = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(routeArb, paramArb(), queryArb, fc.constantFrom('', '', '', '/', '//x')).map(([r, p, q, tail]) => ({ route: r, path: `${r.url.replace(/:([A-Za-z0-9_]+)/g, () => p)}${tail}${q}` })) },
    { weight: 1, arbitrary: fc.tuple(fc.array(paramArb(), { minLength: 1, maxLength: 4 }), queryArb).map(([segs, q]) => ({ route: undefined as RouteEntry | undefined, path: `/${segs.join('/')}${q}` })) },
    { weight: 1, arbitrary: fc.constantFrom('/', '/v1', '/v1/', '//v1/wallets', '/V1/WALLETS', '/v1/wallets/', '/openapi.json', '/v1/wallets?', '/v1/wallets#x', '/v1/%2e%2e/wallets').map((p) => ({ route: undefined as RouteEntry | undefined, path: p })) },
  );
  const bodyArb = (route: RouteEntry | undefined) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constant<unknown>(undefined) },
      { weight: 3, arbitrary: fc.constant<unknown>(route ? bodyFor(route, { providerId: t.creds.provider.id }) : {}) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constant(route ? bodyFor(route) : {}), fc.oneof(fc.constantFrom('amountMinor', 'priceMinor', 'ownerType', 'walletId', 'providerId', 'limit', 'name', '__proto__', 'constructor'), fc.string({ maxLength: 10 })), fc.jsonValue({ maxDepth: 2 }))
          .map(([b, k, v]) => ({ ...(b as object), [k]: v })),
      },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      // a field of the route's body with text no field takes, the rest valid (reaches the services if the text rule misses it)
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constant(route ? bodyFor(route, { providerId: t.creds.provider.id }) : {}), fc.constantFrom('name', ...Object.keys((route && (bodySchema(route)?.properties as object | undefined)) ?? {})), oddTextArb, fc.option(fc.constantFrom(...realIds), { nil: undefined }))
          .map(([b, k, v, id]) => ({ ...(b as object), [k]: id === undefined ? v : `${id}${v}` })),
      },
      // odd text deep in free-form values, as a key and as a value
      { weight: 1, arbitrary: fc.tuple(fc.constant(route ? bodyFor(route) : {}), oddTextArb).map(([b, v]) => ({ ...(b as object), schema: { type: 'object', properties: { [v]: { description: v } } }, payment: { [v]: [v] } })) },
    );
  return pathArb.chain(({ route, path }) =>
    fc.record({
      method: route ? fc.oneof({ weight: 4, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }) : fc.constantFrom(...METHODS),
      path: fc.constant(path),
      key: fc.option(fc.constantFrom(...keys), { nil: undefined }),
      contentType: fc.option(fc.oneof(fc.constantFrom(...JSON_TYPES), fc.constantFrom(...OTHER_TYPES), fc.string({ maxLength: 20 })), { nil: undefined }),
      body: bodyArb(route),
      rawBody: fc.option(fc.oneof(fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), fc.constantFrom('{', '{"a":', '[]', 'null', '"x"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', '\ufeff{}').map((s) => Buffer.from(s))), { freq: 4, nil: undefined }),
      instance: fc.nat({ max: FLEET - 1 }),
      extra: fc.array(fc.tuple(fc.constantFrom('accept', 'accept-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'content-encoding', 'x-request-id', 'idempotency-key', 'x-payment', 'authorization', 'origin'), fc.string({ maxLength: 30 })), { maxLength: 3 }),
    }).map(({ instance, method, path, key, contentType, body, rawBody, extra }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of extra) headers[k] = v;
      if (key) headers['x-api-key'] = key;
      const bytes = rawBody ?? (body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
      if (bytes && contentType === undefined) headers['content-type'] = 'application/json';
      else if (contentType !== undefined) headers['content-type'] = contentType;
      for (const [k, v] of Object.entries(headers)) {
        try {
          validateHeaderName(k);
          validateHeaderValue(k, v);
        } catch {
          delete headers[k]; // node's client would refuse to send it; raw HTTP below covers such bytes
        }
      }
      return { instance, method, path, headers, body: bytes };
    }),
  );
}

function send(g: Generated): Promise<Answer> {
  const u = new URL(instances[g.instance]!);
  return new Promise((resolve, reject) => {
    // a body is framed by its length: node's client sends a GET or HEAD body unframed otherwise
    const headers = g.body ? { ...g.headers, 'content-length': String(g.body.length) } : g.headers;
    const req = https.request({ host: u.hostname, port: u.port, method: g.method, path: g.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(g.body);
  });
}

/** Paths node's client itself refuses to send (bytes outside 0x21-0xff): those go raw. */
const sendable = (g: Generated) => !/[^\u0021-\u00ff]/.test(g.path);

describe('generated requests over every route', () => {
  it(`${RUNS} requests: no 5xx, every error in the envelope, no ledger change from a refused one`, async () => {
    const seen = new Map<number, number>();
    const asked = new Set<number>();
    await fc.assert(
      fc.asyncProperty(requestArb().filter(sendable), async (g) => {
        const before = ledgerFingerprint();
        const a = await send(g);
        asked.add(g.instance);
        seen.set(a.status, (seen.get(a.status) ?? 0) + 1);
        const label = `${FLEET > 1 ? `[instance ${g.instance}] ` : ''}${g.method} ${g.path} ${JSON.stringify(g.headers)} ${g.body?.toString('latin1').slice(0, 200) ?? ''} -> ${a.status} ${a.body.toString('utf8').slice(0, 300)}`;
        checkAnswer(a, g.method, label);
        if (a.status >= 400) expect(ledgerFingerprint(), label).toBe(before);
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    // the generator reaches past the validators: successes, refusals and not-found all occur
    expect([...seen.keys()].some((s) => s < 300)).toBe(true);
    expect(seen.get(400)).toBeGreaterThan(0);
    expect(seen.get(404)).toBeGreaterThan(0);
    // every instance of the fleet answered some
    expect(asked.size).toBe(FLEET);
  }, 600_000);
});

// ---- raw HTTP, parsable or not, over TLS ----

const lineEnd = fc.constantFrom('\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n');
const rawTarget = fc.oneof(
  fc.constantFrom('/v1/wallets', '/v1/platform', '/v1/wallets/%ff', '*', 'http://localhost/v1/wallets', 'https://[::1', '/v1/wallets/\u202e', '/v1/ wallets', '', '/\u0000', '//', '/v1/wallets?x=\u0001'),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => `/${s}`),
  fc.uint8Array({ maxLength: 20 }).map((b) => `/v1/wallets/${Buffer.from(b).toString('latin1')}`),
);
const rawMethod = fc.oneof(fc.constantFrom('GET', 'POST', 'HEAD', 'DELETE', 'OPTIONS', 'get', 'G ET', 'CONNECT', 'PRI', 'BREW', ''), fc.string({ unit: 'binary-ascii', maxLength: 8 }));
const rawVersion = fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1x', 'http/1.1', '');
const rawHeader = fc.oneof(
  fc.constantFrom('Host: localhost', 'Host: localhost', 'host:', 'Host: a\u0000b', 'Host: localhost\r\nHost: other', 'content-length: 5', 'content-length: -1', 'content-length: 1e3', 'content-length: 99999999999999999999', 'Content-Length: 2\r\nContent-Length: 3', 'transfer-encoding: chunked', 'transfer-encoding: gzip, chunked', 'transfer-encoding: chunked\r\ncontent-length: 3', 'content-type: application/json', 'content-type: text/plain', 'expect: 100-continue', 'connection: upgrade\r\nupgrade: h2c', ' folded: header', 'x-api-key: ap_w_00000000000000000000000000000000', 'no colon here', ': empty name', 'bad name: 1'),
  fc.tuple(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 20 })).map(([k, v]) => `${k}: ${v}`),
);
const rawBody = fc.oneof(fc.constant(''), fc.constantFrom('{}', '{"ownerType":"agent","ownerId":"x"}', '0\r\n\r\n', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\n', '{'), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('latin1')));

const rawRequestArb = fc
  .record({ method: rawMethod, target: rawTarget, version: rawVersion, headers: fc.array(rawHeader, { maxLength: 5 }), eol: lineEnd, body: rawBody, close: fc.boolean() })
  .map((r) => ({
    method: r.method,
    bytes: Buffer.from(`${r.method} ${r.target} ${r.version}${r.eol}${r.headers.join(r.eol)}${r.headers.length ? r.eol : ''}${r.close ? `connection: close${r.eol}` : ''}${r.eol}${r.body}`, 'latin1'),
  }));

describe('raw HTTP over TLS, parsable or not', () => {
  const runs = Math.max(20, Math.round(RUNS / 5));
  it(`${runs} raw requests: whatever is answered is well-formed, no 5xx, every error in the envelope, no ledger change`, async () => {
    const port = Number(new URL(t.baseUrl).port);
    await fc.assert(
      fc.asyncProperty(rawRequestArb, async (r) => {
        const before = ledgerFingerprint();
        const data = await rawExchange(port, t.ca, r.bytes);
        const label = `${JSON.stringify(r.bytes.toString('latin1'))} -> ${JSON.stringify(data.toString('latin1').slice(0, 400))}`;
        // after a HEAD, the first answer has no body, unless the bytes after it were refused
        // unparsable before it was answered (pipelined garbage): then that refusal comes first
        const head = r.method.toUpperCase() === 'HEAD';
        let answers: ReturnType<typeof parseResponses>;
        let headAnswered = head;
        try {
          answers = parseResponses(data, head);
        } catch (e) {
          if (!head) throw new Error(`${(e as Error).message}: ${label}`);
          headAnswered = false;
          answers = parseResponses(data, false);
        }
        const final = answers.filter((a) => a.status >= 200);
        final.forEach((a, i) => checkAnswer({ status: a.status, contentType: a.headers['content-type'], body: a.body }, i === 0 && headAnswered ? 'HEAD' : 'GET', label));
        // no valid key is sent raw: nothing may move
        expect(ledgerFingerprint(), label).toBe(before);
      }),
      { numRuns: runs, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
  }, 600_000);
});
