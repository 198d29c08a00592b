/**
 * Payout destinations: the first registration for an asset is usable at once; a change
 * freezes payouts on that asset's rails for 24 hours (on the gateway's clock) and raises an
 * event, as does (without a freeze) a first destination for another asset; the same address
 * in another letter case is not a change.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { DAY, HOUR, balanceOf, entries, railGateway, refusedWith } from './helpers.js';

const t = await railGateway();
afterAll(() => t.close());

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

async function provider(fund = '10000') {
  const s = await t.newProvider({ name: `Dest ${Math.random().toString(36).slice(2, 7)}` });
  await s.client.wallets.fund(s.walletId, fund);
  return s;
}

describe('PUT /v1/providers/:id/payout-destination', () => {
  it('makes the first destination usable at once, and payouts to it go out', async () => {
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
    const s = await provider();
    await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
    await s.client.payouts.setDestination(s.id, { destination: 'ext_first_account' });
    t.clock.advance(HOUR);
    const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: 'ext_second_account' });
    expect(changed).toBe(true);
    const frozenUntil = new Date(t.clock.now() + DAY).toISOString();
    expect(destination).toMatchObject({ destination: 'ext_second_account', usable: false, usableAt: frozenUntil, rails: ['bank_transfer', 'ach'] });

    // both bank rails are frozen; nothing is debited by a refusal
    for (const rail of ['bank_transfer', 'ach'] as const) {
      const before = snapshotDb(t.dataDir);
      const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail }), 409, 'DESTINATION_COOLING_DOWN');
      expect(e.details).toMatchObject({ rail, asset: 'USD', usableAt: frozenUntil });
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    }
    // the freeze is the rail's, not the address's: changing back does not lift it
    t.clock.advance(HOUR);
    await s.client.payouts.setDestination(s.id, { destination: 'ext_first_account' });
    await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 409, 'DESTINATION_COOLING_DOWN');
    // another asset is not frozen
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');

    // 24 hours after the last change, minus a millisecond: still refused; then allowed
    t.clock.advance(DAY - 1);
    await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' }), 409, 'DESTINATION_COOLING_DOWN');
    t.clock.advance(1);
    const ok = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' });
    expect(ok).toMatchObject({ status: 'submitted', destination: 'ext_first_account' });
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-100'], ['payout', '-100']]);

    const { events } = await s.client.rail.events({ type: 'payout_destination.changed' });
    expect(events.map((e) => e.data.destination)).toEqual(['ext_first_account', 'ext_second_account', 'ext_first_account']);
    expect(events[1]!.data).toMatchObject({ previous: 'ext_first_account', asset: 'USD', rails: ['bank_transfer', 'ach'], payoutsFrozenUntil: frozenUntil });
  });

  it('a first destination for another asset is usable at once (the first registration), and alerts: money could now go elsewhere', async () => {
    const s = await provider();
    await s.client.payouts.setDestination(s.id, { destination: 'ext_real_bank' });
    t.clock.advance(2 * DAY);
    const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
    expect(changed).toBe(true);
    expect(destination).toMatchObject({ asset: 'USDC', destination: ADDRESS, usable: true, rails: ['usdc_base'] });
    const { events } = await s.client.rail.events({ type: 'payout_destination.changed' });
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ asset: 'USDC', chain: 'base', rails: ['usdc_base'], previous: null, destination: ADDRESS, payoutsFrozenUntil: null });
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'ach' })).destination).toBe('ext_real_bank');
    expect(entries(t, s.walletId)).toEqual([['fund', '10000'], ['payout', '-100'], ['payout', '-100']]);
  });

  it('the same address in another letter case is not a change: no freeze, no event, the stored form kept', async () => {
    const s = await provider();
    await s.client.payouts.setDestination(s.id, { destination: ADDRESS });
    for (const variant of [ADDRESS.toLowerCase(), ADDRESS.toUpperCase().replace('0X', '0x'), ` ${ADDRESS} `]) {
      const { destination, changed } = await s.client.payouts.setDestination(s.id, { destination: variant, asset: 'USDC', chain: 'base' });
      expect(changed).toBe(false);
      expect(destination).toMatchObject({ destination: ADDRESS, usable: true });
    }
    expect((await s.client.rail.events()).events).toEqual([]);
    expect((await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' })).status).toBe('submitted');
    expect(await s.client.payouts.destinations(s.id)).toEqual([expect.objectContaining({ destination: ADDRESS, usable: true })]);
  });

  it('takes bank destinations only as ext_ references, never account numbers', async () => {
    const s = await provider();
    for (const [destination, asset] of [['021000021-123456789', undefined], ['12345678', 'USD'], [ADDRESS, 'USD'], ['ext_ok', 'USDC']] as const) {
      const e = await refusedWith(s.client.payouts.setDestination(s.id, { destination, ...(asset ? { asset } : {}) }), 400, 'VALIDATION_FAILED');
      expect(e.message).toMatch(/^destination: /);
    }
    await refusedWith(s.client.payouts.setDestination(s.id, { destination: 'ext_ok', chain: 'base' }), 400, 'VALIDATION_FAILED');
    expect(await s.client.payouts.destinations(s.id)).toEqual([]);
  });

  it("is the provider's own: another provider is refused with 403", async () => {
    const s = await provider();
    const other = await t.newProvider();
    await refusedWith(other.client.payouts.setDestination(s.id, { destination: 'ext_thief' }), 403, 'FORBIDDEN');
    await refusedWith(other.client.payouts.destinations(s.id), 403, 'FORBIDDEN');
    expect(await s.client.payouts.destinations(s.id)).toEqual([]);
  });
});
