/**
 * Plain HTTP is refused on every route before anything else: no key, a bad key and a
 * good key all get 403 INSECURE_TRANSPORT, and nothing is written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { apiRoutes, call, changedTables, devKey, fillPath, hasBody, minimalBody, routeName, snapshotDb } from '../helpers/matrix.js';

const t = await startTestGateway();
afterAll(() => t.close());

const keys = { 'no key': null, 'an unknown key': 'ap_w_00000000000000000000000000000000', 'a valid key': devKey(t, 'workspace') };

describe('plain HTTP', () => {
  const before = snapshotDb(t.dataDir);

  for (const r of apiRoutes(t)) {
    it(`${routeName(r)} answers 403 INSECURE_TRANSPORT before authentication`, async () => {
      for (const [label, apiKey] of Object.entries(keys)) {
        const res = await call(t, r.method, fillPath(r.url, 'wal_plainhttp'), {
          baseUrl: t.httpUrl,
          apiKey,
          ...(hasBody(r.method) ? { body: minimalBody(r) ?? {} } : {}),
        });
        expect(res.status, `${label}`).toBe(403);
        expect(res.body.error?.code, `${label}`).toBe('INSECURE_TRANSPORT');
      }
    });
  }

  it('refuses an unknown route with 403 INSECURE_TRANSPORT too, not 404', async () => {
    const res = await call(t, 'GET', '/v1/no-such-route', { baseUrl: t.httpUrl });
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('INSECURE_TRANSPORT');
  });

  it('wrote nothing to the database', () => {
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });
});
