/**
 * An approved approval covers one purchase that buys something. A purchase that uses it
 * and is then refunded (the seller reports client_error or provider_error, or nobody
 * resolves it within the 15-minute in-flight time) bought nothing: its refund gives the
 * approval back, in the same database transaction, so the buyer's retry is paid without
 * asking a person again, exactly once. A completed purchase keeps it used. Real gateway,
 * hand-moved clock; every case checks the buyer's ledger afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestGateway, type TestGateway, sqliteOf } from '../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, hashOf, ledgerBalance, type Buyer } from '../payments/helpers.js';
import { buy, newSeller, policyFixture, refusal, workspaceWithAgent, type Seller } from './helpers.js';

const MIN = 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 4, 12, 9, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t.close();
});

/** A workspace holding purchases over 500 for a person, a 600 capability, and an approved request for it. */
async function approvedPurchase(fundMinor = '5000') {
  const ws = await workspaceWithAgent(t, fundMinor);
  await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
  const s = await newSeller(t);
  const cap = await s.publish({ priceMinor: '600' });
  const approvalId = (await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
  await ws.client.approvals.approve(approvalId, { resolvedBy: 'alice' });
  return { ws, s, cap, approvalId };
}

/** The approval's record as the API shows it. */
async function approvalOf(ws: Awaited<ReturnType<typeof workspaceWithAgent>>, id: string) {
  return (await ws.client.approvals.get(id)).approval;
}

/** The transaction an approval is used by, read from the database (the API does not show it). */
function usedBy(approvalId: string): string | null {
  const row = sqliteOf(t.gw).prepare('SELECT used_by_transaction_id AS txn FROM approvals WHERE id = ?').get(approvalId) as { txn: string | null };
  return row.txn;
}

/** The purchase after a refund: paid on the same approval, no new request, then the next one is held again. */
async function retryUsesItOnceMore(ws: Awaited<ReturnType<typeof workspaceWithAgent>>, s: Seller, cap: string, approvalId: string) {
  const retry = await authorizeCall(s.client, cap, ws.buyer);
  expect(retry.status).toBe('authorized');
  expect(await approvalOf(ws, approvalId)).toMatchObject({ status: 'approved', usedAt: new Date(clock.now()).toISOString() });
  expect(usedBy(approvalId)).toBe(retry.transactionId);
  expect((await ws.client.approvals.list({ status: 'pending' })).approvals).toEqual([]);
  await s.client.payments.complete({ transactionId: retry.transactionId, responseHash: hashOf('{"ok":true}') });

  const third = await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');
  expect(third.body.approvalId).not.toBe(approvalId);
  expect(usedBy(approvalId)).toBe(retry.transactionId);
  return retry.transactionId;
}

function expectPaidOnce(buyer: Buyer, fundMinor: bigint) {
  expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: fundMinor - 600n, held: 0n });
  expectLedgerConsistent(t);
}

describe('an approval used by a purchase the seller reports failed', () => {
  for (const reason of ['provider_error', 'client_error'] as const) {
    it(`is given back by the ${reason} refund: the retry is paid on it without a person, and the purchase after that is held again`, async () => {
      const { ws, s, cap, approvalId } = await approvedPurchase();
      const first = await authorizeCall(s.client, cap, ws.buyer);
      expect(usedBy(approvalId)).toBe(first.transactionId);
      expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 600n });

      clock.advance(1000);
      await s.client.payments.fail({ transactionId: first.transactionId, reason, statusCode: reason === 'provider_error' ? 502 : 400 });
      const given = await approvalOf(ws, approvalId);
      expect(given.status).toBe('approved');
      expect(given.usedAt).toBeUndefined();
      expect(usedBy(approvalId)).toBeNull();
      expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
      // the dry run agrees: the next purchase would use it
      const ev = await ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap });
      expect(ev).toMatchObject({ decision: 'allow', approvalId });

      await retryUsesItOnceMore(ws, s, cap, approvalId);
      expectPaidOnce(ws.buyer, 5000n);
    });
  }

  it('is given back once: a repeated failure report neither frees it again nor takes it from the retry', async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase();
    const first = await authorizeCall(s.client, cap, ws.buyer);
    const report = { transactionId: first.transactionId, reason: 'client_error' as const };
    const receipt = await s.client.payments.fail(report);
    expect((await s.client.payments.fail(report)).receipt.id).toBe(receipt.receipt.id);

    const retry = await authorizeCall(s.client, cap, ws.buyer);
    // the first purchase's failure reported again, after the retry used the approval
    expect((await s.client.payments.fail(report)).receipt.id).toBe(receipt.receipt.id);
    expect(usedBy(approvalId)).toBe(retry.transactionId);
    expect((await approvalOf(ws, approvalId)).usedAt).toBeDefined();
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');

    await s.client.payments.complete({ transactionId: retry.transactionId, responseHash: hashOf('{"ok":true}') });
    expectPaidOnce(ws.buyer, 5000n);
  });

  it('stays given back when the retry is refused for funds, and covers the retry after funding', async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase('600');
    const first = await authorizeCall(s.client, cap, ws.buyer);
    await s.client.payments.fail({ transactionId: first.transactionId, reason: 'provider_error' });
    await buy(s, await s.publish({ priceMinor: '100' }), ws.buyer); // not held: 500 left, short for 600

    await refusal(authorizeCall(s.client, cap, ws.buyer), 'INSUFFICIENT_FUNDS');
    expect((await approvalOf(ws, approvalId)).usedAt).toBeUndefined();
    await ws.client.wallets.fund(ws.buyer.walletId, '100');
    await retryUsesItOnceMore(ws, s, cap, approvalId);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 0n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('an approval used by a purchase nobody resolves within the in-flight time', () => {
  it("is given back by the sweeper's refund, and covers the retry once", async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase();
    const first = await authorizeCall(s.client, cap, ws.buyer);
    clock.advance(15 * MIN);
    expect(await t.gw.services.sweeper.sweepOnce()).toBeGreaterThanOrEqual(1);
    expect(usedBy(approvalId)).toBeNull();
    expect((await approvalOf(ws, approvalId)).usedAt).toBeUndefined();
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });

    await retryUsesItOnceMore(ws, s, cap, approvalId);
    // a late report on the expired purchase changes nothing
    await expect(s.client.payments.fail({ transactionId: first.transactionId, reason: 'provider_error' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');
    expectPaidOnce(ws.buyer, 5000n);
  });

  it('covers the retry already before the sweeper ran, and the later sweep does not give it back a second time', async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase();
    const first = await authorizeCall(s.client, cap, ws.buyer);
    clock.advance(15 * MIN); // past the in-flight time: a refund due, not made yet
    expect(ledgerBalance(t, ws.buyer.walletId).held).toBe(600n);
    const ev = await ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap });
    expect(ev).toMatchObject({ decision: 'allow', approvalId });

    const retry = await authorizeCall(s.client, cap, ws.buyer); // takes the approval over from the first
    expect(usedBy(approvalId)).toBe(retry.transactionId);
    expect(await t.gw.services.sweeper.sweepOnce()).toBeGreaterThanOrEqual(1); // refunds the first purchase
    expect(usedBy(approvalId)).toBe(retry.transactionId);
    expect((await approvalOf(ws, approvalId)).usedAt).toBe(new Date(clock.now()).toISOString());
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');

    await s.client.payments.complete({ transactionId: retry.transactionId, responseHash: hashOf('{"ok":true}') });
    await expect(s.client.payments.complete({ transactionId: first.transactionId, responseHash: hashOf('{"ok":true}') })).rejects.toMatchObject({ code: 'CONFLICT' });
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');
    expectPaidOnce(ws.buyer, 5000n);
  });

  it('is given back when a late complete finds the purchase expired (refunded before the sweeper ran)', async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase();
    const first = await authorizeCall(s.client, cap, ws.buyer);
    clock.advance(16 * MIN);
    await expect(s.client.payments.complete({ transactionId: first.transactionId, responseHash: hashOf('{"ok":true}') })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await approvalOf(ws, approvalId)).usedAt).toBeUndefined();
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });

    await retryUsesItOnceMore(ws, s, cap, approvalId);
    expectPaidOnce(ws.buyer, 5000n);
  });
});

describe('an approval used by a completed purchase', () => {
  it('stays used: a later failure report is refused, and the next purchase is held for a person', async () => {
    const { ws, s, cap, approvalId } = await approvedPurchase();
    const txn = await buy(s, cap, ws.buyer);
    expect(usedBy(approvalId)).toBe(txn);
    await expect(s.client.payments.fail({ transactionId: txn, reason: 'provider_error' })).rejects.toMatchObject({ code: 'CONFLICT' });
    clock.advance(16 * MIN);
    await t.gw.services.sweeper.sweepOnce();

    expect(await approvalOf(ws, approvalId)).toMatchObject({ status: 'approved', usedAt: expect.any(String) });
    expect(usedBy(approvalId)).toBe(txn);
    const next = await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED');
    expect(next.body.approvalId).not.toBe(approvalId);
    expectPaidOnce(ws.buyer, 5000n);
  });
});
