/**
 * Request ids have their own kind, `request` (`req_` + 16 base-36 characters), distinct
 * from error reports (`err_`): every log line of a request carries one as `reqId`, a new
 * one per request, and an unexpected error's `errorId` stays an `err_` id beside it.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { ID_PREFIX, randomId, randomIds } from '../../src/core/ids.js';
import { ensurePlatform } from '../../src/domain/tenancy/tenants.js';
import { buildApp } from '../../src/gateway/app.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { buildServices } from '../../src/gateway/services.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore } from '../helpers/gateway.js';

const REQ_ID = /^req_[0-9a-z]{20}$/;

describe("randomId('request')", () => {
  it('is req_ and 16 base-36 characters, a prefix no other kind uses', () => {
    expect(ID_PREFIX.request).toBe('req');
    expect(randomId('request')).toMatch(REQ_ID);
    expect(Object.entries(ID_PREFIX).filter(([, p]) => p === 'req').map(([k]) => k)).toEqual(['request']);
  });
});

describe('the gateway app', () => {
  const lines: Record<string, unknown>[] = [];
  let store: Store;
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    store = await openTestStore();
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const ctx = { store, clock: systemClock, ids: randomIds };
    await store.tx((r) => ensurePlatform(r, ctx));
    const keys = new Map<string, string>();
    // trustProxy lets app.inject() claim https through x-forwarded-proto
    const services = await buildServices(ctx, resolveConfig({ trustProxy: true }), { read: (id) => keys.get(id), write: (id, pem) => void keys.set(id, pem) });
    app = await buildApp({ services, logger: { level: 'info', stream } });
    app.get('/v1/test/boom', { config: { public: true } }, async () => {
      throw new Error('boom');
    });
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  it('logs every request under a new req_ id', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'GET', url: '/health', headers: { 'x-forwarded-proto': 'https' } });
      expect(res.statusCode).toBe(200);
    }
    const ids = [...new Set(lines.filter((l) => l.msg === 'request' && l.url === '/health').map((l) => l.reqId))];
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(id).toMatch(REQ_ID);
  });

  it("logs an unexpected error with the request's req_ id and its own err_ errorId", async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/test/boom', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(500);
    const { errorId } = res.json() as { errorId: string };
    expect(errorId).toMatch(/^err_[0-9a-z]{20}$/);
    const logged = lines.find((l) => l.errorId === errorId);
    expect(logged?.reqId).toMatch(REQ_ID);
  });
});
