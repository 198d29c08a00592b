/**
 * GET /v1/payouts with the operator key: every provider's payouts, newest first, each naming its
 * provider, narrowed by `status` and `submittedBefore` to find the stuck ones (submitted on a
 * rail that never settles them), paged with a cursor across providers. A provider key still
 * lists its own payouts only; a workspace key and bad filter values are refused naming what is
 * wrong. The list is read through the indexes, never by sorting every payout.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { PayoutRail } from '../../src/domain/rails/adapters.js';
import type { Payout, PayoutListOptions } from '../../packages/sdk/src/client/index.js';
import { ledgerRows } from '../payments/helpers.js';
import { HOUR, entries, expectConserved, payee, railGateway, refusedWith, runJobs } from './helpers.js';
import { sqliteOf, testBackend } from '../helpers/gateway.js';
import { SqliteSql } from '../../src/store/sql/sql.js';

const t = await railGateway();
const bank = () => t.gw.services.rails.registry.find('sandbox-bank')!.payouts!;

// the bank rail never settles anything: its status stays unknown, so the rail job leaves every
// payout submitted however far the clock moves
const realStatus: PayoutRail['status'] = bank().status;
bank().status = async () => undefined;
afterAll(async () => {
  bank().status = realStatus;
  await t.close();
});

const t0 = t.clock.now();
const ids = (ps: readonly Payout[]) => ps.map((p) => p.id);
const list = (opts: PayoutListOptions = {}) => t.operator.payouts.list(opts);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Three providers; a1 (A, t0) and b1 (B, t0+1h) stay submitted; a2 (A, t0+2h) the operator
 * resolved as paid; then 27 hours on, c1 (C) is submitted and b2 (B) resolved as failed. A has a
 * top-up pending in between, which is no payout. Newest first: b2, c1, a2, b1, a1.
 */
const A = await payee(t, '10000');
const B = await payee(t, '10000');
const C = await payee(t, '10000');
const pay = (s: typeof A, amountMinor: string, rail: 'ach' | 'bank_transfer' = 'ach') => s.client.payouts.create({ walletId: s.walletId, amountMinor, rail });
const a1 = await pay(A, '1000');
t.clock.advance(HOUR);
const b1 = await pay(B, '2000');
t.clock.advance(HOUR);
const a2 = await pay(A, '1500');
await t.operator.payouts.resolve(a2.id, { outcome: 'paid', reason: 'bank confirmed it' });
const topUp = await A.client.rail.topUp(A.walletId, { amountMinor: '500' });
t.clock.advance(25 * HOUR); // now t0 + 27h
const c1 = await pay(C, '500');
const b2 = await pay(B, '700', 'bank_transfer');
await t.operator.payouts.resolve(b2.id, { outcome: 'failed', reason: 'bank has no record of it' });
await runJobs(t);
const dayAgo = iso(t.clock.now() - 24 * HOUR); // t0 + 3h

describe('GET /v1/payouts with the operator key', () => {
  it('lists every provider\'s payouts, newest first, each naming its provider, and no top-up', async () => {
    const { payouts, nextCursor } = await list();
    expect(ids(payouts)).toEqual([b2.id, c1.id, a2.id, b1.id, a1.id]);
    expect(payouts.map((p) => [p.providerId, p.status, p.amountMinor])).toEqual([
      [B.id, 'failed', '700'], [C.id, 'submitted', '500'], [A.id, 'confirmed', '1500'], [B.id, 'submitted', '2000'], [A.id, 'submitted', '1000'],
    ]);
    expect(nextCursor).toBeUndefined();
    expect(ids(payouts)).not.toContain(topUp.transactionId);
    // each item is the payout exactly as its provider reads it
    expect(payouts.find((p) => p.id === a1.id)).toEqual(await A.client.payouts.get(a1.id));
  });

  it('finds the stuck payouts: submitted, and submitted before a day ago, across providers', async () => {
    expect(ids((await list({ status: 'submitted', submittedBefore: dayAgo })).payouts)).toEqual([b1.id, a1.id]);
    // the rail job ran with the clock a day on, and they are still there: the rail never settles them
    await runJobs(t);
    expect(ids((await list({ status: 'submitted', submittedBefore: dayAgo })).payouts)).toEqual([b1.id, a1.id]);
    expectConserved(t);
  });

  it('filters by status alone and by submittedBefore alone, which is strict and takes any offset', async () => {
    expect(ids((await list({ status: 'submitted' })).payouts)).toEqual([c1.id, b1.id, a1.id]);
    expect(ids((await list({ status: 'confirmed' })).payouts)).toEqual([a2.id]);
    expect(ids((await list({ status: 'failed' })).payouts)).toEqual([b2.id]);
    expect((await list({ status: 'returned' })).payouts).toEqual([]);
    expect(ids((await list({ submittedBefore: dayAgo })).payouts)).toEqual([a2.id, b1.id, a1.id]);
    // before b1's submission: only a1; at a1's own time: nothing (strictly before)
    expect(ids((await list({ submittedBefore: b1.createdAt })).payouts)).toEqual([a1.id]);
    expect((await list({ submittedBefore: a1.createdAt })).payouts).toEqual([]);
    // b1's moment written in UTC+2, without milliseconds
    const inUtcPlus2 = `${iso(t0 + HOUR + 2 * HOUR).slice(0, 19)}+02:00`;
    expect(ids((await list({ submittedBefore: inUtcPlus2 })).payouts)).toEqual([a1.id]);
  });

  it('pages with a cursor across providers, with and without filters, the cursor holding even when it no longer matches', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await list({ limit: 2, ...(after ? { after } : {}) });
      expect(page.payouts.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page.payouts));
      after = page.nextCursor;
      pages += 1;
    } while (after);
    expect(seen).toEqual([b2.id, c1.id, a2.id, b1.id, a1.id]);
    expect(pages).toBe(3);

    const first = await list({ status: 'submitted', limit: 1 });
    expect(ids(first.payouts)).toEqual([c1.id]);
    expect(first.nextCursor).toBe(c1.id);
    const second = await list({ status: 'submitted', limit: 1, after: first.nextCursor! });
    expect(ids(second.payouts)).toEqual([b1.id]);
    const last = await list({ status: 'submitted', limit: 2, after: second.nextCursor! });
    expect(last).toEqual({ payouts: [expect.objectContaining({ id: a1.id })] });
    // a cursor that is another provider's confirmed payout: the submitted ones before it
    expect(ids((await list({ status: 'submitted', after: a2.id })).payouts)).toEqual([b1.id, a1.id]);
  });

  it('refuses a cursor that is not a payout (a top-up, an unknown id) with 400 INVALID_CURSOR', async () => {
    for (const after of [topUp.transactionId, 'pay_unknown']) {
      const e = await refusedWith(list({ after }), 400, 'INVALID_CURSOR');
      expect(e.message).toBe(`after: ${after} is not a payout; pass a nextCursor you were given`);
      expect(e.details).toMatchObject({ field: 'after' });
    }
  });

  // SQLite's query plans; PostgreSQL has rail_tx_state_order (drizzle-pg/0001) for the same reads
  it.skipIf(testBackend() === 'postgres')('reads through the rail_tx_state index, without sorting every payout, for each filter and with a cursor', async () => {
    const plans = await planOf(() => list({ status: 'submitted', submittedBefore: dayAgo, after: c1.id }));
    expect(plans.join('\n')).toContain('USING INDEX rail_tx_state (kind=? AND state=? AND rowid<?)');
    for (const q of [{}, { status: 'submitted' as const }, { submittedBefore: dayAgo }, { limit: 2, after: a2.id }]) {
      const p = await planOf(() => list(q));
      expect(p.join('\n'), JSON.stringify(q)).toContain('USING INDEX rail_tx_state');
      expect(p.join('\n'), JSON.stringify(q)).not.toMatch(/TEMP B-TREE|SCAN rail_transactions/);
    }
  });
});

describe('GET /v1/payouts with a provider key', () => {
  it('still lists only its own payouts, newest first, and refuses another provider\'s payout as a cursor', async () => {
    expect(ids((await A.client.payouts.list()).payouts)).toEqual([a2.id, a1.id]);
    expect(ids((await B.client.payouts.list()).payouts)).toEqual([b2.id, b1.id]);
    const page = await A.client.payouts.list({ limit: 1 });
    expect(page).toEqual({ payouts: [expect.objectContaining({ id: a2.id })], nextCursor: a2.id });
    expect(ids((await A.client.payouts.list({ after: a2.id })).payouts)).toEqual([a1.id]);
    const e = await refusedWith(A.client.payouts.list({ after: b1.id }), 400, 'INVALID_CURSOR');
    expect(e.message).toBe(`after: ${b1.id} is not a payout of yours; pass a nextCursor you were given`);
  });

  it('applies the filters to its own payouts only', async () => {
    expect(ids((await A.client.payouts.list({ status: 'submitted' })).payouts)).toEqual([a1.id]);
    expect(ids((await B.client.payouts.list({ status: 'submitted', submittedBefore: dayAgo })).payouts)).toEqual([b1.id]);
    expect((await C.client.payouts.list({ submittedBefore: dayAgo })).payouts).toEqual([]);
  });
});

describe('GET /v1/payouts refusals', () => {
  it('refuses a workspace key with 403 FORBIDDEN naming the payouts:write scope', async () => {
    const e = await refusedWith(t.workspace.payouts.list(), 403, 'FORBIDDEN');
    expect(e.details).toMatchObject({ scope: 'payouts:write' });
  });

  it('refuses an unknown status with 400 naming status and listing the statuses', async () => {
    const e = await refusedWith(list({ status: 'stuck' as Payout['status'] }), 400, 'VALIDATION_FAILED');
    expect(e.message).toMatch(/^status\b/);
    for (const s of ['submitted', 'confirmed', 'returned', 'failed']) expect(e.message).toContain(s);
    expect(e.details).toMatchObject({ field: 'status', location: 'querystring' });
  });

  it('refuses a submittedBefore that is not an ISO time, or names no real moment, with 400 naming submittedBefore', async () => {
    for (const bad of ['yesterday', '2026-02-30T00:00:00Z', '2026-03-03', '1772532000000', '2026-03-03T24:00:00Z']) {
      const e = await refusedWith(list({ submittedBefore: bad }), 400, 'VALIDATION_FAILED');
      expect(e.message, bad).toBe('submittedBefore: must be an ISO 8601 time that exists, like 2026-11-20T00:00:00Z');
      expect(e.details, bad).toMatchObject({ field: 'submittedBefore', location: 'querystring' });
    }
    const empty = await refusedWith(list({ submittedBefore: '' }), 400, 'VALIDATION_FAILED');
    expect(empty.details).toMatchObject({ field: 'submittedBefore' });
  });

  it('refuses a misspelt filter, naming it', async () => {
    const f = await t.operator.http.fetcher();
    const res = await f(`${t.baseUrl}/v1/payouts?submitted_before=${encodeURIComponent(dayAgo)}`, { headers: { 'x-api-key': t.creds.operatorKey } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'submitted_before' } });
  });
});

describe('the ledger around the listed payouts', () => {
  it('holds each provider\'s debits and the one re-credit, and listing moved nothing', async () => {
    const before = ledgerRows(t).length;
    await list();
    await list({ status: 'submitted', submittedBefore: dayAgo });
    expect(ledgerRows(t).length).toBe(before);
    expect(entries(t, A.walletId)).toEqual([['fund', '10000'], ['payout', '-1000'], ['payout', '-1500']]);
    expect(entries(t, B.walletId)).toEqual([['fund', '10000'], ['payout', '-2000'], ['payout', '-700'], ['payout_return', '700']]);
    expect(entries(t, C.walletId)).toEqual([['fund', '10000'], ['payout', '-500']]);
    expectConserved(t);
  });
});

/** The query plans of every read of rail_transactions that `fn` makes through the gateway. */
async function planOf(fn: () => Promise<unknown>): Promise<string[]> {
  const raw = sqliteOf(t.gw);
  // every statement of the repositories runs through SqliteSql.rows (cached: prepared once, so
  // watching better-sqlite3's prepare would miss the statements an earlier call made)
  const rows = SqliteSql.prototype.rows;
  const seen: { sql: string; params: unknown[] }[] = [];
  SqliteSql.prototype.rows = function (this: SqliteSql, sql: string, params: readonly unknown[] = []) {
    if (/^select/i.test(sql) && sql.includes('rail_transactions')) seen.push({ sql, params: params.map((v) => this.value(v)) });
    return rows.call(this, sql, params);
  };
  try {
    await fn();
  } finally {
    SqliteSql.prototype.rows = rows;
  }
  expect(seen.length).toBeGreaterThan(0);
  return seen.map(({ sql, params }) => raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => (r as { detail: string }).detail).join('; '));
}
