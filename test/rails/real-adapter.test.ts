/**
 * Simulated money exists only where no real payment provider is connected: a sandbox-mode
 * gateway running a real (non-sandbox) payout adapter refuses the fund route (501), says
 * `sandbox: false`, and its reconciliation counts no sandbox credits as held. A sandbox
 * gateway with the sandbox adapters, or with no rail at all, keeps the shortcut.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RailAdapter, RailAdapters } from '../../src/domain/rails/adapters.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { entries, railGateway, refusedWith } from './helpers.js';
import { authorizeCall, hashOf, newBuyer, newSeller } from '../payments/helpers.js';

const sent: unknown[] = [];
const realBank: RailAdapter = {
  info: { id: 'acme-bank', name: 'ACME bank', adapterType: 'acme', roles: ['payout'], currencies: ['USD'], rails: ['ach'], topUps: false, depositAddresses: false, faucet: false },
  status: async () => 'operational',
  payouts: {
    rails: ['ach'],
    submit: async (p) => { sent.push(p); return { externalRef: `acme_${p.payoutId}`, expectedBy: 0 }; },
    status: async () => undefined,
    lookup: async () => undefined,
  },
  treasury: { balance: async () => ({ asset: 'USD', amountMinor: 0n }) },
};
const adapters: RailAdapters = { providers: [realBank], screening: { screen: async () => 'clear' }, pricing: { usdcPriceMicros: async () => 1_000_000n } };

const real = await railGateway({ mode: 'sandbox', rails: { adapters } });
const none = await railGateway({ mode: 'sandbox', rails: { adapters: 'none' } });
afterAll(async () => {
  await real.close();
  await none.close();
});

describe('a sandbox-mode gateway with a real payment provider connected', () => {
  it('refuses POST /v1/wallets/:id/fund with 501 NOT_SUPPORTED, writing nothing, so no simulated money reaches a real rail', async () => {
    const s = await real.newProvider({ name: 'real rail payee' });
    const before = snapshotDb(real.dataDir);
    const e = await refusedWith(s.client.wallets.fund(s.walletId, '50000'), 501, 'NOT_SUPPORTED');
    expect(e.message).toContain('without a real payment provider connected');
    expect(changedTables(before, snapshotDb(real.dataDir))).toEqual([]);
    expect(entries(real, s.walletId)).toEqual([]);
    // another tenant's wallet is still 404, not a 501 that says it exists
    await refusedWith(real.workspace.wallets.fund(s.walletId, '1'), 404, 'WALLET_NOT_FOUND');

    await s.client.payouts.setDestination(s.id, { destination: 'ext_payee' });
    await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '50000', rail: 'ach' }), 402, 'INSUFFICIENT_FUNDS');
    expect(sent).toEqual([]);
  });

  it('says sandbox: false in GET /v1/rail/providers and counts no sandbox credits in reconciliation', async () => {
    const { sandbox, providers } = await real.provider.rail.providers();
    expect(sandbox).toBe(false);
    expect(providers.map((p) => p.id)).toEqual(['acme-bank']);
    expect((await real.operator.rail.reconcile()).sandboxCreditsMinor).toBe('0');
  });
});

describe('a sandbox-mode gateway with no rail', () => {
  it('keeps the fund shortcut and says sandbox: true', async () => {
    const s = await none.newProvider({ name: 'no rail' });
    expect((await s.client.wallets.fund(s.walletId, '700')).balance.balanceMinor).toBe('700');
    expect(entries(none, s.walletId)).toEqual([['fund', '700']]);
    expect(await none.provider.rail.providers()).toEqual({ sandbox: true, providers: [] });
    expect((await none.operator.rail.reconcile()).sandboxCreditsMinor).not.toBe('0');
  });
});

describe('the sandbox controls without the sandbox adapters', () => {
  it('refuse to expire a paid call now (501 NOT_SUPPORTED): the call stays authorized and completes as usual', async () => {
    const seller = await newSeller(none, '100');
    const ws = await none.newWorkspace('no rail buyer');
    const buyer = await newBuyer(none, ws.client, '100');
    const auth = await authorizeCall(seller.client, seller.capabilityId, buyer);
    await refusedWith(seller.client.sandbox.expireTransaction(auth.transactionId), 501, 'NOT_SUPPORTED');
    expect((await ws.client.wallets.balance(buyer.walletId)).availableMinor).toBe('0');
    const { receipt } = await seller.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('ok') });
    expect(receipt.status).toBe('success');
    expect(entries(none, buyer.walletId).map(([type]) => type)).toEqual(['fund', 'hold', 'capture']);
  });
});
