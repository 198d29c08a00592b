/**
 * Query strings on every route: a field the route does not know is refused with 400
 * VALIDATION_FAILED naming it, before anything is read or written, so a misspelt
 * `?lmit=5` never passes as the default; the tenant ids the specification says to ignore
 * are accepted everywhere.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { apiRoutes, call, changedTables, routeName, snapshotDb } from '../helpers/matrix.js';
import { rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

describe('an unknown query field', () => {
  for (const r of apiRoutes(t)) {
    it(`${routeName(r)} refuses it with 400 VALIDATION_FAILED naming it, and writes nothing`, async () => {
      const c = await rightfulCall(t, r);
      const before = snapshotDb(t.dataDir);
      const res = await call(t, r.method, `${c.path}?misspeltField=x`, { apiKey: c.apiKey, ...(c.body ? { body: c.body } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message).toContain('misspeltField');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    });
  }
});

describe('the tenant ids in a query', () => {
  it('are accepted and ignored on a route with its own query fields and on one without', async () => {
    const { workspace } = t.creds;
    const receipts = await call(t, 'GET', `/v1/receipts?limit=5&workspaceId=${workspace.id}`, { apiKey: workspace.apiKey });
    expect(receipts.status, JSON.stringify(receipts.body)).toBe(200);
    const wallets = await call(t, 'GET', '/v1/wallets?workspaceId=someone_else', { apiKey: workspace.apiKey });
    expect(wallets.status, JSON.stringify(wallets.body)).toBe(200);
  });
});
