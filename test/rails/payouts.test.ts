/**
 * Payouts: the settlement wallet is debited at once; the rail confirms (minutes for
 * USDC, business days for banks, on the gateway's clock) or returns the payout, and a
 * return re-credits with a new ledger entry; an idempotency key makes retries safe.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/matrix.js';
import { DAY, MINUTE, balanceOf, entries, expectConserved, payee, railGateway, refusedWith, runJobs } from './helpers.js';

const t = await railGateway();
afterAll(() => t.close());

describe('POST /v1/payouts', () => {
  it('debits at once, submitted, then confirmed when the chain confirms (minutes later)', async () => {
    const s = await payee(t);
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '2500', rail: 'usdc_base' });
    expect(p).toMatchObject({ status: 'submitted', amountMinor: '2500', rail: 'usdc_base', destination: s.usdcAddress, railCurrency: 'USDC', railAmountMinor: '25000000', usdcPrice: '1.0', treasuryProviderId: 'sandbox-chain' });
    expect(p.id).toMatch(/^pay_/);
    expect(p.expectedBy).toBe(new Date(t.clock.now() + 2 * MINUTE).toISOString());
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500']]);

    t.clock.advance(MINUTE);
    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
    t.clock.advance(MINUTE);
    await runJobs(t);
    const confirmed = await s.client.payouts.get(p.id);
    expect(confirmed).toMatchObject({ status: 'confirmed', settledAt: new Date(t.clock.now()).toISOString() });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-2500']]);
    const [tx] = (await s.client.rail.transactions({ kind: 'payout' })).transactions;
    expect(tx).toMatchObject({ id: p.id, state: 'confirmed', railAmountMinor: '25000000', usdAmountMinor: '2500', creditedMinor: '-2500' });
    expectConserved(t);
  });

  it('a bank transfer confirms on the next business day (a Friday payout on Monday)', async () => {
    const s = await payee(t);
    t.clock.set(Date.UTC(2026, 2, 6, 15, 0, 0)); // Friday
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'bank_transfer' });
    expect(p).toMatchObject({ status: 'submitted', railCurrency: 'USD', railAmountMinor: '1000', expectedBy: '2026-03-09T15:00:00.000Z', treasuryProviderId: 'sandbox-bank' });
    t.clock.advance(DAY); // Saturday
    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
    t.clock.set(Date.UTC(2026, 2, 9, 15, 0, 0));
    await runJobs(t);
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    expect(balanceOf(t, s.walletId)).toBe(9000n);
  });

  it('submitted -> returned re-credits the wallet with a new ledger entry', async () => {
    const s = await payee(t);
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '4000', rail: 'ach' });
    expect(balanceOf(t, s.walletId)).toBe(6000n);
    const { payout } = await s.client.sandbox.returnPayout(p.id, 'account_closed');
    expect(payout).toMatchObject({ id: p.id, status: 'returned', reason: 'account_closed' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000'], ['payout_return', '4000']]);
    // a returned payout cannot confirm later, and the return is credited once
    await refusedWith(s.client.sandbox.confirmPayout(p.id), 409, 'CONFLICT');
    t.clock.advance(5 * DAY);
    await runJobs(t);
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-4000'], ['payout_return', '4000']]);
    const [tx] = (await s.client.rail.transactions({ kind: 'payout' })).transactions;
    expect(tx).toMatchObject({ state: 'returned', creditedMinor: '0' });
    const { events } = await s.client.rail.events({ type: 'payout.returned' });
    expect(events[0]!.data).toMatchObject({ payoutId: p.id, amountMinor: '4000', reason: 'account_closed' });
    expectConserved(t);
  });

  it('the sandbox control confirms a payout at once', async () => {
    const s = await payee(t);
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'bank_transfer' });
    expect((await s.client.sandbox.confirmPayout(p.id)).payout.status).toBe('confirmed');
    await refusedWith(s.client.sandbox.returnPayout(p.id), 409, 'CONFLICT');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-10']]);
  });

  it('retried 20 times concurrently with one idempotency key debits once and answers the same payout', async () => {
    const s = await payee(t);
    const body = { walletId: s.walletId, amountMinor: '1500', rail: 'bank_transfer' };
    const results = await Promise.all(Array.from({ length: 20 }, () =>
      call(t, 'POST', '/v1/payouts', { apiKey: s.apiKey, body, headers: { 'idempotency-key': 'payout-2026-03-once' } })));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const ids = new Set(results.map((r) => (r.body.payout as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1500']]);
    expect((await s.client.payouts.list()).payouts).toHaveLength(1);

    // a later retry still answers it; the same key with another body is refused and debits nothing
    const again = await s.client.payouts.create(body as never, { idempotencyKey: 'payout-2026-03-once' });
    expect(again.id).toBe([...ids][0]);
    await refusedWith(s.client.payouts.create({ ...body, amountMinor: '1600' } as never, { idempotencyKey: 'payout-2026-03-once' }), 409, 'CONFLICT');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-1500']]);
    expectConserved(t);
  });

  it('pays only from the caller\'s settlement wallet, with a provider key', async () => {
    const s = await payee(t);
    const other = await payee(t);
    await refusedWith(other.client.payouts.create({ walletId: s.walletId, amountMinor: '1', rail: 'ach' }), 404, 'WALLET_NOT_FOUND');
    await refusedWith(t.workspace.payouts.create({ walletId: s.walletId, amountMinor: '1', rail: 'ach' }), 403, 'FORBIDDEN');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000']]);
  });
});
