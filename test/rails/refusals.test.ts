/**
 * Every refusal of POST /v1/payouts, each reached for real, each leaving the ledger
 * (and, before any debit, the whole database) unchanged: DESTINATION_COOLING_DOWN,
 * SANCTIONED_ADDRESS, TREASURY_UNAVAILABLE, COVERAGE_SHORTFALL, INSUFFICIENT_FUNDS,
 * NOT_SUPPORTED (and WALLET_FROZEN). Also where top-ups and deposits are NOT_SUPPORTED.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { startTestGateway } from '../helpers/gateway.js';
import { HOUR, balanceOf, entries, expectConserved, payee, railGateway, refusedWith } from './helpers.js';

const t = await railGateway();
afterAll(() => t.close());
afterEach(async () => {
  await t.operator.sandbox.update({ usdcPrice: '1.0', pricingDown: false, screeningDown: false, payoutsDown: false, treasuryShortfallMinor: '0' });
  await t.operator.rail.reconcile();
});

/** Expects the payout refused with status and code, and nothing written anywhere. */
async function refusedUnchanged(p: () => Promise<unknown>, status: number, code: string) {
  const before = snapshotDb(t.dataDir);
  const e = await refusedWith(p(), status, code);
  expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  return e;
}

describe('POST /v1/payouts refuses', () => {
  it('DESTINATION_COOLING_DOWN (409) within 24 hours of a destination change', async () => {
    const s = await payee(t);
    await s.client.payouts.setDestination(s.id, { destination: 'ext_new_bank' });
    t.clock.advance(HOUR);
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'bank_transfer' }), 409, 'DESTINATION_COOLING_DOWN');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000']]);
  });

  it('SANCTIONED_ADDRESS (403) for a destination on the screening list, with nothing debited', async () => {
    const s = await payee(t, '5000');
    await s.client.payouts.setDestination(s.id, { destination: '0x000000000000000000000000000000000000BAD1' });
    t.clock.advance(25 * HOUR);
    const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 403, 'SANCTIONED_ADDRESS');
    expect(e.details).toMatchObject({ destination: '0x000000000000000000000000000000000000BAD1' });
    // one the operator adds to the sandbox list is refused too (bank destinations are screened as well)
    await t.operator.sandbox.update({ sanction: ['ext_bank_0001'] });
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 403, 'SANCTIONED_ADDRESS');
    await t.operator.sandbox.update({ unsanction: ['ext_bank_0001'] });
    expect(entries(t, s.walletId)).toEqual([['fund', '5000']]);
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
  });

  it('TREASURY_UNAVAILABLE (503) while screening or pricing is down, or USDC is out of band', async () => {
    const s = await payee(t);
    await t.operator.sandbox.update({ screeningDown: true });
    const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 503, 'TREASURY_UNAVAILABLE');
    expect(e.details).toMatchObject({ service: 'screening' });
    await t.operator.sandbox.update({ screeningDown: false, pricingDown: true });
    expect((await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE')).details).toMatchObject({ service: 'pricing' });
    await t.operator.sandbox.update({ pricingDown: false, usdcPrice: '0.98' });
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE');
    // pricing concerns USDC only: a bank payout still goes out
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-100']]);
  });

  it('TREASURY_UNAVAILABLE (503) when the rail refuses the submission: the payout fails and is re-credited, its key freed', async () => {
    const s = await payee(t);
    await t.operator.sandbox.update({ payoutsDown: true });
    const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '700', rail: 'bank_transfer' }, { idempotencyKey: 'k-down' }), 503, 'TREASURY_UNAVAILABLE');
    const [failed] = (await s.client.payouts.list()).payouts;
    expect(failed).toMatchObject({ id: e.details.payoutId, status: 'failed' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-700'], ['payout_return', '700']]);
    await t.operator.sandbox.update({ payoutsDown: false });
    const retried = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '700', rail: 'bank_transfer' }, { idempotencyKey: 'k-down' });
    expect(retried.id).not.toBe(failed!.id);
    expect(balanceOf(t, s.walletId)).toBe(9300n);
    expectConserved(t);
  });

  it('COVERAGE_SHORTFALL (503) while reconciliation finds the rails holding less than is owed, until it no longer does', async () => {
    const s = await payee(t);
    await t.operator.sandbox.update({ treasuryShortfallMinor: '1' });
    const report = await t.operator.rail.reconcile();
    expect(report).toMatchObject({ status: 'shortfall', shortfallMinor: '1', paused: true, discrepancies: [] });
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 503, 'COVERAGE_SHORTFALL');
    const { events } = await t.operator.rail.events({ type: 'reconciliation.shortfall' });
    expect(events).toHaveLength(1);

    await t.operator.sandbox.update({ treasuryShortfallMinor: '0' });
    expect(await t.operator.rail.reconcile()).toMatchObject({ status: 'ok', paused: false });
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).status).toBe('submitted');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-100']]);
  });

  it('INSUFFICIENT_FUNDS (402) above the available balance', async () => {
    const s = await payee(t, '500');
    const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '501', rail: 'ach' }), 402, 'INSUFFICIENT_FUNDS');
    expect(e.details).toMatchObject({ availableMinor: '500' });
    expect(entries(t, s.walletId)).toEqual([['fund', '500']]);
    // exactly the balance goes out
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '500', rail: 'ach' })).status).toBe('submitted');
    expect(balanceOf(t, s.walletId)).toBe(0n);
  });

  it('WALLET_FROZEN (403) from a frozen settlement wallet', async () => {
    const s = await payee(t);
    await s.client.wallets.freeze(s.walletId);
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 403, 'WALLET_FROZEN');
  });

  it('VALIDATION_FAILED (400) without a registered destination, or naming another one', async () => {
    const s = await t.newProvider();
    await s.client.wallets.fund(s.walletId, '100');
    const e = await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach' }), 400, 'VALIDATION_FAILED');
    expect(e.message).toMatch(/^destination: .*payout-destination/);
    await s.client.payouts.setDestination(s.id, { destination: 'ext_mine' });
    await refusedUnchanged(() => s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach', destination: 'ext_somebody_else' }), 400, 'VALIDATION_FAILED');
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '10', rail: 'ach', destination: 'EXT_MINE' })).destination).toBe('ext_mine');
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

describe('GET /v1/rail/providers', () => {
  it('lists the sandbox adapters and what each does', async () => {
    const res = await t.workspace.rail.providers();
    expect(res.sandbox).toBe(true);
    expect(res.providers.map((p) => p.id)).toEqual(['sandbox-processor', 'sandbox-chain', 'sandbox-bank']);
    expect(res.providers[0]).toEqual({
      id: 'sandbox-processor', name: expect.any(String), adapterType: 'sandbox_processor', status: 'operational', roles: ['funding'],
      currencies: ['USD'], rails: ['ach'], topUps: true, depositAddresses: false, faucet: false,
    });
    expect(res.providers[1]).toMatchObject({ roles: ['funding', 'payout'], currencies: ['USDC'], rails: ['usdc_base'], depositAddresses: true, faucet: true });
    expect(res.providers[2]).toMatchObject({ roles: ['payout'], rails: ['bank_transfer', 'ach'] });
    await t.operator.sandbox.update({ pricingDown: true });
    expect((await t.workspace.rail.providers()).providers[1]!.status).toBe('degraded');
  });
});
