/**
 * Amounts are strings of integer minor units. On every route whose body has an amount
 * (a property marked `x-amount`), a JSON number, a decimal string and other non-integer
 * forms are refused with 400 VALIDATION_FAILED naming the field, and nothing is written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { amountFields, apiRoutes, bodySchema, call, changedTables, routeName, snapshotDb, withPath } from '../helpers/matrix.js';
import { rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const BAD_AMOUNTS: unknown[] = [100, 1.5, '1.5', '-1', '1e3', '0100', ' 100', ''];

describe('amount fields', () => {
  const routes = apiRoutes(t).filter((r) => amountFields(bodySchema(r)).length > 0);

  it('exist on some route (the matrix is not empty)', () => {
    expect(routes.map(routeName)).toContain('POST /v1/wallets/:id/fund');
  });

  for (const r of routes) {
    for (const field of amountFields(bodySchema(r))) {
      it(`${routeName(r)} refuses ${field} as a JSON number or a non-integer string, naming it, and writes nothing`, async () => {
        const c = await rightfulCall(t, r);
        const before = snapshotDb(t.dataDir);
        for (const bad of BAD_AMOUNTS) {
          const res = await call(t, r.method, c.path, { apiKey: c.apiKey, body: withPath(c.body, field, bad) });
          expect(res.status, `${field} = ${JSON.stringify(bad)}: ${JSON.stringify(res.body)}`).toBe(400);
          expect(res.body.error?.code).toBe('VALIDATION_FAILED');
          expect(res.body.error?.message).toContain(field.split('.').at(-1));
        }
        expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
      });
    }
  }
});
