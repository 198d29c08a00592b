/**
 * Health for load balancers: `GET /health` (the contract's shape) and `GET /health/live` say the
 * process answers; `GET /health/ready` asks the database and answers 503 SERVICE_UNAVAILABLE in the
 * envelope when it does not; `instanceId` names the process, new at each start (the signing key id,
 * `instance`, is the same on every instance of a fleet and across restarts). Plain HTTP behind a
 * proxy: test/gateway/transport.test.ts; a balancer in front of a fleet: test/fleet/balancer.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const clock = new ManualClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-health-'));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock, dataDir });
});
afterAll(async () => {
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await t.client().http.raw('GET', path, { apiKey: null });
  return { status: res.status, body: res.body };
}

describe('GET /health and /health/live', () => {
  it('answer the same: status ok, the signing key id as instance, this process as instanceId, the gateway time', async () => {
    const expected = { status: 'ok', instance: t.gw.services.signingKeys.currentKeyId, instanceId: t.gw.services.instanceId, time: '2026-05-01T12:00:00.000Z' };
    expect(t.gw.services.instanceId).toMatch(/^ins_[0-9a-z]{20}$/);
    expect(await get('/health')).toEqual({ status: 200, body: expected });
    expect(await get('/health/live')).toEqual({ status: 200, body: expected });
    expect(await t.client().platform.health()).toEqual(expected);
  });
});

describe('GET /health/ready', () => {
  it('answers 200 ready once the database answers a SELECT 1', async () => {
    expect(await get('/health/ready')).toEqual({ status: 200, body: { status: 'ready', instanceId: t.gw.services.instanceId, database: 'ok', time: '2026-05-01T12:00:00.000Z' } });
  });

  it('answers 503 SERVICE_UNAVAILABLE naming the instance when the database does not answer, while liveness stays 200; ready again after', async () => {
    const store = t.gw.services.ctx.store;
    const ping = store.ping.bind(store);
    let asked = 0;
    store.ping = async () => {
      asked++;
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432 (postgres://agentpay:***@db.internal/agentpay)');
    };
    try {
      const down = await get('/health/ready');
      expect(asked).toBe(1);
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { instanceId: t.gw.services.instanceId, database: 'unreachable' } });
      expect(down.body.error.message).toContain(`instance ${t.gw.services.instanceId} is not ready: its database does not answer`);
      // the cause stays in the log: no host name or URL for whoever asked
      expect(JSON.stringify(down.body)).not.toMatch(/10\.0\.0\.5|db\.internal|ECONNREFUSED/);
      expect((await get('/health')).status).toBe(200);
      expect((await get('/health/live')).status).toBe(200);
    } finally {
      store.ping = ping;
    }
    expect((await get('/health/ready')).status).toBe(200);
  });

  it('asks the real store: a closed store is not ready', async () => {
    const other = await startTestGateway({ clock });
    await other.gw.services.ctx.store.ping();
    await other.close();
    await expect(other.gw.services.ctx.store.ping()).rejects.toThrow();
  });
});

describe('instanceId', () => {
  it('is new at each start on the same data directory and database, where the signing key id stays', async () => {
    const before = { instance: t.gw.services.signingKeys.currentKeyId, instanceId: t.gw.services.instanceId };
    await t.close();
    t = await startTestGateway({ clock, dataDir });
    const after = await get('/health');
    expect(after.body.instance).toBe(before.instance);
    expect(after.body.instanceId).toMatch(/^ins_/);
    expect(after.body.instanceId).not.toBe(before.instanceId);
  });
});
