/**
 * The error envelope where no route answers: unknown routes get 404 NOT_FOUND in the
 * envelope, and an unexpected error gets 500 INTERNAL with the message "internal error"
 * and an errorId that is also in the log, with nothing of the error's own text.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { randomIds } from '../../src/core/ids.js';
import { ensurePlatform } from '../../src/domain/tenancy/tenants.js';
import { buildApp } from '../../src/gateway/app.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { buildServices } from '../../src/gateway/services.js';
import { openTestStore, startTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/matrix.js';

const t = await startTestGateway();
afterAll(() => t.close());

describe('an unknown route', () => {
  const cases: [string, string, unknown][] = [
    ['GET', '/v1/no-such-thing', undefined],
    ['POST', '/v1/no-such-thing', { a: 1 }],
    ['GET', '/no-such-thing', undefined],
    ['DELETE', '/v1/wallets', undefined], // a known path with a method it does not serve
    ['GET', '/v2/wallets', undefined],
  ];
  for (const [method, path, body] of cases) {
    it(`${method} ${path} answers 404 NOT_FOUND in the envelope, with or without a key`, async () => {
      for (const apiKey of [null, t.creds.workspace.apiKey]) {
        const res = await call(t, method, path, { apiKey, body });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: `no route ${method} ${path}`, details: { method } } });
      }
    });
  }
});

describe('an unexpected error', () => {
  it('answers 500 INTERNAL "internal error" with an errorId that the log carries, and hides its own message', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const store = await openTestStore();
    const ctx = { store, clock: systemClock, ids: randomIds };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keys = new Map<string, string>();
    // trustProxy lets app.inject() claim https through x-forwarded-proto
    const services = await buildServices(ctx, resolveConfig({ trustProxy: true }), { read: (id) => keys.get(id), write: (id, pem) => void keys.set(id, pem) });
    const app = await buildApp({ services, logger: { level: 'error', stream } });
    app.get('/v1/test/boom', { config: { public: true } }, async () => {
      throw new Error('secret database detail');
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/v1/test/boom', headers: { 'x-forwarded-proto': 'https' } });
      expect(res.statusCode).toBe(500);
      const body = res.json() as { error: { code: string; message: string; details: { errorId: string } } };
      expect(body.error).toEqual({ code: 'INTERNAL', message: 'internal error', details: { errorId: expect.stringMatching(/^err_/) } });
      expect(res.body).not.toContain('secret database detail');

      const logged = lines.find((l) => l.errorId === body.error.details.errorId);
      expect(logged, JSON.stringify(lines)).toBeDefined();
      expect(JSON.stringify(logged)).toContain('secret database detail');
      expect(logged!.level).toBe(50); // pino's "error"
    } finally {
      await app.close();
      await store.close();
    }
  });
});

describe('a 400 VALIDATION_FAILED', () => {
  it('has the same details whether the schema refused or a service did: field, location, problems', async () => {
    const { apiKey } = t.creds.workspace;
    const wallet = (await call(t, 'POST', '/v1/wallets', { apiKey, body: { ownerType: 'agent', ownerId: 'errors-shape' } })).body as { id: string };
    // the schema: an amount that is not a string of digits
    const schema = await call(t, 'POST', `/v1/wallets/${wallet.id}/fund`, { apiKey, body: { amountMinor: 'ten' } });
    expect(schema.status).toBe(400);
    expect(schema.body.error?.details).toMatchObject({ field: 'amountMinor', location: 'body', problems: [{ field: 'amountMinor', problem: expect.any(String) }] });
    // the service: a zero amount passes the schema's pattern and is refused by the ledger's rule
    const service = await call(t, 'POST', `/v1/wallets/${wallet.id}/fund`, { apiKey, body: { amountMinor: '0' } });
    expect(service.status).toBe(400);
    expect(service.body.error?.message).toBe('amountMinor: must be greater than zero');
    expect(service.body.error?.details).toEqual({ field: 'amountMinor', location: 'body', problems: [{ field: 'amountMinor', problem: 'must be greater than zero' }] });
  });
});
