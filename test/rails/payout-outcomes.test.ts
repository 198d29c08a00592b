/**
 * Payouts whose submission has no clear answer from the rail. A lost response or a timeout
 * leaves the outcome unknown: the payout is answered `submitted` (no externalRef) and
 * submitted again by the rail job, never reversed by a later refusal, since the rail may
 * already hold it. Only the first, synchronous submission refused outright is reversed.
 * Every case ends with the ledger: the money goes out exactly once, or comes back once.
 * Sandbox only (not on the rail drivers of ./drivers.ts): each case stubs the sandbox bank's submit and
 * reads the sandbox world; the same outcomes through Stripe (lost response, refusal after the transfer)
 * are test/rails/stripe/stripe.test.ts's, and through the chain (lost connection, drop, revert) usdc.test.ts's.
 */
import type { SandboxWorld } from '../../src/rails/sandbox/world.js';
import { afterAll, describe, expect, it } from 'vitest';
import { RailUnavailable, type PayoutRail } from '../../src/domain/rails/adapters.js';
import type { Discrepancy } from '../../src/domain/rails/reconciliation.js';
import { DAY, entries, expectConserved, MINUTE, payee, railGateway, runJobs } from './helpers.js';
import { sqliteOf } from '../helpers/gateway.js';

const t = await railGateway();
afterAll(() => t.close());

// the simulated world itself, under the port the domain sees
const world = () => t.gw.services.rails.registry.sandbox as SandboxWorld;
/** The reconciliation report's discrepancies naming one rail transaction. */
const naming = (report: Record<string, unknown>, id: string) => (report.discrepancies as Discrepancy[]).filter((d) => d.transactionId === id);
const bank = () => t.gw.services.rails.registry.find('sandbox-bank')!.payouts!;

/** Replaces the sandbox bank's submit for the duration of `fn`. */
async function withSubmit<T>(submit: (orig: PayoutRail['submit']) => PayoutRail['submit'], fn: () => Promise<T>): Promise<T> {
  const rail = bank();
  const orig = rail.submit;
  rail.submit = submit(orig);
  try {
    return await fn();
  } finally {
    rail.submit = orig;
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

async function rawPayout(apiKey: string, body: unknown) {
  const f = await t.client().http.fetcher();
  const res = await f(`${t.baseUrl}/v1/payouts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe('POST /v1/payouts when the rail took the payout but its answer was lost', () => {
  it('answers the payout submitted, and the job, with the rail down, learns the rail holds it: paid out exactly once', async () => {
    const s = await payee(t, '10000');
    const r = await withSubmit(
      (orig) => async (p) => { await orig(p); throw new Error('socket hang up'); },
      () => rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '4000', rail: 'ach' }),
    );
    expect(r.status).toBe(200);
    expect(r.body.payout).toMatchObject({ status: 'submitted', externalRef: null, amountMinor: '4000' });
    const id = r.body.payout.id as string;
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);

    // the job submits it again while the rail refuses new payouts: the rail answers the one it has
    await t.operator.sandbox.update({ payoutsDown: true });
    await runJobs(t);
    await t.operator.sandbox.update({ payoutsDown: false });
    const rail = await world().payoutById(id);
    const after = await s.client.payouts.get(id);
    expect(after).toMatchObject({ status: 'submitted', externalRef: rail!.ref });

    t.clock.advance(3 * DAY);
    await runJobs(t);
    expect((await s.client.payouts.get(id)).status).toBe('confirmed');
    expect((await world().payout(rail!.ref))!.state).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000']]);
    const rec = await t.operator.rail.reconcile();
    expect(naming(rec, id)).toEqual([]);
    expectConserved(t);
  });
});

describe('the rail job submitting a payout again', () => {
  it('keeps it submitted while the rail refuses (no re-credit), and submits it once the rail is back', async () => {
    const s = await payee(t, '10000');
    // the request never reached the rail, but the gateway cannot know that
    const r = await withSubmit(() => async () => { throw new Error('ETIMEDOUT'); }, () => rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '2500', rail: 'bank_transfer' }));
    expect(r.status).toBe(200);
    const id = r.body.payout.id as string;
    expect(await world().payoutById(id)).toBeUndefined();

    await t.operator.sandbox.update({ payoutsDown: true });
    await runJobs(t);
    await runJobs(t);
    expect(await s.client.payouts.get(id)).toMatchObject({ status: 'submitted', externalRef: null, reason: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500']]);
    // the sandbox control cannot settle it either, and changes nothing
    await expect(s.client.sandbox.confirmPayout(id)).rejects.toMatchObject({ status: 503, code: 'TREASURY_UNAVAILABLE' });
    expect(await s.client.payouts.get(id)).toMatchObject({ status: 'submitted', externalRef: null });

    await t.operator.sandbox.update({ payoutsDown: false });
    await runJobs(t);
    const rail = await world().payoutById(id);
    expect(await s.client.payouts.get(id)).toMatchObject({ status: 'submitted', externalRef: rail!.ref });
    t.clock.advance(3 * DAY);
    await runJobs(t);
    expect((await s.client.payouts.get(id)).status).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500']]);
    expectConserved(t);
  });

  it('leaves alone a payout whose first submission is still running, so a refusal of that one cannot re-credit what the job sent', async () => {
    const s = await payee(t, '10000');
    const first = checkpoint();
    let calls = 0;
    const pending = withSubmit(
      (orig) => async (p) => {
        calls += 1;
        if (calls > 1) return orig(p); // the job's resubmission, if it made one, reaches the rail
        await first.stop();
        throw new RailUnavailable('payouts', 'the bank refused it');
      },
      async () => {
        const post = rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '3000', rail: 'ach' });
        await first.reached;
        await runJobs(t);
        first.release();
        return post;
      },
    );
    const r = await pending;
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'TREASURY_UNAVAILABLE', details: { payoutId: expect.any(String) } });
    expect(calls).toBe(1);
    const id = r.body.error.details.payoutId as string;
    expect(await world().payoutById(id)).toBeUndefined();
    expect(await s.client.payouts.get(id)).toMatchObject({ status: 'failed', externalRef: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    expectConserved(t);
  });

  it('does not submit a payout from a stale list: one refused and re-credited while the job was busy with another stays off the rail', async () => {
    const a = await payee(t, '10000');
    const pa = await a.client.payouts.create({ walletId: a.walletId, amountMinor: '1000', rail: 'ach' }); // on its way, has a reference
    const s = await payee(t, '10000');
    const rail = bank();
    const origSubmit = rail.submit;
    const origStatus = rail.status;
    try {
      // the new payout's first submission waits, then the rail refuses it outright
      const first = checkpoint();
      rail.submit = async () => { await first.stop(); throw new RailUnavailable('payouts', 'bank briefly down'); };
      const post = rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '3000', rail: 'ach' });
      await first.reached;
      // the job lists both submitted payouts, then waits on the rail about the first one
      const status = checkpoint();
      rail.status = async (ref) => { if (ref === pa.externalRef) await status.stop(); return origStatus(ref); };
      const job = runJobs(t);
      await status.reached;
      first.release(); // refused: failed and re-credited, 503
      const r = await post;
      expect(r.status).toBe(503);
      const id = r.body.error.details.payoutId as string;
      rail.submit = origSubmit; // the bank is back before the job reaches its stale copy
      status.release();
      await job;
      expect(await world().payoutById(id)).toBeUndefined();
      expect(await s.client.payouts.get(id)).toMatchObject({ status: 'failed' });
      expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000'], ['payout_return', '3000']]);
    } finally {
      rail.submit = origSubmit;
      rail.status = origStatus;
    }
    expectConserved(t);
  });

  it('no longer reverses a refused first submission once the job (of another instance) has handed the payout to the rail again', async () => {
    const s = await payee(t, '10000');
    const first = checkpoint();
    const r = await withSubmit(
      () => async () => {
        await first.stop();
        throw new RailUnavailable('payouts', 'the bank refused it');
      },
      async () => {
        const post = rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '3000', rail: 'ach' });
        await first.reached;
        // what another instance's rail job records before it submits the payout again
        sqliteOf(t.gw).prepare("UPDATE rail_transactions SET resubmitted_at = 1 WHERE kind = 'payout' AND wallet_id = ?").run(s.walletId);
        first.release();
        return post;
      },
    );
    // the rail may hold it through that other submission: answered as it stands, not re-credited
    expect(r.status).toBe(200);
    expect(r.body.payout).toMatchObject({ status: 'submitted', externalRef: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-3000']]);
    // the job here submits it again, now the rail is up, and follows it as any other
    await runJobs(t);
    expect(await world().payoutById(r.body.payout.id)).toBeDefined();
    expect(await s.client.payouts.get(r.body.payout.id)).toMatchObject({ status: 'submitted', externalRef: expect.any(String) });
    expectConserved(t);
  });
});

describe('the rail job following submitted payouts', () => {
  it('pages through all of them: payouts a rail never resolves do not keep newer ones from being confirmed', async () => {
    // 501 payouts a rail never resolves (references it does not know), older than a real one
    const insert = sqliteOf(t.gw).prepare(`INSERT INTO rail_transactions (id, kind, tenant_id, wallet_id, treasury_provider_id, rail, state,
      rail_amount_minor, rail_currency, usd_amount_minor, external_ref, counterparty, created_at, updated_at)
      VALUES (?, 'payout', 'prv_stuck', 'wal_stuck', 'sandbox-chain', 'usdc_base', 'submitted', 1, 'USDC', 1, ?, '0xstuck', 0, 0)`);
    for (let i = 0; i < 501; i++) insert.run(`pay_000000000${String(i).padStart(4, '0')}`, `unknown-ref-${i}`);
    try {
      const s = await payee(t);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '2500', rail: 'usdc_base' });
      t.clock.advance(2 * MINUTE);
      await runJobs(t);
      expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
      expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500']]);
      expectConserved(t);
    } finally {
      sqliteOf(t.gw).prepare("DELETE FROM rail_transactions WHERE tenant_id = 'prv_stuck'").run();
    }
  });
});

describe('reconciliation of failed payouts', () => {
  it('names a payout failed and re-credited here that the rail nevertheless holds', async () => {
    const s = await payee(t, '10000');
    // an adapter that took the payout yet reported a refusal
    const r = await withSubmit(
      (orig) => async (p) => { await orig(p); throw new RailUnavailable('payouts', 'refused (but sent)'); },
      () => rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '1500', rail: 'ach' }),
    );
    expect(r.status).toBe(503);
    const id = r.body.error.details.payoutId as string;
    expect(await s.client.payouts.get(id)).toMatchObject({ status: 'failed', externalRef: null });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1500'], ['payout_return', '1500']]);

    const rec = await t.operator.rail.reconcile();
    const ref = (await world().payoutById(id))!.ref;
    expect(naming(rec, id)).toEqual([{ transactionId: id, kind: 'payout', problem: expect.stringContaining(`the rail holds it as submitted (${ref})`) }]);
    // the money re-credited and the money sent: the rails hold less than is owed
    expect(rec).toMatchObject({ status: 'shortfall', shortfallMinor: '1500' });

    // the bank sends it back: nothing held twice any more, and payouts resume
    await world().settlePayout(ref, 'returned');
    const again = await t.operator.rail.reconcile();
    expect(again.status).toBe('ok');
    expect(naming(again, id)).toEqual([]);
  });

  it('does not name a failed payout the rail never took', async () => {
    const s = await payee(t, '10000');
    await t.operator.sandbox.update({ payoutsDown: true });
    const r = await rawPayout(s.apiKey, { walletId: s.walletId, amountMinor: '700', rail: 'ach' });
    await t.operator.sandbox.update({ payoutsDown: false });
    expect(r.status).toBe(503);
    const id = r.body.error.details.payoutId as string;
    const rec = await t.operator.rail.reconcile();
    expect(naming(rec, id)).toEqual([]);
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-700'], ['payout_return', '700']]);
  });
});

describe('the sandbox payout rail', () => {
  it('answers a payout it already took under the same payoutId even while it is down', async () => {
    const p = { payoutId: 'pay_sandbox_idem', rail: 'ach' as const, destination: 'ext_x', amountMinor: 100n, asset: 'USD' as const };
    const first = await bank().submit(p);
    await t.operator.sandbox.update({ payoutsDown: true });
    try {
      expect(await bank().submit(p)).toEqual(first);
      await expect(bank().submit({ ...p, payoutId: 'pay_sandbox_other' })).rejects.toBeInstanceOf(RailUnavailable);
    } finally {
      await t.operator.sandbox.update({ payoutsDown: false });
    }
    expect(await bank().lookup('pay_sandbox_idem')).toMatchObject({ externalRef: first.externalRef, state: 'submitted', amountMinor: 100n });
    await world().settlePayout(first.externalRef, 'returned'); // no payout of the platform's: the treasury gets it back
  });
});

describe('POST /v1/sandbox/payouts/:id/return after the rail settled it', () => {
  it('follows the payout first: 409 saying it is confirmed, as GET /v1/payouts/:id then says, nothing re-credited', async () => {
    const s = await payee(t, '10000');
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1200', rail: 'ach' });
    t.clock.advance(3 * DAY); // the rail's settle time passes; the job has not run
    await expect(s.client.sandbox.returnPayout(p.id)).rejects.toMatchObject({ status: 409, code: 'CONFLICT', details: { state: 'confirmed' } });
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    // confirming it is idempotent
    expect((await s.client.sandbox.confirmPayout(p.id)).payout.status).toBe('confirmed');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1200']]);
    expectConserved(t);
  });
});
