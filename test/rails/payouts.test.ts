/**
 * Payouts: the settlement wallet is debited at once; the rail confirms (minutes for
 * USDC, business days for banks, on the gateway's clock) or returns the payout, and a
 * return re-credits with a new ledger entry; an idempotency key makes retries safe.
 * Each scenario runs on both rail drivers (./drivers.ts): a sandbox gateway (sandbox chain and
 * bank), and a production gateway with the USDC adapter over a local EVM (Hardhat's EDR) and Stripe Connect against
 * the local fake Stripe (payees funded by Stripe top-ups there: no fund shortcut in production).
 */
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/matrix.js';
import { DAY, MINUTE, balanceOf, entries, expectConserved, refusedWith } from './helpers.js';
import { DRIVERS, payeeOf, useDriver, worldOf } from './drivers.js';

describe.each(DRIVERS)('payouts on a %s gateway', (kind) => {
  const d = useDriver(kind);
  const runJobs = () => d.t.gw.services.rails.jobs.runOnce();
  const funded = (amount = '10000') => [d.fundEntry, amount];

  describe('POST /v1/payouts', () => {
    it('debits at once, submitted, then confirmed when the chain confirms', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '2500', rail: 'usdc_base' });
      expect(p).toMatchObject({ status: 'submitted', amountMinor: '2500', rail: 'usdc_base', destination: s.usdcAddress, railCurrency: 'USDC', railAmountMinor: '25000000', usdcPrice: '1.0', treasuryProviderId: d.ids.usdcPayouts });
      expect(p.id).toMatch(/^pay_/);
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-2500']]);
      if (kind === 'sandbox') {
        // the sandbox chain confirms on the gateway's clock, minutes later
        expect(p.expectedBy).toBe(new Date(t.clock.now() + 2 * MINUTE).toISOString());
        t.clock.advance(MINUTE);
      } else {
        // the transfer is on chain with one confirmation
        expect(await worldOf(d).chain.usdcOf(s.usdcAddress)).toBeGreaterThanOrEqual(25_000_000n);
      }
      await runJobs();
      expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
      await d.confirmPayout(p);
      const confirmed = await s.client.payouts.get(p.id);
      expect(confirmed).toMatchObject({ status: 'confirmed', settledAt: new Date(t.clock.now()).toISOString() });
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-2500']]);
      const [tx] = (await s.client.rail.transactions({ kind: 'payout' })).transactions;
      expect(tx).toMatchObject({ id: p.id, state: 'confirmed', railAmountMinor: '25000000', usdAmountMinor: '2500', creditedMinor: '-2500' });
      expectConserved(t);
    });

    it('a bank payout is submitted, then confirmed when the bank pays it', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'ach' });
      expect(p).toMatchObject({ status: 'submitted', railCurrency: 'USD', railAmountMinor: '1000', destination: s.bankDestination, treasuryProviderId: d.ids.bank });
      await runJobs();
      expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
      await d.confirmPayout(p);
      expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-1000']]);
      expectConserved(t);
    });

    it('submitted -> returned re-credits the wallet with a new ledger entry', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '4000', rail: 'ach' });
      expect(balanceOf(t, s.walletId)).toBe(6000n);
      await d.returnPayout(p, 'account_closed', s.client);
      expect(await s.client.payouts.get(p.id)).toMatchObject({ id: p.id, status: 'returned', reason: d.returnReason('account_closed') });
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-4000'], ['payout_return', '4000']]);
      // a returned payout cannot confirm later, and the return is credited once
      if (kind === 'sandbox') await refusedWith(s.client.sandbox.confirmPayout(p.id), 409, 'CONFLICT');
      t.clock.advance(5 * DAY);
      await runJobs();
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-4000'], ['payout_return', '4000']]);
      const [tx] = (await s.client.rail.transactions({ kind: 'payout' })).transactions;
      expect(tx).toMatchObject({ state: 'returned', creditedMinor: '0' });
      const { events } = await s.client.rail.events({ type: 'payout.returned' });
      expect(events[0]!.data).toMatchObject({ payoutId: p.id, amountMinor: '4000', reason: d.returnReason('account_closed') });
      expectConserved(t);
    });

    it('retried 20 times concurrently with one idempotency key debits once and answers the same payout', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const body = { walletId: s.walletId, amountMinor: '1500', rail: 'bank_transfer' };
      const results = await Promise.all(Array.from({ length: 20 }, () =>
        call(t, 'POST', '/v1/payouts', { apiKey: s.apiKey, body, headers: { 'idempotency-key': 'payout-2026-03-once' } })));
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      const ids = new Set(results.map((r) => (r.body.payout as { id: string }).id));
      expect(ids.size).toBe(1);
      expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-1500']]);
      expect((await s.client.payouts.list()).payouts).toHaveLength(1);
      if (kind === 'production') {
        // one transfer and one bank payout at Stripe
        const account = s.bankDestination.slice('ext_'.length);
        expect(worldOf(d).fake.payouts.get(account)!.size).toBe(1);
      }

      // a later retry still answers it; the same key with another body is refused and debits nothing
      const again = await s.client.payouts.create(body as never, { idempotencyKey: 'payout-2026-03-once' });
      expect(again.id).toBe([...ids][0]);
      await refusedWith(s.client.payouts.create({ ...body, amountMinor: '1600' } as never, { idempotencyKey: 'payout-2026-03-once' }), 409, 'CONFLICT');
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-1500']]);
      expectConserved(t);
    });

    it("pays only from the caller's settlement wallet, with a provider key", async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const other = await payeeOf(d);
      await refusedWith(other.client.payouts.create({ walletId: s.walletId, amountMinor: '1', rail: 'ach' }), 404, 'WALLET_NOT_FOUND');
      await refusedWith(t.workspace.payouts.create({ walletId: s.walletId, amountMinor: '1', rail: 'ach' }), 403, 'FORBIDDEN');
      expect(entries(t, s.walletId)).toEqual([funded()]);
    });
  });

  // sandbox only: these are the sandbox bank's simulated settle times and its controls
  describe.skipIf(kind !== 'sandbox')('the sandbox bank', () => {
    it('a bank transfer confirms on the next business day (a Friday payout on Monday)', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      // the next Friday 15:00 UTC on the gateway's clock (earlier tests moved it on)
      const day = new Date(t.clock.now());
      const friday = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + ((5 - day.getUTCDay() + 7) % 7 || 7), 15, 0, 0);
      t.clock.set(friday);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'bank_transfer' });
      expect(p).toMatchObject({ status: 'submitted', railCurrency: 'USD', railAmountMinor: '1000', expectedBy: new Date(friday + 3 * DAY).toISOString(), treasuryProviderId: 'sandbox-bank' });
      t.clock.advance(DAY); // Saturday
      await runJobs();
      expect((await s.client.payouts.get(p.id)).status).toBe('submitted');
      t.clock.set(friday + 3 * DAY); // Monday
      await runJobs();
      expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
      expect(balanceOf(t, s.walletId)).toBe(9000n);
      expectConserved(t);
    });

    it('the sandbox control confirms a payout at once', async () => {
      const { t } = d;
      const s = await payeeOf(d);
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'bank_transfer' });
      expect((await s.client.sandbox.confirmPayout(p.id)).payout.status).toBe('confirmed');
      await refusedWith(s.client.sandbox.returnPayout(p.id), 409, 'CONFLICT');
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-10']]);
    });
  });
});
