/**
 * The route table of `agentpay proxy` (src/cli/paywall/routes.ts): the config file as read, the
 * patterns as matched, and what happens to a route no rule lists. Pure: no gateway, no store.
 */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/errors/index.js';
import { capabilitiesOf, lookup, parseProxyConfig, routeTable } from '../../../src/cli/paywall/routes.js';

const table = (routes: Record<string, string>, extra: Record<string, unknown> = {}, flags: { capability?: string; passUnknown?: boolean } = {}) =>
  routeTable({ config: parseProxyConfig(JSON.stringify({ routes, ...extra }), 'proxy.json'), configFile: 'proxy.json', ...flags });

const refusal = (f: () => unknown): CliError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return e as CliError;
  }
  throw new Error('expected a refusal');
};

describe('proxy routes', () => {
  const t = table({
    'GET /forecast': 'cap_a',
    'POST /reports/*': 'cap_b',
    '/users/:id/history': 'cap_c',
    '* /admin/*': 'free',
    'GET /health': 'free',
    '/forecast': 'cap_d',
  });

  it('matches method and path; a route without a method (or *) takes any', () => {
    expect(lookup(t, 'GET', '/forecast').target).toEqual({ kind: 'paid', capabilityId: 'cap_a' });
    expect(lookup(t, 'get', '/forecast').target).toEqual({ kind: 'paid', capabilityId: 'cap_a' });
    // first match wins: POST /forecast is not GET, so the any-method rule below it sells it
    expect(lookup(t, 'POST', '/forecast').target).toEqual({ kind: 'paid', capabilityId: 'cap_d' });
    expect(lookup(t, 'DELETE', '/admin/users/1').target).toEqual({ kind: 'free' });
    expect(lookup(t, 'GET', '/health').target).toEqual({ kind: 'free' });
    // HEAD goes with GET: the seller core refuses it on a sold route (405), a free one forwards it
    expect(lookup(t, 'HEAD', '/health').target).toEqual({ kind: 'free' });
    expect(lookup(table({ 'GET /a': 'cap_a' }), 'HEAD', '/a').target).toEqual({ kind: 'paid', capabilityId: 'cap_a' });
    expect(lookup(table({ 'POST /a': 'cap_a' }), 'HEAD', '/a').target).toEqual({ kind: 'reject' });
  });

  it('matches :name as one segment and a final * as the rest, slashes included', () => {
    expect(lookup(t, 'POST', '/reports/2026/q1/summary').target).toEqual({ kind: 'paid', capabilityId: 'cap_b' });
    expect(lookup(t, 'POST', '/reports/').target).toEqual({ kind: 'paid', capabilityId: 'cap_b' });
    expect(lookup(t, 'POST', '/reports').target).toEqual({ kind: 'reject' });
    expect(lookup(t, 'GET', '/users/42/history').target).toEqual({ kind: 'paid', capabilityId: 'cap_c' });
    expect(lookup(t, 'GET', '/users/42/7/history').target).toEqual({ kind: 'reject' });
    expect(lookup(t, 'GET', '/users//history').target).toEqual({ kind: 'reject' });
    expect(lookup(t, 'GET', '/forecastX').target).toEqual({ kind: 'reject' });
  });

  it('rejects unlisted routes by default; "pass" or --pass-unknown forwards them free; --capability sells them', () => {
    expect(lookup(t, 'GET', '/other').target).toEqual({ kind: 'reject' });
    expect(lookup(table({ 'GET /a': 'cap_a' }, { unknownRoutes: 'pass' }), 'GET', '/other').target).toEqual({ kind: 'free' });
    expect(lookup(table({ 'GET /a': 'cap_a' }, {}, { passUnknown: true }), 'GET', '/other').target).toEqual({ kind: 'free' });
    expect(lookup(table({ 'GET /a': 'cap_a' }, {}, { capability: 'cap_z' }), 'GET', '/other').target).toEqual({ kind: 'paid', capabilityId: 'cap_z' });
    expect(lookup(routeTable({ capability: 'cap_z' }), 'PUT', '/any/thing').target).toEqual({ kind: 'paid', capabilityId: 'cap_z' });
  });

  it('lists each capability once with where it was named', () => {
    expect(capabilitiesOf(table({ 'GET /a': 'cap_a', 'GET /b': 'cap_a', 'GET /c': 'free' }, {}, { capability: 'cap_z' }), 'proxy.json')).toEqual([
      { capabilityId: 'cap_a', from: 'route "GET /a" of proxy.json' },
      { capabilityId: 'cap_z', from: '--capability' },
    ]);
  });

  it('refuses a file or flags it cannot use, naming the file, the field or the flag', () => {
    expect(refusal(() => parseProxyConfig('{"routes": ', 'proxy.json')).message).toMatch(/^proxy\.json is not JSON/);
    expect(refusal(() => parseProxyConfig('[]', 'proxy.json')).message).toContain('must hold a JSON object');
    expect(refusal(() => table({})).message).toBe('proxy.json: "routes" must be an object with at least one route');
    expect(refusal(() => table({ 'GET /a': 'cap_a' }, { price: 5 })).message).toBe('proxy.json: "price" is not a setting of the proxy');
    expect(refusal(() => table({ 'GET /a': 'cap_a' }, { unknownRoutes: 'allow' })).message).toBe('proxy.json: "unknownRoutes" is "allow"');
    expect(refusal(() => table({ forecast: 'cap_a' })).message).toBe('proxy.json: route "forecast" is not "METHOD /path" or "/path"');
    expect(refusal(() => table({ 'GET /a/*/b': 'cap_a' })).message).toBe('proxy.json: route "GET /a/*/b" has a * before its end');
    expect(refusal(() => table({ 'GET /a': 'premium' })).message).toBe('proxy.json: routes["GET /a"] is "premium", not a capability id (cap_…) or "free"');
    expect(refusal(() => parseProxyConfig('{"routes": {"GET /a": 5}}', 'proxy.json')).message).toBe('proxy.json: routes["GET /a"] must be a capability id (cap_…) or "free"');
    expect(refusal(() => routeTable({})).details).toEqual({ flag: '--capability' });
    expect(refusal(() => routeTable({ capability: 'forecast' })).message).toContain('--capability "forecast" is not a capability id');
    expect(refusal(() => routeTable({ capability: 'cap_a', passUnknown: true })).details).toEqual({ flag: '--pass-unknown' });
    expect(refusal(() => table({ 'GET /a': 'cap_a' }, {}, { capability: 'cap_z', passUnknown: true })).message).toContain('--pass-unknown would forward them free');
  });
});
