/**
 * Per-address limits of the account routes, beside the per-IP one: failed logins back off
 * (429 RATE_LIMITED with retry-after, doubling, cleared by a success), and password-reset mail is
 * throttled (one a minute, five a day, "forgot" answering {ok: true} all the same). An address
 * without an account is treated exactly as one with an account. The counts are in the store: two
 * gateways on one database count together. Time moves by a ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { DAY_MS, DEFAULT_ACCOUNT_LIMITS } from '../../src/domain/tenancy/auth-throttles.js';
import { startGateway, type RunningGateway } from '../../src/gateway/server.js';
import type { PgStore } from '../../src/store/pg/pg-store.js';
import { ManualClock, sqliteOf, startTestGateway, testBackend, type TestGateway } from '../helpers/gateway.js';
import { readOutbox, signUp, uniqueEmail } from './helpers.js';

const clock = new ManualClock();
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t?.close();
});

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** One login as sent on the wire: status, retry-after and body. */
async function login(client: AgentpayClient, email: string, password: string) {
  const res = await client.http.raw<ErrorBody & { apiKey?: { key: string } }>('POST', '/v1/accounts/login', { body: { email, password } });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: res.body };
}

const FAILURES = DEFAULT_ACCOUNT_LIMITS.loginFailuresBeforeBackoff;
const BACKOFF_S = DEFAULT_ACCOUNT_LIMITS.loginBackoffMs / 1000;

describe('failed-login backoff per address', () => {
  it(`holds an address back after ${FAILURES} failures, doubling, even for the right password; a success clears it`, async () => {
    const { email, password } = await signUp(t);
    for (let i = 0; i < FAILURES; i++) expect((await login(t.client(), email, 'not the password')).status).toBe(401);

    const held = await login(t.client(), email, password);
    expect(held.status).toBe(429);
    expect(held.retryAfter).toBe(String(BACKOFF_S));
    expect(held.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'login_backoff', retryAfterSeconds: BACKOFF_S } });
    expect(held.body.error.message).toContain(`retry after ${BACKOFF_S}s`);

    clock.advance(BACKOFF_S * 1000 - 1000);
    expect((await login(t.client(), email, password)).retryAfter).toBe('1');
    clock.advance(1000);
    expect((await login(t.client(), email, 'still wrong')).status).toBe(401);
    const doubled = await login(t.client(), email, password);
    expect([doubled.status, doubled.retryAfter]).toEqual([429, String(2 * BACKOFF_S)]);

    clock.advance(2 * BACKOFF_S * 1000);
    const ok = await login(t.client(), email, password);
    expect(ok.status).toBe(200);
    // cleared: a new streak starts from nothing
    for (let i = 0; i < FAILURES; i++) expect((await login(t.client(), email, 'wrong again')).status).toBe(401);
    expect((await login(t.client(), email, password)).status).toBe(429);
    clock.advance(BACKOFF_S * 1000);
  });

  it('treats an address without an account exactly as one with an account', async () => {
    const { email } = await signUp(t);
    const ghost = uniqueEmail('ghost');
    const run = async (address: string) => {
      const seen: unknown[] = [];
      for (let i = 0; i < FAILURES + 1; i++) {
        const r = await login(t.client(), address, 'not the password');
        seen.push({ status: r.status, retryAfter: r.retryAfter, error: r.body.error });
      }
      return seen;
    };
    const known = await run(email);
    expect(await run(ghost)).toEqual(known);
    expect(known.at(-1)).toMatchObject({ status: 429 });
    clock.advance(BACKOFF_S * 1000);
  });

  it('counts the normalised address, and leaves other addresses alone', async () => {
    const { email, password } = await signUp(t);
    const other = await signUp(t);
    for (let i = 0; i < FAILURES; i++) expect((await login(t.client(), i % 2 ? ` ${email.toUpperCase()}` : email, 'wrong')).status).toBe(401);
    expect((await login(t.client(), email, password)).status).toBe(429);
    expect((await login(t.client(), other.email, other.password)).status).toBe(200);
    clock.advance(BACKOFF_S * 1000);
  });

  it('holds back requests sent at once: no more than the limit get their password checked', async () => {
    const { email } = await signUp(t);
    const statuses = await Promise.all(Array.from({ length: 15 }, () => login(t.client(), email, 'wrong').then((r) => r.status)));
    expect(statuses.filter((s) => s === 401)).toHaveLength(FAILURES);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15 - FAILURES);
    clock.advance(BACKOFF_S * 1000);
  });

  it('keeps no address in clear, and prunes rows that no longer count', async () => {
    const ghost = uniqueEmail('ghost');
    expect((await login(t.client(), ghost, 'wrong')).status).toBe(401);
    const db = sqliteOf(t.gw);
    const rows = db.prepare('SELECT key FROM auth_throttles').all() as { key: string }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(ghost);
    // every streak so far is forgotten a window later; the next attempts prune what expired
    clock.advance(DEFAULT_ACCOUNT_LIMITS.loginFailureWindowMs + DEFAULT_ACCOUNT_LIMITS.loginBackoffMaxMs + DAY_MS);
    for (let i = 0; i < Math.ceil(rows.length / 10) + 1; i++) await login(t.client(), uniqueEmail('pruner'), 'wrong');
    const left = Number((db.prepare('SELECT count(*) AS n FROM auth_throttles').get() as { n: number | string }).n);
    expect(left).toBeLessThanOrEqual(Math.ceil(rows.length / 10) + 1);
  });

  it('forgets a streak of failures after loginFailureWindowMs', async () => {
    const { email, password } = await signUp(t);
    for (let i = 0; i < FAILURES - 1; i++) expect((await login(t.client(), email, 'wrong')).status).toBe(401);
    clock.advance(DEFAULT_ACCOUNT_LIMITS.loginFailureWindowMs);
    for (let i = 0; i < FAILURES - 1; i++) expect((await login(t.client(), email, 'wrong')).status).toBe(401);
    expect((await login(t.client(), email, password)).status).toBe(200);
  });
});

describe('password-reset mail throttle per address', () => {
  const mailsTo = (to: string) => readOutbox(t.dataDir).filter((m) => m.to === to && m.kind.startsWith('password_reset'));

  for (const who of ['an account', 'an address without an account'] as const) {
    it(`sends ${who} one mail a minute and five a day, answering {ok: true} every time`, async () => {
      const email = who === 'an account' ? (await signUp(t)).email : uniqueEmail('ghost');
      const forgot = () => t.client().accounts.forgotPassword({ email });
      expect(await forgot()).toEqual({ ok: true });
      expect(await forgot()).toEqual({ ok: true });
      expect(mailsTo(email)).toHaveLength(1);
      for (let i = 1; i < DEFAULT_ACCOUNT_LIMITS.resetMailsPerDay; i++) {
        clock.advance(DEFAULT_ACCOUNT_LIMITS.resetMailIntervalMs);
        expect(await forgot()).toEqual({ ok: true });
      }
      expect(mailsTo(email)).toHaveLength(DEFAULT_ACCOUNT_LIMITS.resetMailsPerDay);
      clock.advance(DEFAULT_ACCOUNT_LIMITS.resetMailIntervalMs);
      expect(await forgot()).toEqual({ ok: true });
      expect(mailsTo(email)).toHaveLength(DEFAULT_ACCOUNT_LIMITS.resetMailsPerDay);
      clock.advance(DAY_MS);
      expect(await forgot()).toEqual({ ok: true });
      expect(mailsTo(email)).toHaveLength(DEFAULT_ACCOUNT_LIMITS.resetMailsPerDay + 1);
      expect(mailsTo(email).map((m) => m.kind)).toEqual(Array(DEFAULT_ACCOUNT_LIMITS.resetMailsPerDay + 1).fill(who === 'an account' ? 'password_reset' : 'password_reset_no_account'));
    });
  }
});

describe('two gateways on one database', () => {
  let a: TestGateway;
  let b: RunningGateway;
  const fleetClock = new ManualClock();
  const config = { validateResponses: true, rateLimit: { max: 100_000, windowMs: 1000, signupMax: 10_000, signupWindowMs: 60_000 } };
  beforeAll(async () => {
    a = await startTestGateway({ clock: fleetClock });
    const database = testBackend() === 'postgres' ? { database: (a.gw.store as PgStore).url } : {};
    b = await startGateway({ dataDir: a.dataDir, port: 0, httpPort: null, clock: fleetClock, config, logger: false, ...database });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('count the failures of an address together: the next login is held back by either', async () => {
    const { email, password } = await signUp(a);
    const onB = new AgentpayClient({ gatewayUrl: b.baseUrl, ca: a.ca });
    for (let i = 0; i < FAILURES; i++) expect((await login(i % 2 ? onB : a.client(), email, 'wrong')).status).toBe(401);
    expect((await login(a.client(), email, password)).status).toBe(429);
    expect((await login(onB, email, password)).status).toBe(429);
    fleetClock.advance(BACKOFF_S * 1000);
    expect((await login(onB, email, password)).status).toBe(200);
  });

  it('throttle reset mail together', async () => {
    const ghost = uniqueEmail('ghost');
    const onB = new AgentpayClient({ gatewayUrl: b.baseUrl, ca: a.ca });
    await a.client().accounts.forgotPassword({ email: ghost });
    await onB.accounts.forgotPassword({ email: ghost });
    expect(readOutbox(a.dataDir).filter((m) => m.to === ghost)).toHaveLength(1);
  });
});
