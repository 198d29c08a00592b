/**
 * Content-type rules on every route that takes a body: an empty body sent with
 * `content-type: application/json` is refused with 400 VALIDATION_FAILED naming the
 * body; a route whose body is required refuses no body at all the same way; a route
 * whose body is optional (OptionalBody, or no body schema) accepts no body at all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { apiRoutes, bodyIsOptional, bodySchema, call, changedTables, hasBody, routeName, snapshotDb } from '../helpers/matrix.js';
import { rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const routes = apiRoutes(t).filter((r) => hasBody(r.method));

describe('an empty body with content-type application/json', () => {
  for (const r of routes) {
    it(`${routeName(r)} refuses it with 400 VALIDATION_FAILED and writes nothing`, async () => {
      const c = await rightfulCall(t, r);
      const before = snapshotDb(t.dataDir);
      const res = await call(t, r.method, c.path, { apiKey: c.apiKey, headers: { 'content-type': 'application/json' } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toMatch(/^body: /);
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    });
  }
});

describe('no body at all', () => {
  for (const r of routes) {
    if (bodyIsOptional(r)) {
      it(`${routeName(r)} takes an optional body and accepts none`, async () => {
        const c = await rightfulCall(t, r);
        const res = await call(t, r.method, c.path, { apiKey: c.apiKey });
        expect(res.status, JSON.stringify(res.body)).not.toBe(400);
        expect(res.status, JSON.stringify(res.body)).not.toBe(500);
      });
    } else {
      it(`${routeName(r)} requires a body and refuses none with 400 VALIDATION_FAILED naming it`, async () => {
        const c = await rightfulCall(t, r);
        const before = snapshotDb(t.dataDir);
        const res = await call(t, r.method, c.path, { apiKey: c.apiKey });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error?.code).toBe('VALIDATION_FAILED');
        expect(res.body.error?.message).toMatch(/^body: /);
        expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
      });
    }
  }
});

describe('a body that is not JSON', () => {
  it('is refused with 400 VALIDATION_FAILED whether it claims to be JSON or not, and writes nothing', async () => {
    const f = await t.client().http.fetcher();
    const before = snapshotDb(t.dataDir);
    for (const [type, text] of [['application/json', '{"ownerType":'], ['text/plain', 'ownerType=agent'], ['application/x-www-form-urlencoded', 'ownerType=agent']] as const) {
      const res = await f(`${t.baseUrl}/v1/wallets`, { method: 'POST', headers: { 'content-type': type, 'x-api-key': t.creds.workspace.apiKey }, body: text });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, `${type}: ${JSON.stringify(body)}`).toBe(400);
      expect(body.error.code).toBe('VALIDATION_FAILED');
    }
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });
});

describe('an unknown body field', () => {
  for (const r of routes.filter((x) => bodySchema(x))) {
    it(`${routeName(r)} refuses it with 400 VALIDATION_FAILED naming it, and writes nothing`, async () => {
      const c = await rightfulCall(t, r);
      const before = snapshotDb(t.dataDir);
      const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: { ...c.body, misspeltField: 'x' } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toContain('misspeltField');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    });
  }
});
