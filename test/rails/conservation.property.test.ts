/**
 * Property: whatever sequence of top-ups (confirmed or declined), USDC deposits, paid
 * purchases, payouts (on any rail), returns and confirmations runs through the real
 * gateway, money is conserved over the whole ledger (funded = balances + fees + paid
 * out), each wallet's balance is what a model of the sequence predicts, refused
 * movements move nothing, and reconciliation finds the rails covering what is owed.
 * Runs on both rail drivers (./drivers.ts): the sandbox world, and a production gateway
 * with Stripe (top-ups, bank payouts, returns as failed payouts) over the fake Stripe and
 * USDC over a local EVM (Hardhat's EDR) (deposits, payouts confirmed by mined blocks); fewer runs there, each
 * deposit being a mined transfer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { feeFor } from '../../src/core/money.js';
import { authorizeCall, createCapability, newBuyer, paidCall, setPrice } from '../payments/helpers.js';
import { MINUTE, balanceOf, expectConserved, refusedWith } from './helpers.js';
import { DRIVERS, payeeOf, useDriver, worldOf } from './drivers.js';
import { CONFIRMATIONS } from './usdc/chain.js';

const amount = (max: number) => fc.integer({ min: 1, max }).map(String);
type Op =
  | { kind: 'topup'; amount: string; confirm: boolean }
  | { kind: 'deposit'; usdcUnits: string }
  | { kind: 'purchase'; price: string }
  | { kind: 'payout'; amount: string; rail: 'bank_transfer' | 'ach' | 'usdc_base' }
  | { kind: 'return' }
  | { kind: 'time' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('topup' as const), amount: amount(50_000), confirm: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deposit' as const), usdcUnits: amount(300_000_000) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('purchase' as const), price: amount(20_000) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('payout' as const), amount: amount(30_000), rail: fc.constantFrom('bank_transfer' as const, 'ach' as const, 'usdc_base' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'return' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'time' as const }) },
);

describe.each(DRIVERS)('money across top-ups, deposits, purchases, payouts and returns on a %s gateway', (kind) => {
  const d = useDriver(kind);
  it('is conserved: funded = balances + fees + paid out, and every balance is as modelled', async () => {
    const { t } = d;
    const runJobs = () => t.gw.services.rails.jobs.runOnce();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const buyer = await newBuyer(t, t.workspace);
        const address = (await t.workspace.rail.depositAddress(buyer.walletId)).address;
        const seller = await payeeOf(d, '0');
        const capabilityId = await createCapability(t, seller.id, { priceMinor: '1' });
        const model = { buyer: 0n, seller: 0n };
        const feesBefore = balanceOf(t, 'wal_platform_revenue');
        let fees = 0n;
        const open: string[] = [];

        for (const o of ops) {
          switch (o.kind) {
            case 'topup': {
              const i = await t.workspace.rail.topUp(buyer.walletId, { amountMinor: o.amount });
              if (i.status === 'declined') break; // under Stripe's 0.50 USD minimum
              if (o.confirm) {
                expect((await d.confirmTopUp(i)).res.status).toBe(200);
                model.buyer += BigInt(o.amount);
              } else {
                expect((await d.declineTopUp(i, 'card_declined')).res.status).toBe(200);
              }
              break;
            }
            case 'deposit': {
              const tx = await d.deposit(t.workspace, buyer.walletId, address, o.usdcUnits); // price 1.0: credited units / 10^4, rounded down
              expect(tx.creditedMinor).toBe((BigInt(o.usdcUnits) / 10_000n).toString());
              model.buyer += BigInt(o.usdcUnits) / 10_000n;
              break;
            }
            case 'purchase': {
              await setPrice(t, capabilityId, o.price);
              if (BigInt(o.price) > model.buyer) {
                await refusedWith(authorizeCall(seller.client, capabilityId, buyer), 402, 'INSUFFICIENT_FUNDS');
                break;
              }
              await paidCall(seller.client, capabilityId, buyer);
              const fee = feeFor(BigInt(o.price), 300);
              model.buyer -= BigInt(o.price);
              model.seller += BigInt(o.price) - fee;
              fees += fee;
              break;
            }
            case 'payout': {
              const create = () => seller.client.payouts.create({ walletId: seller.walletId, amountMinor: o.amount, rail: o.rail });
              if (BigInt(o.amount) > model.seller) {
                await refusedWith(create(), 402, 'INSUFFICIENT_FUNDS');
                break;
              }
              open.push((await create()).id);
              model.seller -= BigInt(o.amount);
              break;
            }
            case 'return': {
              const id = open.pop();
              if (!id) break;
              const p = await seller.client.payouts.get(id);
              if (p.status !== 'submitted') break;
              if (kind === 'production' && p.rail === 'usdc_base') break; // a transfer on chain is not sent back
              await d.returnPayout(p, 'account_closed', seller.client);
              model.seller += BigInt(p.amountMinor);
              break;
            }
            case 'time': {
              t.clock.advance(3 * 24 * 60 * MINUTE);
              if (kind === 'production') await worldOf(d).chain.mine(CONFIRMATIONS); // Stripe's payouts stay pending: the bank has not answered
              await runJobs();
              break;
            }
          }
          expectConserved(t);
        }
        expect(balanceOf(t, buyer.walletId)).toBe(model.buyer);
        expect(balanceOf(t, seller.walletId)).toBe(model.seller);
        expect(balanceOf(t, 'wal_platform_revenue') - feesBefore).toBe(fees);
        expect(await t.operator.rail.reconcile()).toMatchObject({ status: 'ok', discrepancies: [] });
      }),
      { numRuns: kind === 'sandbox' ? 12 : 6 },
    );
  });
});

