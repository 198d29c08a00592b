/**
 * Unknown enum values are rejected, not ignored: on every route, each enum property of
 * the body (and of the query string) refuses a value outside its list with 400
 * VALIDATION_FAILED naming the field, and nothing is written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import {
  apiRoutes, bodySchema, call, changedTables, enumFields, querySchema, routeName, snapshotDb, withPath,
} from '../helpers/matrix.js';
import { rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const UNKNOWN = 'no_such_value';
const routes = apiRoutes(t);

describe('enum fields of bodies', () => {
  for (const r of routes) {
    for (const { path: field, values } of enumFields(bodySchema(r))) {
      it(`${routeName(r)} refuses an unknown ${field} with 400 naming it and its allowed values`, async () => {
        const c = await rightfulCall(t, r);
        const before = snapshotDb(t.dataDir);
        const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: withPath(c.body, field, UNKNOWN) });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error?.code).toBe('VALIDATION_FAILED');
        expect(res.body.error?.message).toContain(field.split('.').at(-1));
        expect(res.body.error?.message).toContain(JSON.stringify(values[0]));
        expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
      });
    }
  }
});

describe('enum fields of query strings', () => {
  for (const r of routes) {
    for (const { path: field } of enumFields(querySchema(r))) {
      it(`${routeName(r)} refuses an unknown ?${field}= with 400 naming it`, async () => {
        const c = await rightfulCall(t, r);
        const res = await call(t, r.method, `${c.path}?${field}=${UNKNOWN}`, { apiKey: c.apiKey });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.error?.code).toBe('VALIDATION_FAILED');
        expect(res.body.error?.message).toContain(field);
      });
    }
  }
});

describe('POST /v1/wallets ownerType', () => {
  it('refuses the internal owner types settlement and platform, and a differently cased agent', async () => {
    for (const ownerType of ['settlement', 'platform', 'Agent']) {
      const res = await call(t, 'POST', '/v1/wallets', { apiKey: t.creds.workspace.apiKey, body: { ownerType, ownerId: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toMatch(/^ownerType: must be one of "agent", "workspace"/);
    }
  });
});
