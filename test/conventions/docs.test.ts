/**
 * docs/api/*.md describe every route the gateway serves: each `METHOD /path` of the route
 * table appears in them (a `:param` may be written under any name), so a route added
 * without its documentation fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { apiRoutes, routeName } from '../helpers/matrix.js';

const apiDocs = fileURLToPath(new URL('../../docs/api/', import.meta.url));
const docs = readdirSync(apiDocs).filter((f) => f.endsWith('.md')).map((f) => readFileSync(join(apiDocs, f), 'utf8')).join('\n');

/** The route as documentation may write it: any name (or `…`) for each `:param`. */
function documented(method: string, url: string): boolean {
  const path = url.split('/').map((seg) => (seg.startsWith(':') ? ':[A-Za-z0-9_]+|\\{[A-Za-z0-9_]+\\}|…' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  const pattern = new RegExp(`${method}\\s+\`?${path.map((p) => (p.startsWith(':') ? `(?:${p})` : p)).join('/')}(?![A-Za-z0-9_/-])`);
  return pattern.test(docs);
}

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t?.close();
});

describe('docs/api', () => {
  it('is read the way this test thinks (a made-up route is not found, a real one is, under any param name)', () => {
    expect(documented('GET', '/v1/not-a-route')).toBe(false);
    expect(documented('POST', '/v1/wallets/:id/fund')).toBe(true);
    expect(documented('POST', '/v1/wallets/:walletId/fund')).toBe(true);
    expect(documented('GET', '/v1/wallets')).toBe(true);
  });

  it('names every route of the route table', () => {
    const missing = apiRoutes(t).filter((r) => !documented(r.method, r.url)).map(routeName);
    expect(missing).toEqual([]);
  });
});
