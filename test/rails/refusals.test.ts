/**
 * Every refusal of POST /v1/payouts, each reached for real, each leaving the ledger
 * (and, before any debit, the whole database) unchanged: DESTINATION_COOLING_DOWN,
 * SANCTIONED_ADDRESS, TREASURY_UNAVAILABLE, COVERAGE_SHORTFALL, INSUFFICIENT_FUNDS,
 * NOT_SUPPORTED (and WALLET_FROZEN). Also where top-ups and deposits are NOT_SUPPORTED.
 * The payout refusals run on both rail drivers (./drivers.ts): a sandbox gateway moved by its
 * controls, and a production gateway with Stripe (the fake Stripe down, its balance short),
 * USDC over a local EVM (Hardhat's EDR) (the on-chain price out of band) and OFAC SDN screening over a list file
 * (the file gone).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { startTestGateway } from '../helpers/gateway.js';
import { HOUR, balanceOf, entries, expectConserved, refusedWith } from './helpers.js';
import { DRIVERS, payeeOf, useDriver } from './drivers.js';

describe.each(DRIVERS)('payout refusals on a %s gateway', (kind) => {
  const d = useDriver(kind);
  const payee = (_t: unknown, fund = '10000') => payeeOf(d, fund);
  const funded = (amount = '10000') => [d.fundEntry, amount];
  afterEach(async () => {
    await d.setUsdcPrice('1.0');
    await d.setPricingDown?.(false);
    await d.setScreeningDown(false);
    await d.setPayoutsDown(false);
    await d.setShortfall(0n);
    await d.t.operator.rail.reconcile();
  });

  /** Expects the payout refused with status and code, and nothing written anywhere. */
  async function refusedUnchanged(p: () => Promise<unknown>, status: number, code: string) {
    const before = snapshotDb(d.t.dataDir);
    const e = await refusedWith(p(), status, code);
    expect(changedTables(before, snapshotDb(d.t.dataDir))).toEqual([]);
    return e;
  }

  describe('POST /v1/payouts refuses', () => {
    it('DESTINATION_COOLING_DOWN (409) within 24 hours of a destination change', async () => {
      const { t } = d;
      const s = await payee(t);
      await s.client.payouts.setDestination(s.id, { destination: d.bankDestination('new_bank') });
      t.clock.advance(HOUR);
      await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'bank_transfer' }), 409, 'DESTINATION_COOLING_DOWN');
      expect(entries(t, s.walletId)).toEqual([funded()]);
    });

    it('SANCTIONED_ADDRESS (403) for a destination on the screening list, with nothing debited', async () => {
      const { t } = d;
      const s = await payee(t, '5000');
      await s.client.payouts.setDestination(s.id, { destination: d.sanctionedAddress });
      t.clock.advance(25 * HOUR);
      const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 403, 'SANCTIONED_ADDRESS');
      expect(e.details).toMatchObject({ destination: d.sanctionedAddress });
      // sandbox only: one the operator adds to the sandbox list is refused too (bank destinations are
      // screened as well); OFAC's list names no bank account (a new sdn.csv is test/rails/screening's)
      if (kind === 'sandbox') {
        await t.operator.sandbox.update({ sanction: [s.bankDestination] });
        await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 403, 'SANCTIONED_ADDRESS');
        await t.operator.sandbox.update({ unsanction: [s.bankDestination] });
      }
      expect(entries(t, s.walletId)).toEqual([funded('5000')]);
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
    });

    it('TREASURY_UNAVAILABLE (503) while screening or pricing is down, or USDC is out of band', async () => {
      const { t } = d;
      const s = await payee(t);
      await d.setScreeningDown(true);
      const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 503, 'TREASURY_UNAVAILABLE');
      expect(e.details).toMatchObject({ service: 'screening' });
      await d.setScreeningDown(false);
      if (d.setPricingDown) { // the sandbox feed only; a stale on-chain feed is test/rails/usdc.test.ts's
        await d.setPricingDown(true);
        expect((await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE')).details).toMatchObject({ service: 'pricing' });
        await d.setPricingDown(false);
      }
      await d.setUsdcPrice('0.98');
      await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE');
      // pricing concerns USDC only: a bank payout still goes out
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-100']]);
    });

    it('TREASURY_UNAVAILABLE (503) when the rail refuses the submission: the payout fails and is re-credited, its key freed', async () => {
      const { t } = d;
      const s = await payee(t);
      await d.refuseNextBankPayout(s.bankDestination);
      const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '700', rail: 'ach' }, { idempotencyKey: 'k-down' }), 503, 'TREASURY_UNAVAILABLE');
      const [failed] = (await s.client.payouts.list()).payouts;
      expect(failed).toMatchObject({ id: e.details.payoutId, status: 'failed' });
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-700'], ['payout_return', '700']]);
      await d.setPayoutsDown(false);
      const retried = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '700', rail: 'ach' }, { idempotencyKey: 'k-down' });
      expect(retried.id).not.toBe(failed!.id);
      expect(balanceOf(t, s.walletId)).toBe(9300n);
      expectConserved(t);
    });

    it('COVERAGE_SHORTFALL (503) while reconciliation finds the rails holding less than is owed, until it no longer does', async () => {
      const { t } = d;
      const s = await payee(t);
      await d.setShortfall(1n);
      const report = await t.operator.rail.reconcile();
      expect(report).toMatchObject({ status: 'shortfall', shortfallMinor: '1', paused: true, discrepancies: [] });
      await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 503, 'COVERAGE_SHORTFALL');
      const { events } = await t.operator.rail.events({ type: 'reconciliation.shortfall' });
      expect(events).toHaveLength(1);

      await d.setShortfall(0n);
      expect(await t.operator.rail.reconcile()).toMatchObject({ status: 'ok', paused: false });
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-100']]);
    });

    it('INSUFFICIENT_FUNDS (402) above the available balance', async () => {
      const { t } = d;
      const s = await payee(t, '500');
      const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '501', rail: 'ach' }), 402, 'INSUFFICIENT_FUNDS');
      expect(e.details).toMatchObject({ availableMinor: '500' });
      expect(entries(t, s.walletId)).toEqual([funded('500')]);
      // exactly the balance goes out
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '500', rail: 'ach' })).status).toBe('submitted');
      expect(balanceOf(t, s.walletId)).toBe(0n);
    });

    it('WALLET_FROZEN (403) from a frozen settlement wallet', async () => {
      const { t } = d;
      const s = await payee(t);
      await s.client.wallets.freeze(s.walletId);
      await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 403, 'WALLET_FROZEN');
    });

    it('VALIDATION_FAILED (400) without a registered destination, or naming another one', async () => {
      const { t } = d;
      const s = await t.newProvider();
      await d.fund(s.client, s.walletId, '100');
      const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach' }), 400, 'VALIDATION_FAILED');
      expect(e.message).toMatch(/^destination: .*payout-destination/);
      const mine = d.bankDestination('mine');
      await s.client.payouts.setDestination(s.id, { destination: mine });
      await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach', destination: 'ext_somebody_else' }), 400, 'VALIDATION_FAILED');
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach', destination: mine.toUpperCase() })).destination).toBe(mine);
    });
  });

  describe('GET /v1/rail/providers', () => {
    it('lists the adapters and what each does, with their health', async () => {
      const { t } = d;
      const res = await t.workspace.rail.providers();
      if (kind === 'sandbox') {
        expect(res.sandbox).toBe(true);
        expect(res.providers.map((p) => p.id)).toEqual(['sandbox-processor', 'sandbox-chain', 'sandbox-bank']);
        expect(res.providers[0]).toEqual({
          id: 'sandbox-processor', name: expect.any(String), adapterType: 'sandbox_processor', status: 'operational', roles: ['funding'],
          currencies: ['USD'], rails: ['ach'], topUps: true, depositAddresses: false, faucet: false,
        });
        expect(res.providers[1]).toMatchObject({ roles: ['funding', 'payout'], currencies: ['USDC'], rails: ['usdc_base'], depositAddresses: true, faucet: true });
        expect(res.providers[2]).toMatchObject({ roles: ['payout'], rails: ['bank_transfer', 'ach'] });
        await d.setPricingDown!(true);
        expect((await t.workspace.rail.providers()).providers[1]!.status).toBe('degraded');
        return;
      }
      expect(res.sandbox).toBe(false);
      expect(res.providers.map((p) => p.id)).toEqual(['stripe', 'stripe-payouts', d.ids.chain]);
      expect(res.providers[0]).toMatchObject({ adapterType: 'stripe', status: 'operational', roles: ['funding'], currencies: ['USD'], topUps: true, depositAddresses: false, faucet: false });
      expect(res.providers[1]).toMatchObject({ adapterType: 'stripe', status: 'operational', roles: ['payout'], rails: ['bank_transfer', 'ach'] });
      expect(res.providers[2]).toMatchObject({ adapterType: 'usdc-base', status: 'operational', roles: ['funding', 'payout'], currencies: ['USDC'], rails: ['usdc_base'], depositAddresses: true, faucet: false });
      // Stripe unreachable: its adapters say so
      await d.setPayoutsDown(true);
      const down = (await t.workspace.rail.providers()).providers;
      expect(down[0]!.status).not.toBe('operational');
      expect(down[2]!.status).toBe('operational');
    });
  });
});

describe('a production gateway without rail adapters', () => {
  it('answers NOT_SUPPORTED (501) to payouts, top-ups, deposit addresses and the faucet, and lists no providers', async () => {
    const p = await startTestGateway({ config: { mode: 'production' } });
    try {
      const s = await p.newProvider();
      await s.client.payouts.setDestination(s.id, { destination: 'ext_prod' });
      const before = snapshotDb(p.dataDir);
      await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '1', rail: 'ach' }), 501, 'NOT_SUPPORTED');
      const { walletId } = await p.newAgentWallet(p.workspace);
      const mid = snapshotDb(p.dataDir);
      await refusedWith(p.workspace.rail.topUp(walletId, { amountMinor: '100' }), 501, 'NOT_SUPPORTED');
      await refusedWith(p.workspace.rail.depositAddress(walletId), 501, 'NOT_SUPPORTED');
      await refusedWith(p.workspace.rail.faucet(walletId), 501, 'NOT_SUPPORTED');
      await refusedWith(p.workspace.sandbox.deposit('0x0000000000000000000000000000000000000001', '1'), 501, 'NOT_SUPPORTED');
      expect(changedTables(mid, snapshotDb(p.dataDir))).toEqual([]);
      expect(changedTables(before, mid).filter((x) => x !== 'wallets')).toEqual([]);
      expect(await p.workspace.rail.providers()).toEqual({ sandbox: false, providers: [] });
      expect(await p.workspace.rail.depositAddresses(walletId)).toEqual([]);
      // another tenant's wallet is 404 before 501
      const other = await p.newWorkspace();
      await refusedWith(other.client.rail.topUp(walletId, { amountMinor: '100' }), 404, 'WALLET_NOT_FOUND');
    } finally {
      await p.close();
    }
  });
});
