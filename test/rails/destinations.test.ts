/**
 * Payout destinations: the first registration for an asset is usable at once; a change
 * freezes payouts on that asset's rails for 24 hours (on the gateway's clock) and raises an
 * event, as does (without a freeze) a first destination for another asset; the same address
 * in another letter case is not a change. Runs on both rail drivers (./drivers.ts): on the
 * production gateway the payouts go out through Stripe Connect and USDC over a local EVM (Hardhat's EDR).
 */
import { describe, expect, it } from 'vitest';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { DAY, HOUR, balanceOf, entries, expectConserved, refusedWith } from './helpers.js';
import { DRIVERS, useDriver } from './drivers.js';

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

describe.each(DRIVERS)('payout destinations on a %s gateway', (kind) => {
  const d = useDriver(kind);
  const funded = (amount = '10000') => [d.fundEntry, amount];

  async function provider(fund = '10000') {
    const s = await d.t.newProvider({ name: `Dest ${Math.random().toString(36).slice(2, 7)}` });
    await d.fund(s.client, s.walletId, fund);
    return s;
  }

  describe('PUT /v1/providers/:id/payout-destination', () => {
    it('makes the first destination usable at once, and payouts to it go out', async () => {
      const { t } = d;
      const s = await provider();
      const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
      expect(changed).toBe(true);
      expect(destination).toMatchObject({ asset: 'USDC', chain: 'base', destination: ADDRESS, rails: ['usdc_base'], usable: true });
      expect(destination.usableAt).toBe(new Date(t.clock.now()).toISOString());
      const payout = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' });
      expect(payout).toMatchObject({ status: 'submitted', destination: ADDRESS });
      expect(balanceOf(t, s.walletId)).toBe(9900n);
    });

    it('a change refuses payouts on that rail and asset for 24 hours, then allows them, and raises an event', async () => {
      const { t } = d;
      const s = await provider();
      await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
      const first = d.bankDestination('first_account');
      const second = d.bankDestination('second_account');
      await s.client.payouts.setDestination(s.id, { destination: first });
      t.clock.advance(HOUR);
      const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: second });
      expect(changed).toBe(true);
      const frozenUntil = new Date(t.clock.now() + DAY).toISOString();
      expect(destination).toMatchObject({ destination: second, usable: false, usableAt: frozenUntil, rails: ['bank_transfer', 'ach'] });

      // both bank rails are frozen; nothing is debited by a refusal
      for (const rail of ['bank_transfer', 'ach'] as const) {
        const before = snapshotDb(t.dataDir);
        const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail }), 409, 'DESTINATION_COOLING_DOWN');
        expect(e.details).toMatchObject({ rail, asset: 'USD', usableAt: frozenUntil });
        expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
      }
      // the freeze is the rail's, not the address's: changing back does not lift it
      t.clock.advance(HOUR);
      await s.client.payouts.setDestination(s.id, { destination: first });
      await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 409, 'DESTINATION_COOLING_DOWN');
      // another asset is not frozen
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');

      // 24 hours after the last change, minus a millisecond: still refused; then allowed
      t.clock.advance(DAY - 1);
      await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 409, 'DESTINATION_COOLING_DOWN');
      t.clock.advance(1);
      const ok = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' });
      expect(ok).toMatchObject({ status: 'submitted', destination: first });
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-100'], ['payout', '-100']]);

      const { events } = await s.client.rail.events({ type: 'payout_destination.changed' });
      expect(events.map((e) => e.data.destination)).toEqual([first, second, first]);
      expect(events[1]!.data).toMatchObject({ previous: first, asset: 'USD', rails: ['bank_transfer', 'ach'], payoutsFrozenUntil: frozenUntil });
    });

    it('a first destination for another asset is usable at once (the first registration), and alerts: money could now go elsewhere', async () => {
      const { t } = d;
      const s = await provider();
      const bank = d.bankDestination('real_bank');
      await s.client.payouts.setDestination(s.id, { destination: bank });
      t.clock.advance(2 * DAY);
      const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
      expect(changed).toBe(true);
      expect(destination).toMatchObject({ asset: 'USDC', destination: ADDRESS, usable: true, rails: ['usdc_base'] });
      const { events } = await s.client.rail.events({ type: 'payout_destination.changed' });
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ asset: 'USDC', chain: 'base', rails: ['usdc_base'], previous: null, destination: ADDRESS, payoutsFrozenUntil: null });
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).destination).toBe(bank);
      expect(entries(t, s.walletId)).toEqual([funded(), ['payout', '-100'], ['payout', '-100']]);
      expectConserved(t);
    });

    it('the same address in another letter case is not a change: no freeze, no event, the stored form kept', async () => {
      const { t } = d;
      const s = await provider();
      await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
      for (const variant of [ADDRESS.toLowerCase(), ADDRESS.toUpperCase().replace('0X', '0x'), ` ${ADDRESS} `]) {
        const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: variant, asset: 'USDC', chain: 'base' });
        expect(changed).toBe(false);
        expect(destination).toMatchObject({ destination: ADDRESS, usable: true });
      }
      // (the provider's funding top-up is an event of its own)
      expect((await s.client.rail.events({ type: 'payout_destination.changed' })).events).toEqual([]);
      expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');
      expect(await s.client.payouts.destinations(s.id)).toEqual([expect.objectContaining({ destination: ADDRESS, usable: true })]);
    });

    it('takes bank destinations only as ext_ references, never account numbers', async () => {
      const { t } = d;
      const s = await provider();
      for (const [destination, asset] of [['021000021-123456789', undefined], ['12345678', 'USD'], [ADDRESS, 'USD'], ['ext_ok', 'USDC']] as const) {
        const e = await refusedWith(s.client.payouts.setDestination(s.id, { destination, ...(asset ? { asset } : {}) }), 400, 'VALIDATION_FAILED');
        expect(e.message).toMatch(/^destination: /);
      }
      await refusedWith(s.client.payouts.setDestination(s.id, { destination: 'ext_ok', chain: 'base' }), 400, 'VALIDATION_FAILED');
      expect(await s.client.payouts.destinations(s.id)).toEqual([]);
    });

    it("is the provider's own: another provider is refused with 403", async () => {
      const { t } = d;
      const s = await provider();
      const other = await t.newProvider();
      await refusedWith(other.client.payouts.setDestination(s.id, { destination: 'ext_thief' }), 403, 'FORBIDDEN');
      await refusedWith(other.client.payouts.destinations(s.id), 403, 'FORBIDDEN');
      expect(await s.client.payouts.destinations(s.id)).toEqual([]);
    });
  });
});
