/**
 * The OpenAPI document: served without a key at GET /openapi.json by a real HTTPS gateway, the
 * same as `agentpay openapi` prints without one; a valid OpenAPI 3.1 document (checked by an
 * OpenAPI validator); every route of the route table in it with its scope, its success answer and
 * its errors in the envelope; and every example it documents, sent to the live gateway, answered
 * 2xx with a body its declared schema accepts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/tenancy/scopes.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { apiRoutes, call, devKey, tenantKindFor } from '../helpers/matrix.js';
import { createCapability } from '../payments/helpers.js';

type Json = Record<string, any>;
const root = fileURLToPath(new URL('../../', import.meta.url));

let t: TestGateway;
let doc: Json;
/** a real record per path parameter of the routes whose examples are replayed, by path prefix */
let fixtures: Record<string, Record<string, string>>;

beforeAll(async () => {
  t = await startTestGateway();
  const res = await call(t, 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body as Json;
  const wallet = { id: (await t.newAgentWallet(t.workspace, 'openapi-examples')).walletId };
  const capabilityId = await createCapability(t, t.creds.provider.id, { priceMinor: '10' });
  fixtures = {
    '/v1/wallets/{id}': { id: wallet.id },
    '/v1/capabilities/{id}': { id: capabilityId },
    '/v1/providers/{id}': { id: t.creds.provider.id },
  };
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** the routes the document describes: all but the dashboard's static files (schema.hide) */
const documentedRoutes = () => apiRoutes(t).filter((r) => !(r.schema as { hide?: boolean } | undefined)?.hide);
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
/** the codes an operation documents for an error status: the envelope's `code`, narrowed by the allOf's second member */
const codesOf = (op: Json, status: string): string[] => op.responses[status].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
const operations = () =>
  Object.entries(doc.paths as Json).flatMap(([path, ops]) => Object.entries(ops as Json).map(([method, op]) => ({ path, method: method.toUpperCase(), op: op as Json })));

describe('GET /openapi.json', () => {
  it('is served without a key, over HTTPS only', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const plain = await call(t, 'GET', '/openapi.json', { baseUrl: t.httpUrl });
    expect(plain.status).toBe(403);
    expect(plain.body.error?.code).toBe('INSECURE_TRANSPORT');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc));
    expect(res.errors ?? [], JSON.stringify(res.errors)?.slice(0, 2000)).toEqual([]);
    expect(res.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has every route the gateway registered (its onRoute table), and nothing else', () => {
    const registered = documentedRoutes().map((r) => `${r.method} ${toOpenApiPath(r.url)}`).sort();
    const documented = operations().map((o) => `${o.method} ${o.path}`).sort();
    expect(documented).toEqual(registered);
  });

  it('has a success answer declared by every route itself: nothing supplies one for a route that has none', () => {
    // responses.ts adds the error statuses only; a route's 2xx schema is its own, from the contract
    const undeclared = documentedRoutes().filter((r) => !Object.keys((r.schema?.response ?? {}) as object).some((s) => s.startsWith('2'))).map((r) => `${r.method} ${r.url}`);
    expect(undeclared, 'routes without a 2xx response schema').toEqual([]);
    const open = operations().flatMap(({ path, method, op }) => Object.entries(op.responses as Json)
      .filter(([s, r]) => s.startsWith('2') && (r as Json).content?.['application/json']?.schema?.additionalProperties === true && Object.keys((r as Json).content['application/json'].schema.properties ?? {}).length === 0)
      .map(([s]) => `${method} ${path} ${s}`));
    expect(open, 'success answers that are an object of any fields').toEqual([]);
  });

  it("gives each operation the route's scope, a 200 answer, and its errors per status in the envelope", () => {
    const byName = new Map(documentedRoutes().map((r) => [`${r.method} ${toOpenApiPath(r.url)}`, r]));
    for (const { path, method, op } of operations()) {
      const name = `${method} ${path}`;
      const route = byName.get(name)!;
      const scope = route.config.scope ?? (route.config.public ? 'public' : 'any valid key');
      expect(op['x-scope'], name).toBe(scope);
      expect(op.security, name).toEqual(route.config.public ? [] : [{ apiKey: [] }]);
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      expect(success.length, name).toBeGreaterThan(0);
      for (const s of success) expect(op.responses[s]?.content?.['application/json']?.schema ?? op.responses[s]?.content?.['text/plain']?.schema, `${name} ${s}`).toBeTypeOf('object');
      const errorStatuses = Object.keys(op.responses).filter((s) => Number(s) >= 400);
      // every route can be refused over plain HTTP, rate limited, and fail unexpectedly
      expect(errorStatuses, name).toEqual(expect.arrayContaining(['400', '403', '429', '500']));
      for (const s of errorStatuses) {
        // the named envelope, its code narrowed to the codes of this status
        const schema = op.responses[s].content['application/json'].schema;
        expect(schema.allOf[0], `${name} ${s}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        expect(schema.allOf[1].required, `${name} ${s}`).toEqual(['error']);
        expect(codesOf(op, s).length, `${name} ${s}`).toBeGreaterThan(0);
      }
      expect(codesOf(op, '403'), name).toContain('INSECURE_TRANSPORT');
      if (route.config.scope) expect(codesOf(op, '401'), name).toEqual(['UNAUTHORIZED']);
    }
  });

  it('names the contract\'s shapes in components.schemas, and routes refer to them', () => {
    const schemas = doc.components.schemas as Json;
    for (const name of ['Wallet', 'Balance', 'LedgerEntry', 'Capability', 'Policy', 'Receipt', 'PriceChallenge', 'UnsignedPriceChallenge', 'PaymentProof', 'Authorization', 'Replay', 'ErrorEnvelope', 'ErrorObject']) {
      expect(schemas[name]?.title, name).toBe(name);
    }
    expect(schemas.ErrorEnvelope.required).toEqual(['error']);
    expect(schemas.ErrorEnvelope.properties.error).toEqual({ $ref: '#/components/schemas/ErrorObject' });
    expect(schemas.ErrorObject.required).toEqual(['code', 'message', 'details']);
    expect(schemas.PaymentProof.properties.challenge).toEqual({ $ref: '#/components/schemas/PriceChallenge' });
    // every reference resolves, and the receipt and the wallet are referred to rather than inlined
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    for (const ref of new Set(refs)) expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeTypeOf('object');
    expect(doc.paths['/v1/receipts/{id}'].get.responses['200'].content['application/json'].schema.properties.receipt).toEqual({ $ref: '#/components/schemas/Receipt' });
    expect(refs.filter((r) => r.endsWith('/Receipt')).length).toBeGreaterThan(3);
    const paths = JSON.stringify(doc.paths);
    expect(paths).not.toContain(JSON.stringify(schemas.Receipt.required));
    // 772 KB when every shape was inlined (before the payment session routes, which added about 41 KB,
    // the payout and top-up events with their data shapes, about 8 KB, and the sessions' claims, the
    // buyer's end, the sandbox session expiry and the four session events, about 15 KB; the operator's activity route and the session offer, about 4 KB)
    expect(JSON.stringify(doc).length).toBeLessThan(660_000);
  });

  it('is what `agentpay openapi` prints (stdout and --output), without a gateway', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-openapi-'));
    try {
      const out = spawnSync(process.execPath, [join(root, 'bin/run.js'), 'openapi'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(out.status, out.stderr).toBe(0);
      const printed = JSON.parse(out.stdout) as Json;
      expect(Object.keys(printed.paths).sort()).toEqual(Object.keys(doc.paths).sort());
      expect(printed.paths['/v1/wallets/{id}'].get).toEqual(doc.paths['/v1/wallets/{id}'].get);
      const file = join(dir, 'openapi.json');
      const written = spawnSync(process.execPath, [join(root, 'bin/run.js'), 'openapi', '--output', file, '--json'], { encoding: 'utf8' });
      expect(written.status, written.stderr).toBe(0);
      expect(JSON.parse(written.stdout)).toEqual({ path: file, openapi: '3.1.0', paths: Object.keys(doc.paths).length });
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(printed);
      // the build writes it into the package
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[]; scripts: { build: string } };
      expect(pkg.files).toContain('openapi.json');
      expect(pkg.scripts.build).toContain('bin/run.js openapi --output openapi.json');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the documented examples, replayed against the live gateway', () => {
  const ajv = new Ajv.default({ strict: false, allErrors: true });
  ajv.addKeyword('x-amount');

  /** The request examples of an operation (its body's), or one request without a body when only its answer has one. */
  function examplesOf(op: Json): unknown[] {
    const media = op.requestBody?.content?.['application/json'];
    const bodies = [
      ...(media?.example !== undefined ? [media.example] : []),
      ...Object.values((media?.examples ?? {}) as Record<string, { value: unknown }>).map((e) => e.value),
      ...((media?.schema?.examples as unknown[] | undefined) ?? []),
    ];
    if (bodies.length) return bodies;
    const answer = op.responses['200']?.content?.['application/json'];
    return answer?.example !== undefined || answer?.examples !== undefined ? [undefined] : [];
  }

  it('covers the main routes', () => {
    const withExamples = operations().filter(({ op }) => examplesOf(op).length > 0).map((o) => `${o.method} ${o.path}`);
    expect(withExamples).toEqual(expect.arrayContaining(['GET /health', 'POST /v1/wallets', 'GET /v1/wallets/{id}/balance', 'POST /v1/wallets/{id}/fund', 'POST /v1/capabilities', 'POST /v1/policies', 'POST /v1/auth/keys']));
  });

  it('each is answered 2xx with a body its declared response schema accepts', async () => {
    let replayed = 0;
    for (const { path, method, op } of operations()) {
      for (const body of examplesOf(op)) {
        const name = `${method} ${path} ${JSON.stringify(body) ?? ''}`;
        const params = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
        const values = Object.entries(fixtures).find(([prefix]) => path.startsWith(prefix))?.[1] ?? {};
        const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, p: string) => {
          if (!values[p]) throw new Error(`${name}: no fixture for {${p}}: add one to this test`);
          return encodeURIComponent(values[p]);
        });
        expect(params.every((p) => values[p]), name).toBe(true);
        const scope = op['x-scope'] as string;
        const apiKey = scope === 'public' ? null : devKey(t, scope === 'any valid key' ? 'workspace' : tenantKindFor(scope as Scope));
        const res = await call(t, method, url, { apiKey, ...(body !== undefined ? { body } : {}) });
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(200);
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
        const declared = op.responses[String(res.status)]?.content?.['application/json']?.schema;
        expect(declared, name).toBeTypeOf('object');
        // the schema with the document's components beside it, so that its $refs resolve
        const validate = ajv.compile({ ...declared, components: doc.components });
        expect(validate(res.body), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        replayed++;
      }
    }
    expect(replayed).toBeGreaterThanOrEqual(7);
  });
});
