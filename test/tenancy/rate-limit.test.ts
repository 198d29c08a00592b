import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { uniqueEmail } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ config: { rateLimit: { max: 100_000, windowMs: 1000, signupMax: 2, signupWindowMs: 60_000 } } });
});
afterAll(async () => {
  await t?.close();
});

describe('the strict signup and recovery rate limit', () => {
  it('answers 429 RATE_LIMITED with retry-after past signupMax, while other routes still work', async () => {
    const signup = () => t.client().http.raw<{ error?: { code: string } }>('POST', '/v1/signup', {
      body: { kind: 'workspace', name: 'Flood', email: uniqueEmail('flood'), password: 'long enough password' },
    });
    expect((await signup()).status).toBe(200);
    expect((await signup()).status).toBe(200);
    const limited = await signup();
    expect(limited.status).toBe(429);
    expect(limited.body.error?.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    expect((await t.workspace.auth.whoami()).tenant.id).toBe(t.creds.workspace.id);
    expect((await t.client().platform.health()).status).toBe('ok');
  });

  it('limits the recovery routes too', async () => {
    const forgot = () => t.client().http.raw('POST', '/v1/accounts/password/forgot', { body: { email: uniqueEmail('who') } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await forgot()).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
