/**
 * POST /v1/payouts/:id/resolve: the operator closes out a payout its rail never resolved,
 * after checking with the rail out of band. `paid`: it becomes confirmed and the ledger keeps
 * the debit written at submission, nothing more. `failed`: it becomes failed and the provider
 * is re-credited once, as a refused submission is. Refused for a payout not submitted, for a
 * key that is not the operator's, and when the rail's own record contradicts the outcome;
 * against the rail job exactly one resolution wins. Every case ends with the ledger.
 */
import type { SandboxWorld } from '../../src/rails/sandbox/world.js';
import { afterAll, describe, expect, it } from 'vitest';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { RailUnavailable, type PayoutRail } from '../../src/domain/rails/adapters.js';
import type { Discrepancy } from '../../src/domain/rails/reconciliation.js';
import type { Payout } from '../../packages/sdk/src/client/index.js';
import { ledgerRows } from '../payments/helpers.js';
import { expectLedger } from '../wallets/ledger-checks.js';
import { entries, expectConserved, payee, railGateway, refusedWith, runJobs } from './helpers.js';

const t = await railGateway();
afterAll(() => t.close());

// the simulated world itself, under the port the domain sees
const world = () => t.gw.services.rails.registry.sandbox as SandboxWorld;
const bank = () => t.gw.services.rails.registry.find('sandbox-bank')!.payouts!;
const naming = (report: Record<string, unknown>, id: string) => (report.discrepancies as Discrepancy[]).filter((d) => d.transactionId === id);
const ledgerSumProblems = (report: Record<string, unknown>) => (report.discrepancies as Discrepancy[]).filter((d) => d.transactionId === undefined);
const resolve = (id: string, outcome: 'paid' | 'failed', reason = 'checked with the bank') => t.operator.payouts.resolve(id, { outcome, reason });

/** Replaces one method of the sandbox bank's payout rail for the duration of `fn`. */
async function withRail<K extends 'submit' | 'status' | 'lookup', T>(key: K, make: (orig: PayoutRail[K]) => PayoutRail[K], fn: () => Promise<T>): Promise<T> {
  const rail = bank();
  const orig = rail[key];
  rail[key] = make(orig.bind(rail) as PayoutRail[K]);
  try {
    return await fn();
  } finally {
    rail[key] = orig;
  }
}

/** A point a stubbed rail call stops at: `reached` once it is there, `release()` lets it go on. */
function checkpoint() {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => { arrive = r; });
  const open = new Promise<void>((r) => { release = r; });
  return { reached, release, async stop() { arrive(); await open; } };
}

/** A provider with 10000 and an ach payout of `amount` the rail took and has not settled (two business days; the clock stands still). */
async function stuckPayout(amount = '4000') {
  const s = await payee(t, '10000');
  const payout = await s.client.payouts.create({ walletId: s.walletId, amountMinor: amount, rail: 'ach' });
  expect(payout).toMatchObject({ status: 'submitted', externalRef: expect.any(String) });
  return { s, payout };
}

/** Counts of every ledger entry and of the platform revenue wallet's, to see that nothing else moved. */
const ledgerShape = () => ({ all: ledgerRows(t).length, platform: ledgerRows(t, { walletId: PLATFORM_REVENUE_WALLET_ID }).length });

/** The newest payout.resolved event of the provider and of the operator. */
async function resolvedEvents(provider: { client: typeof t.operator }, payoutId: string) {
  const mine = (await provider.client.rail.events({ type: 'payout.resolved' })).events.filter((e) => e.data.payoutId === payoutId);
  const ops = (await t.operator.rail.events({ type: 'payout.resolved' })).events.filter((e) => e.data.payoutId === payoutId);
  return { mine, ops };
}

describe('POST /v1/payouts/:id/resolve with outcome paid', () => {
  it('confirms the payout with the reason, writes no ledger entry, raises payout.resolved, and the job and reconciliation agree', async () => {
    const { s, payout } = await stuckPayout('4000');
    const before = ledgerShape();
    const resolved = await resolve(payout.id, 'paid', 'bank confirmed the ACH credit, trace 0421');
    expect(resolved).toMatchObject({
      id: payout.id, status: 'confirmed', amountMinor: '4000', externalRef: payout.externalRef,
      reason: 'resolved by the operator: bank confirmed the ACH credit, trace 0421', settledAt: expect.any(String),
    });
    expect(await s.client.payouts.get(payout.id)).toEqual(resolved);

    // the debit written at submission is the whole of it: no entry anywhere, the platform's included
    expect(ledgerShape()).toEqual(before);
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
    await expectLedger(s.client, s.walletId, ['10000', '-4000']);
    expectConserved(t);

    const { mine, ops } = await resolvedEvents(s, payout.id);
    const data = { payoutId: payout.id, outcome: 'paid', status: 'confirmed', amountMinor: '4000', rail: 'ach', reason: 'bank confirmed the ACH credit, trace 0421', railRecord: 'submitted' };
    expect(mine.map((e) => e.data)).toEqual([data]);
    expect(ops.map((e) => e.data)).toEqual([{ ...data, providerId: s.id, resolvedBy: expect.stringMatching(/^key_/) }]);

    // the job leaves a confirmed payout alone; reconciliation finds the ledger and the rail records in step
    await runJobs(t);
    expect((await s.client.payouts.get(payout.id)).status).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
    const report = await t.operator.rail.reconcile();
    expect(naming(report, payout.id)).toEqual([]);
    expect(ledgerSumProblems(report)).toEqual([]);
  });
});

describe('POST /v1/payouts/:id/resolve with outcome failed', () => {
  it('re-credits a payout the rail never took once, frees its idempotency key, and the job no longer submits it', async () => {
    const s = await payee(t, '10000');
    // the submission's answer was lost: submitted, no reference, and in fact not at the rail
    const payout = await withRail('submit', () => async () => { throw new Error('ETIMEDOUT'); },
      () => s.client.payouts.create({ walletId: s.walletId, amountMinor: '3000', rail: 'bank_transfer' }, { idempotencyKey: 'stuck-1' }));
    expect(payout).toMatchObject({ status: 'submitted', externalRef: null });
    const before = ledgerShape();

    const resolved = await resolve(payout.id, 'failed', 'bank has no record of it, ticket 4411');
    expect(resolved).toMatchObject({ status: 'failed', externalRef: null, reason: 'resolved by the operator: bank has no record of it, ticket 4411', settledAt: expect.any(String) });
    // exactly one new entry, the provider's re-credit; the platform's wallet untouched
    expect(ledgerShape()).toEqual({ all: before.all + 1, platform: before.platform });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    await expectLedger(s.client, s.walletId, ['10000', '-3000', '3000']);
    expectConserved(t);
    const { mine, ops } = await resolvedEvents(s, payout.id);
    expect(mine.map((e) => e.data)).toEqual([expect.objectContaining({ outcome: 'failed', status: 'failed', amountMinor: '3000', railRecord: 'none' })]);
    expect(ops).toHaveLength(1);

    // the job does not hand a failed payout to the rail
    await runJobs(t);
    expect(await world().payoutById(payout.id)).toBeUndefined();
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    const report = await t.operator.rail.reconcile();
    expect(naming(report, payout.id)).toEqual([]);
    expect(ledgerSumProblems(report)).toEqual([]);

    // as for a refused submission, the key is free: the same key now makes a new payout
    const again = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '3000', rail: 'bank_transfer' }, { idempotencyKey: 'stuck-1' });
    expect(again.id).not.toBe(payout.id);
    expectConserved(t);
  });

  it('takes the operator\'s word when the rail still shows the payout submitted; reconciliation names it, and counts the money as out, until the rail agrees', async () => {
    const { s, payout } = await stuckPayout('2500');
    const resolved = await resolve(payout.id, 'failed', 'bank says the transfer was rejected upstream');
    expect(resolved.status).toBe('failed');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500'], ['payout_return', '2500']]);
    expect((await resolvedEvents(s, payout.id)).mine[0]!.data.railRecord).toBe('submitted');
    expectConserved(t);
    // the rail's record still says it is on its way, and its treasury is short of it: payouts pause
    const report = await t.operator.rail.reconcile();
    expect(naming(report, payout.id).map((d) => d.problem)).toEqual([expect.stringContaining('the rail holds it as submitted')]);
    expect(ledgerSumProblems(report)).toEqual([]);
    expect(report).toMatchObject({ status: 'shortfall', shortfallMinor: '2500', paused: true });
    // the rail corrects its record (the money is back in the treasury): all clear again
    await world().settlePayout(payout.externalRef!, 'returned', 'rejected upstream');
    const after = await t.operator.rail.reconcile();
    expect(naming(after, payout.id)).toEqual([]);
    expect(after).toMatchObject({ status: 'ok', paused: false });
  });

  it('goes ahead with the reason when the rail cannot be asked', async () => {
    const { s, payout } = await stuckPayout('1500');
    const resolved = await withRail('lookup', () => async () => { throw new RailUnavailable('payouts', 'bank API down'); },
      () => resolve(payout.id, 'failed', 'bank phoned: never sent'));
    expect(resolved.status).toBe('failed');
    expect((await resolvedEvents(s, payout.id)).mine[0]!.data).toMatchObject({ railRecord: 'unavailable', reason: 'bank phoned: never sent' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1500'], ['payout_return', '1500']]);
    expectConserved(t);
    await world().settlePayout(payout.externalRef!, 'returned', 'never sent'); // the rail's record, corrected
  });
});

describe('POST /v1/payouts/:id/resolve refusals (nothing changes)', () => {
  it('refuses a payout that is not submitted with 409 CONFLICT naming its status', async () => {
    const { s, payout } = await stuckPayout('1000');
    await resolve(payout.id, 'paid');
    for (const outcome of ['paid', 'failed'] as const) {
      const e = await refusedWith(resolve(payout.id, outcome), 409, 'CONFLICT');
      expect(e.details).toEqual({ payoutId: payout.id, status: 'confirmed' });
      expect(e.message).toBe(`payout ${payout.id} is already confirmed; only a submitted payout is resolved, once`);
    }
    const returned = await stuckPayout('1000');
    await returned.s.client.sandbox.returnPayout(returned.payout.id);
    expect((await refusedWith(resolve(returned.payout.id, 'failed'), 409, 'CONFLICT')).details).toMatchObject({ status: 'returned' });
    // the returned one was re-credited by its return, once
    expect(entries(t, returned.s.walletId)).toEqual([['fund', '10000'], ['payout', '-1000'], ['payout_return', '1000']]);
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1000']]);
    expectConserved(t);
  });

  it('refuses a provider or workspace key with 403 FORBIDDEN naming the operator scope', async () => {
    const { s, payout } = await stuckPayout('1000');
    for (const client of [s.client, t.workspace]) {
      const e = await refusedWith(client.payouts.resolve(payout.id, { outcome: 'failed', reason: 'I say so' }), 403, 'FORBIDDEN');
      expect(e.details).toMatchObject({ scope: 'operator' });
    }
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'submitted', reason: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1000']]);
  });

  it('refuses failed with 409 RAIL_DISAGREES when the rail says it paid the payout, and paid when the rail returned it', async () => {
    const paid = await stuckPayout('2000');
    // the rail settled it; nobody has followed it here yet
    await world().settlePayout(paid.payout.externalRef!, 'confirmed');
    const e = await refusedWith(resolve(paid.payout.id, 'failed', 'bank said no'), 409, 'RAIL_DISAGREES');
    expect(e.details).toEqual({ payoutId: paid.payout.id, outcome: 'failed', railState: 'confirmed', externalRef: paid.payout.externalRef });
    expect(e.message).toContain('marking it failed would re-credit money the rail sent');
    expect(await paid.s.client.payouts.get(paid.payout.id)).toMatchObject({ status: 'submitted', reason: null });
    expect(entries(t, paid.s.walletId)).toEqual([['fund', '10000'], ['payout', '-2000']]);
    // paid agrees with the rail
    expect((await resolve(paid.payout.id, 'paid', 'bank confirmed')).status).toBe('confirmed');

    const back = await stuckPayout('2000');
    await world().settlePayout(back.payout.externalRef!, 'returned', 'account_closed');
    const r = await refusedWith(resolve(back.payout.id, 'paid'), 409, 'RAIL_DISAGREES');
    expect(r.details).toMatchObject({ outcome: 'paid', railState: 'returned' });
    expect(entries(t, back.s.walletId)).toEqual([['fund', '10000'], ['payout', '-2000']]);
    expectConserved(t);
  });

  it('refuses a payout whose first submission is running right now with 409 CONFLICT, retry later', async () => {
    const s = await payee(t, '10000');
    const first = checkpoint();
    const created = withRail('submit', (orig) => async (p) => { await first.stop(); return orig(p); }, async () => {
      const post = s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'ach' });
      await first.reached;
      const [row] = (await s.client.payouts.list()).payouts;
      const e = await refusedWith(resolve(row!.id, 'failed'), 409, 'CONFLICT');
      expect(e.message).toContain('is being submitted to its rail right now; retry in a moment');
      first.release();
      return post;
    });
    const payout = await created;
    expect(payout).toMatchObject({ status: 'submitted', externalRef: expect.any(String) });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1000']]);
  });

  it('answers 400 for a missing or blank reason or an unknown outcome, and 404 for what is not a payout', async () => {
    const { s, payout } = await stuckPayout('1000');
    const f = await t.operator.http.fetcher();
    const post = async (id: string, body: unknown) => {
      const res = await f(`${t.baseUrl}/v1/payouts/${id}/resolve`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.creds.operatorKey }, body: JSON.stringify(body) });
      return { status: res.status, error: ((await res.json()) as { error: { code: string; message: string } }).error };
    };
    expect(await post(payout.id, { outcome: 'paid' })).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('reason') } });
    expect(await post(payout.id, { outcome: 'paid', reason: '   ' })).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^reason: is required/) } });
    expect(await post(payout.id, { outcome: 'maybe', reason: 'x' })).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('outcome') } });
    expect(await post('pay_nope', { outcome: 'paid', reason: 'x' })).toMatchObject({ status: 404, error: { code: 'NOT_FOUND' } });
    const { walletId } = await t.newAgentWallet(t.workspace, 'resolve-topup');
    const topUp = await t.workspace.rail.topUp(walletId, { amountMinor: '500' });
    expect(await post(topUp.transactionId, { outcome: 'paid', reason: 'x' })).toMatchObject({ status: 404, error: { code: 'NOT_FOUND' } });
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'submitted' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1000']]);
  });
});

describe('POST /v1/payouts/:id/resolve racing the rail job: exactly one resolution wins', () => {
  it('operator first: the job that learned of a return meanwhile re-credits nothing more', async () => {
    const { s, payout } = await stuckPayout('3000');
    await world().settlePayout(payout.externalRef!, 'returned', 'account_closed');
    const follow = checkpoint();
    await withRail('status', (orig) => async (ref) => {
      const rec = await orig(ref);
      if (ref === payout.externalRef) await follow.stop();
      return rec;
    }, async () => {
      const job = runJobs(t);
      await follow.reached; // the job has asked the rail and is about to apply its answer
      expect((await resolve(payout.id, 'failed', 'bank: rejected')).status).toBe('failed');
      follow.release();
      await job;
    });
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'failed', reason: 'resolved by the operator: bank: rejected' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    expect((await s.client.rail.events({ type: 'payout.returned' })).events.filter((e) => e.data.payoutId === payout.id)).toEqual([]);
    expectConserved(t);
  });

  it('job first: the operator who asked the rail meanwhile is refused with 409 CONFLICT, and the job\'s return stands alone', async () => {
    const { s, payout } = await stuckPayout('3000');
    const asking = checkpoint();
    const attempt = withRail('lookup', (orig) => async (id) => { if (id !== payout.id) return orig(id); await asking.stop(); return undefined; }, async () => {
      const resolving = resolve(payout.id, 'failed', 'bank: never arrived').then(() => undefined, (e: unknown) => e);
      await asking.reached; // the operator's check with the rail is under way
      await world().settlePayout(payout.externalRef!, 'returned', 'account_closed');
      await runJobs(t); // the job follows it: returned and re-credited
      asking.release();
      return resolving;
    });
    expect(await attempt).toMatchObject({ status: 409, code: 'CONFLICT', details: { payoutId: payout.id, status: 'returned' } });
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'returned', reason: 'account_closed' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    expect((await resolvedEvents(s, payout.id)).mine).toEqual([]);
    expectConserved(t);
  });

  it('job first with a confirmation: a paid resolution is refused too, and the ledger keeps the one debit', async () => {
    const { s, payout } = await stuckPayout('2000');
    const asking = checkpoint();
    const attempt = withRail('lookup', (orig) => async (id) => { if (id !== payout.id) return orig(id); await asking.stop(); return undefined; }, async () => {
      const resolving = resolve(payout.id, 'paid', 'bank: arrived').then(() => undefined, (e: unknown) => e);
      await asking.reached;
      await world().settlePayout(payout.externalRef!, 'confirmed');
      await runJobs(t);
      asking.release();
      return resolving;
    });
    expect(await attempt).toMatchObject({ status: 409, code: 'CONFLICT', details: { status: 'confirmed' } });
    expect(await s.client.payouts.get(payout.id)).toMatchObject({ status: 'confirmed', reason: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2000']]);
    expectConserved(t);
  });

  it('two operators at once: one resolution, the other refused', async () => {
    // a payout the rail never took, so that either outcome leaves the rail's books true
    const s = await payee(t, '10000');
    const payout = await withRail('submit', () => async () => { throw new Error('ECONNRESET'); },
      () => s.client.payouts.create({ walletId: s.walletId, amountMinor: '2000', rail: 'ach' }));
    const results = await Promise.allSettled([resolve(payout.id, 'paid', 'a'), resolve(payout.id, 'failed', 'b')]);
    const won = results.filter((r): r is PromiseFulfilledResult<Payout> => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toMatchObject({ status: 409, code: 'CONFLICT' });
    const status = won[0]!.value.status;
    expect(entries(t, s.walletId)).toEqual(status === 'confirmed'
      ? [['fund', '10000'], ['payout', '-2000']]
      : [['fund', '10000'], ['payout', '-2000'], ['payout_return', '2000']]);
    expect((await resolvedEvents(s, payout.id)).mine).toHaveLength(1);
    expectConserved(t);
  });
});
