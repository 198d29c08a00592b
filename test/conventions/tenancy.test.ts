/**
 * Tenancy on every route that takes a record id: tenant B calling with tenant A's record
 * id gets 403 or 404 and changes nothing anywhere in the database; list routes never
 * show B anything of A's. Records come from the per-resource fixtures in ./fixtures.ts;
 * a route with no fixture fails the first test below, so no route escapes the matrix.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPES, type Scope } from '../../src/domain/tenancy/scopes.js';
import { startTestGateway } from '../helpers/gateway.js';
import {
  apiRoutes, bodyFor, call, changedTables, fillPath, hasBody, needsKey, pathParams, routeName, snapshotDb, type RouteEntry,
} from '../helpers/matrix.js';
import { fixtureFor, newTenant, RESOURCE_FIXTURES, tenantScopedRoutes, type TenantHandle } from './fixtures.js';

const t = await startTestGateway();
afterAll(() => t.close());

const routes = apiRoutes(t);
const withIds = tenantScopedRoutes(routes);
const KINDS = ['workspace', 'provider'] as const;
const mayCall = (kind: 'workspace' | 'provider', r: RouteEntry) => !r.config.scope || DEFAULT_SCOPES[kind].includes(r.config.scope as Scope);
const bodyOf = (r: RouteEntry, values: Record<string, string>) => (hasBody(r.method) ? { body: bodyFor(r, values) } : {});

describe('tenancy fixtures', () => {
  it('exist for every route that takes a record id', () => {
    const missing = withIds.filter((r) => !fixtureFor(r.url)).map(routeName);
    expect(
      missing,
      `these routes take a record id but no fixture creates such a record, so the tenancy matrix cannot test them: ${missing.join(', ')}. ` +
        'Add an entry for their resource prefix to RESOURCE_FIXTURES in test/conventions/fixtures.ts.',
    ).toEqual([]);
  });
});

describe("another tenant's record id", () => {
  for (const r of withIds) {
    const fx = fixtureFor(r.url);
    if (!fx) continue;
    const shared = fx.fixture.sharedRoutes?.includes(routeName(r)) ?? false;

    it(`${routeName(r)} ${shared ? 'is shared by design but' : 'is refused with 403 or 404 and'} changes nothing`, async () => {
      const owner = await newTenant(t, fx.fixture.owner);
      const params = await fx.fixture.create(t, owner);
      const path = fillPath(r.url, params);

      for (const kind of KINDS.filter((k) => mayCall(k, r))) {
        const other = await newTenant(t, kind);
        const before = snapshotDb(t.dataDir);
        const res = await call(t, r.method, path, { apiKey: other.apiKey, ...bodyOf(r, params) });
        if (!shared) expect([403, 404], `a ${kind} of another tenant got ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
        else expect(res.status).toBeLessThan(500);
        const after = snapshotDb(t.dataDir);
        expect(changedTables(before, after), `a ${kind} of another tenant changed rows`).toEqual([]);
        expect(after).toEqual(before);
      }

      // control: the id is a real record its owner reaches, so the refusal above is about tenancy
      if (!mayCall(owner.kind, r)) return;
      const own = await call(t, r.method, path, { apiKey: owner.apiKey, ...bodyOf(r, params) });
      expect([401, 403, 404], `the owner got ${own.status} ${JSON.stringify(own.body)}`).not.toContain(own.status);
    });
  }
});

describe('list routes', () => {
  const lists = routes.filter((r) => r.method === 'GET' && needsKey(r) && pathParams(r.url).length === 0);

  it("show no tenant another tenant's records", async () => {
    // one record of every fixture, owned by fresh tenants
    const owned: { id: string; shared: readonly string[] }[] = [];
    for (const fixture of Object.values(RESOURCE_FIXTURES)) {
      const owner: TenantHandle = await newTenant(t, fixture.owner);
      const params = await fixture.create(t, owner);
      owned.push({ id: params[fixture.recordParam ?? 'id']!, shared: fixture.sharedRoutes ?? [] });
    }
    for (const r of lists) {
      for (const kind of KINDS.filter((k) => mayCall(k, r))) {
        const other = await newTenant(t, kind);
        const res = await call(t, r.method, r.url, { apiKey: other.apiKey });
        expect(res.status, `${routeName(r)} for a ${kind}`).toBeLessThan(500);
        const text = JSON.stringify(res.body);
        for (const rec of owned.filter((o) => !o.shared.includes(routeName(r)))) {
          expect(text, `${routeName(r)} showed ${rec.id} to a ${kind} of another tenant`).not.toContain(rec.id);
        }
      }
    }
    expect(lists.length).toBeGreaterThan(0);
  });
});
