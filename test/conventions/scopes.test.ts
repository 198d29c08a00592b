/**
 * Authentication and scopes on every route that needs a key: no key or an unknown key
 * is 401 UNAUTHORIZED; a key holding every scope of its tenant kind except the route's
 * own is 403 FORBIDDEN naming that scope, while the same tenant's full key gets past
 * the scope check. Keys are minted per route, so new routes are covered as they appear.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/tenancy/scopes.js';
import { DEFAULT_SCOPES } from '../../src/domain/tenancy/scopes.js';
import { startTestGateway } from '../helpers/gateway.js';
import {
  apiRoutes, call, devTenant, mintKey, needsKey, routeName,
} from '../helpers/matrix.js';
import { callerKind, rightfulCall } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const routes = apiRoutes(t);

describe('routes that need a key', () => {
  for (const r of routes.filter(needsKey)) {
    it(`${routeName(r)} answers 401 UNAUTHORIZED without a key and with an unknown key`, async () => {
      const { path, body } = await rightfulCall(t, r);
      for (const apiKey of [null, 'ap_w_unknownunknownunknownunknown00']) {
        const res = await call(t, r.method, path, { apiKey, body });
        expect(res.status, `key ${String(apiKey)}`).toBe(401);
        expect(res.body.error?.code).toBe('UNAUTHORIZED');
      }
    });
  }
});

describe('routes with a scope', () => {
  for (const r of routes.filter((x) => x.config.scope)) {
    const scope = r.config.scope as Scope;
    const kind = callerKind(r)!;

    it(`${routeName(r)} refuses a ${kind} key lacking ${scope} with 403 FORBIDDEN naming it`, async () => {
      const { path, body, tenant } = await rightfulCall(t, r);
      const holder = tenant ?? devTenant(t, kind);
      const allButOne = DEFAULT_SCOPES[holder.kind].filter((s) => s !== scope);
      const res = await call(t, r.method, path, { apiKey: await mintKey(t, holder, allButOne), body });
      expect(res.status).toBe(403);
      expect(res.body.error?.code).toBe('FORBIDDEN');
      expect(res.body.error?.message).toContain(scope);

      // control: the same tenant with the scope gets past the check
      const ok = await call(t, r.method, path, { apiKey: await mintKey(t, holder, DEFAULT_SCOPES[holder.kind]), body });
      expect(ok.status).not.toBe(401);
      expect(ok.body.error?.details?.scope, JSON.stringify(ok.body)).toBeUndefined();
    });
  }
});

describe('routes declared public', () => {
  for (const r of routes.filter((x) => x.config.public)) {
    it(`${routeName(r)} needs no key`, async () => {
      const { path, body } = await rightfulCall(t, r);
      const res = await call(t, r.method, path, { apiKey: null, body });
      expect(res.status).not.toBe(401);
      expect(res.body.error?.code).not.toBe('FORBIDDEN');
    });
  }
});
