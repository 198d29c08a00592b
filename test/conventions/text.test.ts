/**
 * Text (docs/api/conventions.md § Text): on every route, every string a request carries (each
 * string field of its body, free-form values in it, each query field, each path parameter) is
 * refused with 400 VALIDATION_FAILED naming the field when it holds a NUL or another control
 * character, or a lone surrogate, and nothing is written; a string field is one line unless the
 * contract marks it multi-line. Run on SQLite and PostgreSQL, which must answer alike (PostgreSQL
 * cannot store a NUL; neither can store a lone surrogate as text).
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { apiRoutes, bodySchema, call, changedTables, fillPath, pathParams, minimalValue, querySchema, routeName, snapshotDb, type JsonSchema } from '../helpers/matrix.js';
import { MAX_NESTING } from '../../src/gateway/plugins/request-text.js';
import { encodeHeader } from '../../packages/sdk/src/contract/header.js';
import { rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const branches = (s: JsonSchema) => ((s.anyOf ?? s.oneOf) as JsonSchema[] | undefined) ?? [];

interface TextField {
  /** where the value goes, as keys and array indexes */
  at: (string | number)[];
  /** the schemas of the objects and arrays on the way (the body's first) */
  within: JsonSchema[];
  /** the field an answer names (dotted) */
  field: string;
  /** a string field of the schema (not free-form), and whether it may span lines */
  kind: 'line' | 'multiline' | 'free';
}

/**
 * Every place of a body schema that takes text: string fields (through unions, arrays and
 * nested objects), and free-form values (no type: any JSON, where a string goes) and records
 * (a string under a key of its own). Schemas only a request's other fields would admit are taken
 * as they come: the refusal comes before any other check.
 */
function textFields(s: JsonSchema | undefined, at: (string | number)[] = [], within: JsonSchema[] = []): TextField[] {
  if (!s) return [];
  const field = at.join('.');
  const alts = branches(s).filter((b) => b.type !== 'null');
  if (alts.length) {
    const str = alts.find((b) => b.type === 'string');
    return str ? textFields(str, at, within) : alts.flatMap((b) => textFields(b, at, within)).filter((f, i, all) => all.findIndex((g) => g.field === f.field) === i);
  }
  if (s.type === 'string') return at.length ? [{ at, within, field, kind: s['x-multiline'] ? 'multiline' : 'line' }] : [];
  if (s.type === 'array') return textFields((s.items as JsonSchema | undefined) ?? {}, [...at, 0], [...within, s]);
  if (s.type === 'object' || s.properties || s.patternProperties) {
    const props = Object.entries((s.properties ?? {}) as Record<string, JsonSchema>).flatMap(([k, p]) => textFields(p, [...at, k], [...within, s]));
    const rec = s.patternProperties ? [{ at: [...at, 'someKey'], within: [...within, s], field: at.length ? `${field}.someKey` : 'someKey', kind: 'free' as const }] : [];
    return [...props, ...rec];
  }
  if (s.type === undefined && at.length) return [{ at, within, field, kind: 'free' }];
  return [];
}

/** A copy of the body with the field's value set, making the objects and arrays on the way as their schemas' smallest values. */
function withValue(body: Record<string, unknown> | undefined, f: Pick<TextField, 'at' | 'within'>, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body ?? {}) as Record<string, unknown>;
  let cur = copy as Record<string | number, unknown>;
  f.at.forEach((k, i) => {
    if (i === f.at.length - 1) {
      cur[k] = value;
      return;
    }
    const next = f.at[i + 1];
    const made = f.within[i + 1] ? minimalValue(f.within[i + 1]!) : undefined;
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = made !== null && typeof made === 'object' ? made : typeof next === 'number' ? [] : {};
    cur = cur[k] as Record<string | number, unknown>;
  });
  return copy;
}

/** The refused values and what the refusal must say. */
const REFUSED = [
  { what: 'a NUL', value: 'a\u0000b', says: /control characters \(U\+0000 at character 2\)/ },
  { what: 'another control character', value: 'a\u001bb', says: /control characters \(U\+001B at character 2\)/ },
  { what: 'a C1 control character', value: 'a\u0085b', says: /control characters \(U\+0085 at character 2\)/ },
  { what: 'a lone surrogate', value: '\ud800', says: /lone surrogate \(U\+D800 at character 1\)/ },
  { what: 'a lone low surrogate after text', value: 'ok\udc00', says: /lone surrogate \(U\+DC00 at character 3\)/ },
] as const;

type Answer = Awaited<ReturnType<typeof call>>;
function expectRefusal(res: Answer, field: string, location: string, says: RegExp, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.error?.code, label).toBe('VALIDATION_FAILED');
  expect(res.body.error?.details.field, label).toBe(field);
  expect(res.body.error?.details.location, label).toBe(location);
  expect(res.body.error?.message, label).toMatch(says);
}

const routes = apiRoutes(t);

describe('text in bodies', () => {
  const withText = routes.filter((r) => textFields(bodySchema(r)).length > 0);
  it('the matrix covers the routes the fuzzer found answering 500 on PostgreSQL', () => {
    const names = withText.map(routeName);
    for (const n of ['POST /v1/x402/challenge', 'POST /v1/x402/complete', 'POST /v1/signup', 'POST /v1/capabilities', 'POST /v1/policies/evaluate', 'POST /v1/payouts']) expect(names).toContain(n);
  });

  for (const r of withText) {
    it(`${routeName(r)} refuses control characters and lone surrogates in every text field, naming it, and writes nothing`, async () => {
      const c = await rightfulCall(t, r);
      const before = snapshotDb(t.dataDir);
      for (const f of textFields(bodySchema(r))) {
        for (const bad of REFUSED) {
          const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: withValue(c.body, f, bad.value) });
          expectRefusal(res, f.field, 'body', bad.says, `${f.field} with ${bad.what}`);
        }
        // a field name is text too, in a free-form value
        if (f.kind === 'free') {
          const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: withValue(c.body, f, { 'k\u0000': 1 }) });
          expectRefusal(res, `${f.field}.k\\u0000`, 'body', /a field name.*U\+0000/, `a key of ${f.field}`);
        }
      }
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    });
  }

  it('a string field is one line unless the contract marks it multi-line: tab, LF and CR are refused in it, naming it', async () => {
    let single = 0;
    let multi = 0;
    for (const r of withText) {
      const c = await rightfulCall(t, r);
      for (const f of textFields(bodySchema(r))) {
        if (f.kind === 'free') continue;
        for (const brk of ['a\nb', 'a\tb', 'a\rb']) {
          const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: withValue(c.body, f, brk) });
          const label = `${routeName(r)} ${f.field} = ${JSON.stringify(brk)}: ${JSON.stringify(res.body)}`;
          if (f.kind === 'line') {
            expect(res.status, label).toBe(400);
            expect(res.body.error?.details.field, label).toBe(f.field);
          } else {
            // the text rule passes it; the route may refuse it for what it says, never for being text
            expect(res.body.error?.message ?? '', label).not.toMatch(/one line|control characters/);
          }
        }
        if (f.kind === 'line') single++;
        else multi++;
      }
    }
    expect(single).toBeGreaterThan(50);
    // a policy document, a description, a PEM key, a search query, notes
    expect(multi).toBeGreaterThanOrEqual(6);
  });

  it('docs/api/conventions.md § Text names every multi-line field', () => {
    const multiline = new Set(withText.flatMap((r) => textFields(bodySchema(r)).filter((f) => f.kind === 'multiline').map((f) => String(f.at.at(-1)))));
    expect([...multiline].sort()).toEqual(['description', 'document', 'note', 'password', 'publicKeyPem', 'query', 'reason', 'sellerPublicKey', 'sessionPublicKey']);
    const doc = readFileSync(new URL('../../docs/api/conventions.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Text'), doc.indexOf('## Ids'));
    for (const name of multiline) expect(section).toContain(`\`${name}\``);
    expect(section).toContain(`at most ${MAX_NESTING} levels`);
  });
});

describe('text in path parameters', () => {
  const withParams = routes.filter((r) => pathParams(r.url).length > 0);
  for (const r of withParams) {
    it(`${routeName(r)} refuses a NUL or a control character in each parameter, naming it`, async () => {
      const c = await rightfulCall(t, r);
      for (const p of pathParams(r.url)) {
        for (const [bad, says] of [['x\u0000', /U\+0000/], ['\u0007', /U\+0007/], ['x\u0085', /U\+0085/]] as const) {
          // the other parameters as the rightful call has them
          const segs = c.path.split('/');
          const urlSegs = r.url.split('/');
          const path = urlSegs.map((u, i) => (u === `:${p}` ? encodeURIComponent(bad) : segs[i])).join('/');
          const res = await call(t, r.method, path, { apiKey: c.apiKey, ...(c.body ? { body: c.body } : {}) });
          expectRefusal(res, p, 'params', says, `:${p} = ${JSON.stringify(bad)} (${path})`);
        }
      }
    });
  }

  it('a lone surrogate cannot be sent in a path (it has no UTF-8 form): its bytes are refused as a bad URL', async () => {
    const res = await call(t, 'GET', '/v1/wallets/%ed%a0%80', { apiKey: t.creds.workspace.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error?.details.field).toBe('url');
  });

  it('GET /v1/wallets/%00, once a 500 on PostgreSQL, is refused naming the id', async () => {
    const res = await call(t, 'GET', fillPath('/v1/wallets/:id', '\u0000'), { apiKey: t.creds.workspace.apiKey });
    expectRefusal(res, 'id', 'params', /U\+0000/, 'wallets/%00');
  });
});

describe('text in query strings', () => {
  for (const r of routes) {
    const fields = Object.keys(((querySchema(r) ?? {}).properties ?? {}) as Record<string, unknown>);
    if (fields.length === 0) continue;
    it(`${routeName(r)} refuses a NUL or a control character in each query field, naming it`, async () => {
      const c = await rightfulCall(t, r);
      for (const q of fields) {
        const res = await call(t, r.method, `${c.path}?${q}=a%00b`, { apiKey: c.apiKey, ...(c.body ? { body: c.body } : {}) });
        expectRefusal(res, q, 'querystring', /U\+0000/, `?${q}=a%00b`);
        const c1 = await call(t, r.method, `${c.path}?${q}=%C2%9B`, { apiKey: c.apiKey, ...(c.body ? { body: c.body } : {}) });
        expectRefusal(c1, q, 'querystring', /U\+009B/, `?${q}=%C2%9B`);
      }
    });
  }
});

describe('text a request carries encoded: a payment proof in its header form', () => {
  const authorize = routes.find((r) => routeName(r) === 'POST /v1/x402/authorize')!;
  const proof = (extra: Record<string, unknown>) => encodeHeader({ version: 1, challenge: { id: 'chl_x' }, walletId: 'wal_x', signedAt: '2026-01-31T12:00:00.000Z', signature: 'x', ...extra });

  it('is held to the same rule as a body: a NUL or a lone surrogate inside it is refused naming the field under payment', async () => {
    const c = await rightfulCall(t, authorize);
    for (const [extra, field, says] of [
      [{ walletId: 'wal_\u0000' }, 'payment.walletId', /U\+0000/],
      [{ memo: { note: 'a\ud800' } }, 'payment.memo.note', /lone surrogate/],
      [{ 'k\u001b': 1 }, 'payment.k\\u001B', /a field name.*U\+001B/],
    ] as const) {
      const res = await call(t, 'POST', c.path, { apiKey: c.apiKey, body: { ...c.body, payment: proof(extra) } });
      expectRefusal(res, field, 'body', says, JSON.stringify(extra));
    }
  });

  it(`is nested at most ${MAX_NESTING} levels: a deeper proof in a header is refused, not signed-checked`, async () => {
    const c = await rightfulCall(t, authorize);
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = [deep];
    const res = await call(t, 'POST', c.path, { apiKey: c.apiKey, body: { ...c.body, payment: proof({ deep }) } });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(res.body.error?.message).toMatch(/^payment\.deep(\.0)+: is nested deeper than/);
  });
});

describe('nesting', () => {
  const cap = (schema: unknown) => ({ name: 'Deep', description: 'd', protocol: 'rest', priceMinor: '1', category: 'utility', endpoint: 'https://example.com/deep', schema });
  const nest = (n: number): unknown => {
    let v: unknown = 'leaf';
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };

  it(`a body nested deeper than ${MAX_NESTING} levels is refused naming where, and ${MAX_NESTING} levels are accepted`, async () => {
    const deep = await call(t, 'POST', '/v1/capabilities', { apiKey: t.creds.provider.apiKey, body: cap(nest(MAX_NESTING)) });
    expect(deep.status, JSON.stringify(deep.body)).toBe(400);
    expect(deep.body.error?.code).toBe('VALIDATION_FAILED');
    expect(deep.body.error?.message).toMatch(new RegExp(`nested deeper than ${MAX_NESTING} levels`));
    expect(deep.body.error?.details.field).toBe(`schema${'.a'.repeat(MAX_NESTING - 1)}`);
    const ok = await call(t, 'POST', '/v1/capabilities', { apiKey: t.creds.provider.apiKey, body: cap(nest(MAX_NESTING - 2)) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a 1 MiB body of nested arrays is answered 400, not a stack overflow', async () => {
    const depth = 500_000;
    const raw = `{"name":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    for (const r of [
      { method: 'POST', path: '/v1/capabilities', key: t.creds.provider.apiKey },
      { method: 'POST', path: '/v1/x402/batch', key: t.creds.provider.apiKey },
      { method: 'POST', path: '/v1/signup', key: null },
    ]) {
      const res = await sendRaw(r.method, r.path, r.key, raw);
      expect(res.status, `${r.path}: ${res.text.slice(0, 300)}`).toBe(400);
      expect((JSON.parse(res.text) as { error: { message: string } }).error.message).toMatch(/nested deeper/);
    }
  });
});

/** A request whose body is the given text as it is (a JSON.stringify of such a value would overflow the stack). */
function sendRaw(method: string, path: string, apiKey: string | null, body: string): Promise<{ status: number; text: string }> {
  const u = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (apiKey) headers['x-api-key'] = apiKey;
    const req = https.request({ host: u.hostname, port: u.port, method, path, headers, ca: t.ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
