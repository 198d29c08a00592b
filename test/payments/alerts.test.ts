/**
 * The workspace's alerts about spending (GET /v1/events): approval.requested when a rule holds a
 * purchase for a person, wallet_provider.paused when the breaker pauses a seller for a wallet.
 * Each is written with what it announces, once, to the wallet's workspace only; the money the
 * purchases held and refunded is checked in the ledger afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RailEvent } from '../../packages/sdk/src/client/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, ledgerBalance, newBuyer, newSeller, refused } from './helpers.js';
import { newSeller as policySeller, refusal } from '../policies/helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(() => t.close());

const eventsOf = async (client: TestGateway['workspace'], type: string): Promise<RailEvent[]> => (await client.rail.events({ type })).events;

describe('approval.requested', () => {
  it('is written once per new approval, to the workspace, naming the purchase and the rule; a purchase held again writes none', async () => {
    const ws = await t.newWorkspace('Alerted Workspace');
    const [policy] = (await ws.client.policies.apply('approval "over 500":\n  price > 500\n')).policies;
    const s = await policySeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    const buyer = await newBuyer(t, ws.client, '1000');

    const first = await refusal(authorizeCall(s.client, cap, buyer), 'APPROVAL_REQUIRED');
    const again = await refusal(authorizeCall(s.client, cap, buyer), 'APPROVAL_REQUIRED');
    expect(again.body.approvalId).toBe(first.body.approvalId);

    const events = await eventsOf(ws.client, 'approval.requested');
    expect(events).toHaveLength(1);
    const wallet = await ws.client.wallets.get(buyer.walletId);
    expect(events[0]).toMatchObject({
      type: 'approval.requested',
      data: {
        approvalId: first.body.approvalId, walletId: buyer.walletId, agentId: wallet.ownerId, capabilityId: cap,
        amountMinor: '600', currency: 'USD', policyId: policy!.id, rule: 'price > 500',
      },
    });
    expect(events[0]!.id).toMatch(/^evt_/);
    // nothing was held, and nobody else hears of it
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
    expect(await eventsOf(t.workspace, 'approval.requested')).toEqual([]);
    expect(await eventsOf(s.client, 'approval.requested')).toEqual([]);

    // approved, the purchase goes through without another request; a dearer one asks again
    await ws.client.approvals.approve(String(first.body.approvalId), { resolvedBy: 'alice' });
    await authorizeCall(s.client, cap, buyer);
    expect(await eventsOf(ws.client, 'approval.requested')).toHaveLength(1);
    expectLedgerConsistent(t);
  });
});

describe('wallet_provider.paused', () => {
  it('is written by the failure that pauses the seller for the wallet, once, to the wallet\'s workspace; a resume and three more failures write the next', async () => {
    const ws = await t.newWorkspace('Breaker Workspace');
    const s = await newSeller(t, '10');
    const buyer = await newBuyer(t, ws.client, '100');
    const failThrice = async () => {
      for (let i = 0; i < 3; i++) {
        const auth = await authorizeCall(s.client, s.capabilityId, buyer);
        await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', statusCode: 503 });
        expect(await eventsOf(ws.client, 'wallet_provider.paused')).toHaveLength(i < 2 ? pausesBefore : pausesBefore + 1);
      }
    };
    let pausesBefore = 0;
    await failThrice();
    const [paused] = await eventsOf(ws.client, 'wallet_provider.paused');
    expect(paused).toMatchObject({ type: 'wallet_provider.paused', data: { walletId: buyer.walletId, providerId: s.id, consecutiveFailures: 3 } });
    await refused(authorizeCall(s.client, s.capabilityId, buyer), 429, 'WALLET_PROVIDER_PAUSED');
    expect(await eventsOf(ws.client, 'wallet_provider.paused')).toHaveLength(1);
    expect(await eventsOf(s.client, 'wallet_provider.paused')).toEqual([]);

    await ws.client.wallets.resumeProvider(buyer.walletId, s.id);
    pausesBefore = 1;
    await failThrice();
    // every failed call was refunded: the wallet holds what it was funded with
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 0n });
    expectLedgerConsistent(t);
  });
});
