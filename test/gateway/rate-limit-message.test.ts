/**
 * The 429 RATE_LIMITED message names the configured window and, separately, the time
 * left until it resets: "at most N per <window> seconds; retry after <left>s". Each
 * limited request comes a little after the window opened, so the two numbers differ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { uniqueEmail } from '../tenancy/helpers.js';

let t: TestGateway;
const clock = new ManualClock();
beforeAll(async () => {
  t = await startTestGateway({ clock, config: { rateLimit: { max: 2, windowMs: 3000, signupMax: 2, signupWindowMs: 60_000 } } });
});
afterAll(async () => {
  await t?.close();
});

type ErrorBody = { error?: { code: string; message: string; details: { retryAfterSeconds: number } } };

function retryAfter(message: string, limit: string): number {
  const m = new RegExp(`^too many requests: at most ${limit}; retry after (\\d+)s$`).exec(message);
  expect(m, message).not.toBeNull();
  return Number(m![1]);
}

describe('the 429 RATE_LIMITED message', () => {
  it('names the signup window (60 seconds) and the seconds left in it', async () => {
    const signup = () =>
      t.client().http.raw<ErrorBody>('POST', '/v1/signup', {
        body: { kind: 'workspace', name: 'Hasty', email: uniqueEmail('hasty'), password: 'long enough password' },
      });
    expect((await signup()).status).toBe(200);
    expect((await signup()).status).toBe(200);
    clock.advance(1500);
    const limited = await signup();
    expect(limited.status).toBe(429);
    const left = retryAfter(limited.body.error!.message, '2 per 60 seconds');
    expect(left).toBe(59); // 58.5 s left, rounded up
    expect(limited.body.error!.details.retryAfterSeconds).toBe(left);
    expect(Number(limited.headers.get('retry-after'))).toBe(left);
  });

  it('names the general window (3 seconds) and the seconds left in it', async () => {
    const ws = await t.newWorkspace('Eager');
    expect((await ws.client.http.raw('GET', '/v1/wallets')).status).toBe(200);
    expect((await ws.client.http.raw('GET', '/v1/wallets')).status).toBe(200);
    clock.advance(1200);
    const limited = await ws.client.http.raw<ErrorBody>('GET', '/v1/wallets');
    expect(limited.status).toBe(429);
    const left = retryAfter(limited.body.error!.message, '2 per 3 seconds');
    expect(left).toBe(2); // 1.8 s left, rounded up
  });
});
