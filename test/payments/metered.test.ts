/**
 * Metered prices in per-call mode (docs/protocol.md § Metered prices): a capability declares a
 * unit, a unit price and a maximum of units per call; its priceMinor is the maximum, which the
 * buyer authorizes (held); the seller's complete reports the units used and the gateway charges
 * units × unit price, releases the rest of the hold and takes the 3% fee on what was charged.
 * Runs on SQLite and PostgreSQL (the `suite` and `postgres` projects).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { feeFor } from '../../src/core/money.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, hashOf, ledgerBalance, ledgerRows, newBuyer, refused, transactionRow, verifiesWithPlatformKey } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const METERING = { unit: 'token', unitPriceMinor: '2', maxUnits: '5000' };
const base = { name: 'Summarize', description: 'summarizes text, priced per token', protocol: 'rest' as const, category: 'text', endpoint: 'https://seller.example/summarize' };

/** A verified seller with a metered capability published through the API: 2 a token, at most 5000 tokens (10000) a call. */
async function meteredSeller(metering = METERING) {
  const s = await t.newProvider({ name: 'Metered Seller' });
  const priceMinor = (BigInt(metering.unitPriceMinor) * BigInt(metering.maxUnits)).toString();
  const { capability } = await s.client.capabilities.publish({ ...base, priceMinor, metering });
  return { ...s, capabilityId: capability.id, capability };
}

async function expectLedgerVerifies() {
  const report = await verifyLedger(t.gw.store);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}

describe('publishing a metered capability', () => {
  it('keeps the metering, answers it on the capability and in discovery, priceMinor the maximum per call', async () => {
    const s = await meteredSeller();
    expect(s.capability).toMatchObject({ priceMinor: '10000', metering: METERING });
    expect((await t.workspace.capabilities.get(s.capabilityId)).capability.metering).toEqual(METERING);
    const found = await t.workspace.discovery.search({ query: 'summarizes text per token' });
    expect(found.find((r) => r.capability.id === s.capabilityId)?.capability.metering).toEqual(METERING);
    // a flat-priced capability has none
    const flat = await s.client.capabilities.publish({ ...base, priceMinor: '100' });
    expect(flat.capability.metering).toBeUndefined();
  });

  it('refuses a price that is not unitPriceMinor × maxUnits, and bad metering fields, each by name', async () => {
    const s = await t.newProvider();
    const bad = async (body: Record<string, unknown>, field: string) => {
      const e = await refused(s.client.capabilities.publish({ ...base, priceMinor: '10000', ...body } as never), 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(e), `refusal of ${JSON.stringify(body)}`).toContain(field);
    };
    await bad({ priceMinor: '9999', metering: METERING }, 'priceMinor');
    await bad({ metering: { ...METERING, unit: 'Tokens!' } }, 'metering');
    await bad({ metering: { ...METERING, maxUnits: '0' } }, 'metering.maxUnits');
    await bad({ metering: { ...METERING, unitPriceMinor: '0' } }, 'metering.unitPriceMinor');
    await bad({ metering: { ...METERING, unitPriceMinor: '1.5' } }, 'metering');
    await bad({ metering: { unit: 'token', unitPriceMinor: '2' } }, 'maxUnits');
    expect(await s.client.capabilities.list()).toHaveLength(0);
  });

  it('edits: new metering brings its maximum as the price; a price alone must agree; null goes back to a flat price', async () => {
    const s = await meteredSeller();
    const edited = await s.client.capabilities.edit(s.capabilityId, { metering: { unit: 'token', unitPriceMinor: '3', maxUnits: '1000' } });
    expect(edited.changed.sort()).toEqual(['metering', 'priceMinor']);
    expect(edited.capability).toMatchObject({ priceMinor: '3000', metering: { unit: 'token', unitPriceMinor: '3', maxUnits: '1000' } });
    const e = await refused(s.client.capabilities.edit(s.capabilityId, { priceMinor: '2999' }), 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(e)).toContain('priceMinor');
    await refused(s.client.capabilities.edit(s.capabilityId, { priceMinor: '10', metering: { unit: 'row', unitPriceMinor: '1', maxUnits: '20' } }), 400, 'VALIDATION_FAILED');
    const flat = await s.client.capabilities.edit(s.capabilityId, { metering: null });
    expect(flat.changed).toEqual(['metering']);
    expect(flat.capability.priceMinor).toBe('3000');
    expect(flat.capability.metering).toBeUndefined();
    // flat again: any price
    expect((await s.client.capabilities.edit(s.capabilityId, { priceMinor: '50' })).capability.priceMinor).toBe('50');
  });
});

describe('a metered paid call', () => {
  it('holds the maximum, charges units × unit price, releases the rest, fee on the charge; the receipt signs the usage', async () => {
    const s = await meteredSeller();
    const buyer = await newBuyer(t, t.workspace, '20000');
    const platformBefore = ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance;
    const challenge = await s.client.payments.challenge(s.capabilityId);
    // the platform signs the metering into the challenge: the buyer sees what it authorizes is a maximum
    expect(challenge).toMatchObject({ amountMinor: '10000', metering: METERING });
    expect(await verifiesWithPlatformKey(t, challenge)).toBe(true);
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    expect(auth).toMatchObject({ status: 'authorized', amountMinor: '10000' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 20000n, held: 10000n });

    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('{"summary":"…"}'), units: '1234' });
    const charged = 2468n;
    const fee = feeFor(charged, 300);
    expect(fee).toBe(74n);
    expect(receipt).toMatchObject({
      status: 'success', amount: { amountMinor: '2468', currency: 'USD' },
      usage: { unit: 'token', units: '1234', unitPriceMinor: '2', authorizedMinor: '10000' },
    });
    expect(await verifiesWithPlatformKey(t, receipt)).toBe(true);
    // the receipt read back later is the same, signed object
    expect(await t.workspace.receipts.get(receipt.id)).toEqual(receipt);

    const rows = ledgerRows(t, { transactionId: auth.transactionId }).map((e) => ({ wallet: e.wallet_id, type: e.type, amount: BigInt(e.amount_minor), hold: BigInt(e.hold_minor) }));
    expect(rows).toEqual([
      { wallet: buyer.walletId, type: 'hold', amount: 0n, hold: 10000n },
      { wallet: buyer.walletId, type: 'capture', amount: -charged, hold: -charged },
      { wallet: buyer.walletId, type: 'release', amount: 0n, hold: -(10000n - charged) },
      { wallet: s.walletId, type: 'sale', amount: charged - fee, hold: 0n },
      { wallet: PLATFORM_REVENUE_WALLET_ID, type: 'fee', amount: fee, hold: 0n },
    ]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 20000n - charged, held: 0n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: charged - fee, held: 0n });
    expect(ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance - platformBefore).toBe(fee);
    expect((await t.workspace.wallets.balance(buyer.walletId)).availableMinor).toBe((20000n - charged).toString());
    const row = transactionRow(t, auth.transactionId) as unknown as { status: string; fee_minor: bigint; charged_minor: bigint; amount_minor: bigint };
    expect([row.status, BigInt(row.amount_minor), BigInt(row.charged_minor), BigInt(row.fee_minor)]).toEqual(['succeeded', 10000n, charged, fee]);

    // a retried complete with the same units answers the same receipt; other units are a conflict
    const again = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('{"summary":"…"}'), units: '1234' });
    expect(again.receipt).toEqual(receipt);
    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('{"summary":"…"}'), units: '1000' }), 409, 'CONFLICT');
    expect(ledgerRows(t, { transactionId: auth.transactionId })).toHaveLength(5);
    // the seller's payment.succeeded names the charge as its amount, and what was authorized
    const { events } = await s.client.rail.events({ type: 'payment.succeeded' });
    const event = events.find((e) => (e.data as { transactionId?: string }).transactionId === auth.transactionId);
    expect(event?.data).toMatchObject({ amountMinor: '2468', authorizedMinor: '10000', feeMinor: '74', saleMinor: '2394' });
    expectLedgerConsistent(t);
    await expectLedgerVerifies();
  });

  it('refuses units above the maximum (USAGE_ABOVE_MAXIMUM) and moves nothing; the maximum itself charges the whole hold', async () => {
    const s = await meteredSeller();
    const buyer = await newBuyer(t, t.workspace, '10000');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    const e = await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x'), units: '5001' }), 409, 'USAGE_ABOVE_MAXIMUM');
    expect(e).toMatchObject({ details: { field: 'units', authorizedMinor: '10000', chargedMinor: '10002', maxUnits: '5000' } });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 10000n, held: 10000n });
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((r) => r.type)).toEqual(['hold']);
    expect(transactionRow(t, auth.transactionId).status).toBe('authorized');

    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x'), units: '5000' });
    expect(receipt.amount.amountMinor).toBe('10000');
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((r) => r.type)).toEqual(['hold', 'capture', 'sale', 'fee']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 0n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(10000n - feeFor(10000n, 300));
    expectLedgerConsistent(t);
    await expectLedgerVerifies();
  });

  it('zero units charge nothing and release the whole hold; no units charge the whole hold (a seller that does not meter)', async () => {
    const s = await meteredSeller({ unit: 'row', unitPriceMinor: '7', maxUnits: '10' });
    const buyer = await newBuyer(t, t.workspace, '140');
    const zero = await authorizeCall(s.client, s.capabilityId, buyer);
    const { receipt } = await s.client.payments.complete({ transactionId: zero.transactionId, responseHash: hashOf('none'), units: '0' });
    expect(receipt).toMatchObject({ amount: { amountMinor: '0' }, usage: { unit: 'row', units: '0', unitPriceMinor: '7', authorizedMinor: '70' } });
    expect(ledgerRows(t, { transactionId: zero.transactionId }).map((r) => [r.type, BigInt(r.amount_minor), BigInt(r.hold_minor)])).toEqual([
      ['hold', 0n, 70n], ['capture', 0n, 0n], ['release', 0n, -70n],
    ]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 140n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(0n);

    const whole = await authorizeCall(s.client, s.capabilityId, buyer);
    const flat = await s.client.payments.complete({ transactionId: whole.transactionId, responseHash: hashOf('all') });
    expect(flat.receipt.amount.amountMinor).toBe('70');
    expect(flat.receipt.usage).toBeUndefined();
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 70n, held: 0n });
    expectLedgerConsistent(t);
    await expectLedgerVerifies();
  });

  it('a handler failure charges nothing: the whole hold is refunded', async () => {
    const s = await meteredSeller();
    const buyer = await newBuyer(t, t.workspace, '10000');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    const { receipt } = await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', statusCode: 500 });
    expect(receipt).toMatchObject({ status: 'failed', amount: { amountMinor: '10000' } });
    expect(receipt.usage).toBeUndefined();
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((r) => r.type)).toEqual(['hold', 'refund']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 10000n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(0n);
    // a complete after the failure is refused and moves nothing
    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('late'), units: '1' }), 409, 'CONFLICT');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 10000n, held: 0n });
    expectLedgerConsistent(t);
    await expectLedgerVerifies();
  });

  it('charges at the unit price the call was authorized at, whatever the seller edits before completing', async () => {
    const s = await meteredSeller();
    const buyer = await newBuyer(t, t.workspace, '10000');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    await s.client.capabilities.edit(s.capabilityId, { metering: { unit: 'token', unitPriceMinor: '1', maxUnits: '9000' } });
    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('y'), units: '100' });
    expect(receipt).toMatchObject({ amount: { amountMinor: '200' }, usage: { units: '100', unitPriceMinor: '2', authorizedMinor: '10000' } });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 9800n, held: 0n });
    await expectLedgerVerifies();
  });

  it('refuses units for a flat-priced capability, and units that are not a count; nothing moves', async () => {
    const s = await t.newProvider();
    const { capability } = await s.client.capabilities.publish({ ...base, priceMinor: '100' });
    const buyer = await newBuyer(t, t.workspace, '100');
    const auth = await authorizeCall(s.client, capability.id, buyer);
    const e = await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('z'), units: '3' }), 400, 'VALIDATION_FAILED');
    expect(String(e.message)).toContain('units');
    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('z'), units: '-1' }), 400, 'VALIDATION_FAILED');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 100n });
    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('z') });
    expect(receipt.amount.amountMinor).toBe('100');
    expectLedgerConsistent(t);
  });

  it('counts what was charged in the operator\'s activity and in the budgets\' spend, not what was held', async () => {
    const s = await meteredSeller();
    const buyer = await newBuyer(t, t.workspace, '10000');
    const ctx = t.gw.services.ctx;
    const from = ctx.clock.now() - 1000;
    const succeededVolume = async () => (await ctx.store.read((r) => r.transactions.activity({ from, to: ctx.clock.now() + 1000, bucketMs: 3_600_000 })))
      .filter((x) => x.status === 'succeeded').reduce((sum, x) => sum + x.amountMinor, 0n);
    const volumeBefore = await succeededVolume();
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('w'), units: '50' });
    const spent = await ctx.store.read((r) => r.spend.byWallet(buyer.walletId, from, ctx.clock.now() + 1000, ctx.clock.now()));
    expect(spent).toBe(100n);
    expect(await succeededVolume() - volumeBefore).toBe(100n);
    const mine = await ctx.store.read((r) => r.transactions.get(auth.transactionId));
    expect(mine?.chargedMinor).toBe(100n);
  });
});
