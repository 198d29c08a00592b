/**
 * The seller's payment discovery (issue 18 part 5): an OpenAPI document whose paid operations
 * carry the MPP discovery draft's `x-payment-info`, checked by the real validator of the
 * published mppx package (`mppx discover validate`), from a file and from a seller's URL.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentDiscoveryDocument, paymentInfo, withPaymentDiscovery } from 'agentpay-sdk/discovery';
import { ensureTls } from '../../src/gateway/tls.js';

const run = promisify(execFile);
let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'agentpay-discovery-')); });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function validate(target: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: Record<string, unknown> }> {
  try {
    const { stdout } = await run('npx', ['mppx', 'discover', 'validate', target, '--format', 'json'], { env, timeout: 60_000 });
    return { code: 0, out: JSON.parse(stdout) as Record<string, unknown> };
  } catch (e) {
    const err = e as { code?: number; stdout?: string };
    return { code: err.code ?? 1, out: JSON.parse(err.stdout || '{}') as Record<string, unknown> };
  }
}

const operations = [
  { method: 'GET', path: '/forecast', amountMinor: '100', currency: 'USD', summary: 'A forecast', capabilityId: 'cap_forecast' },
  { method: 'POST', path: '/orders', amountMinor: '5', currency: 'USDC' },
];

describe('paymentDiscoveryDocument', () => {
  it('puts one agentpay charge offer and a 402 on each paid operation', () => {
    const doc = paymentDiscoveryDocument({ title: 'Forecasts', version: '1.0.0', operations, serviceInfo: { categories: ['data'] } });
    const get = (doc.paths!['/forecast'] as Record<string, Record<string, unknown>>).get!;
    expect(get['x-payment-info']).toEqual({ offers: [{ intent: 'charge', method: 'agentpay', amount: '100', currency: 'usd', description: '100 USD minor units per call, paid from an agentpay wallet' }] });
    expect(get['x-agentpay-capability']).toBe('cap_forecast');
    expect(Object.keys(get.responses as object)).toEqual(['200', '402']);
    expect((doc.paths!['/orders'] as Record<string, Record<string, unknown>>).post!.requestBody).toBeDefined();
    expect(doc['x-service-info']).toEqual({ categories: ['data'] });
  });

  it('refuses an amount that is not integer minor units, and an unknown method', () => {
    expect(() => paymentInfo({ amountMinor: '1.50', currency: 'USD' })).toThrow(/amountMinor/);
    expect(() => paymentDiscoveryDocument({ title: 't', version: '1', operations: [{ ...operations[0]!, method: 'FETCH' }] })).toThrow(/method/);
  });

  it('adds to an existing document without changing it or its operations', () => {
    const mine = { openapi: '3.1.0', info: { title: 'Mine', version: '2' }, paths: { '/forecast': { get: { operationId: 'forecast', responses: { 200: { description: 'the forecast' } } } }, '/free': { get: { responses: { 200: { description: 'free' } } } } } };
    const out = withPaymentDiscovery(mine, [operations[0]!]);
    expect(mine.paths['/forecast'].get).not.toHaveProperty('x-payment-info');
    expect(out.paths['/forecast'].get).toMatchObject({ operationId: 'forecast', responses: { 200: { description: 'the forecast' }, 402: {} }, 'x-payment-info': { offers: [{ method: 'agentpay' }] } });
    expect(out.paths['/free'].get).not.toHaveProperty('x-payment-info');
  });
});

describe('mppx discover validate (mppx 0.11.0)', () => {
  it('accepts the document from a file', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(paymentDiscoveryDocument({ title: 'Forecasts', version: '1.0.0', operations })));
    const { code, out } = await validate(file);
    expect(out).toMatchObject({ valid: true, errorCount: 0, warningCount: 0 });
    expect(code).toBe(0);
  });

  it('refuses a paid operation the helper would not write (no 402, a decimal amount): the check is real', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: { '/a': { get: { 'x-payment-info': { offers: [{ intent: 'charge', method: 'agentpay', amount: '1.5' }] }, responses: { 200: { description: 'ok' } } } } } }));
    const { code, out } = await validate(file);
    expect(code).not.toBe(0);
    expect(out).toMatchObject({ code: 'DISCOVERY_INVALID' });
  });

  it('accepts it served by a seller at /openapi.json over HTTPS', async () => {
    const tls = await ensureTls(dir);
    const caFile = tls.caCertPath;
    const app = Fastify({ https: { cert: tls.cert, key: tls.key } });
    app.get('/openapi.json', async (_request, reply) =>
      reply.header('cache-control', 'max-age=300').send(paymentDiscoveryDocument({ title: 'Forecasts', version: '1.0.0', operations })));
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `https://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`;
      const { code, out } = await validate(url, { ...process.env, NODE_EXTRA_CA_CERTS: caFile });
      expect(out).toMatchObject({ valid: true, errorCount: 0 });
      expect(code).toBe(0);
    } finally {
      await app.close();
    }
  });
});
