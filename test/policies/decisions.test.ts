/**
 * Decisions the policy engine takes on a real gateway with a hand-moved clock (the sweeper
 * far away, so only the authorization decides): a purchase both approved and denied by a
 * person, calls past their in-flight time in budgets, and the order of policies applied
 * in the same millisecond.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, ledgerBalance, newBuyer } from '../payments/helpers.js';
import { buy, newSeller, refusal, workspaceWithAgent, type Seller } from './helpers.js';

const MIN = 60_000;
const clock = new ManualClock(Date.UTC(2026, 4, 12, 9, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock, config: { sweepIntervalMs: 20 * MIN } });
});
afterAll(async () => {
  await t.close();
});

describe('a purchase both approved and denied by a person', () => {
  /**
   * Two pending requests of one purchase, at 600 then at 700 (the seller raised the price);
   * the capability is back at 600 when `decide` has run. Both the approval of the 700 and the
   * denial of the 600 cover a purchase at 600 or 700.
   */
  async function approvedAndDenied(decide: (ids: { a600: string; a700: string }, ws: Awaited<ReturnType<typeof workspaceWithAgent>>) => Promise<void>) {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply('approval:\n  price > 500\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    const a600 = (await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    await s.client.capabilities.edit(cap, { priceMinor: '700' });
    const a700 = (await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    await decide({ a600, a700 }, ws);
    await s.client.capabilities.edit(cap, { priceMinor: '600' });
    return { ws, s, cap, a600, a700 };
  }

  const dryRun = (ws: Awaited<ReturnType<typeof workspaceWithAgent>>, cap: string, priceMinor: string) =>
    ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap, priceMinor });

  it('refuses it when the denial came last, at the denied price and above, and pays nothing', async () => {
    const { ws, s, cap, a600 } = await approvedAndDenied(async ({ a600, a700 }, ws) => {
      await ws.client.approvals.approve(a700, { resolvedBy: 'alice' });
      clock.advance(MIN);
      await ws.client.approvals.deny(a600, { resolvedBy: 'bob' });
    });
    expect(await dryRun(ws, cap, '600')).toMatchObject({ decision: 'deny', approvalId: a600 });
    expect(await dryRun(ws, cap, '700')).toMatchObject({ decision: 'deny', approvalId: a600 });
    const e = await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(e.details).toMatchObject({ approvalId: a600 });
    await s.client.capabilities.edit(cap, { priceMinor: '700' });
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('refuses it when both were decided at the same instant: the denial wins a tie', async () => {
    const { ws, s, cap, a600 } = await approvedAndDenied(async ({ a600, a700 }, ws) => {
      await ws.client.approvals.approve(a700);
      await ws.client.approvals.deny(a600);
    });
    expect(await dryRun(ws, cap, '600')).toMatchObject({ decision: 'deny', approvalId: a600 });
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
  });

  it('lets one purchase through on the approval when it came last, then the denial stands again', async () => {
    const { ws, s, cap, a700 } = await approvedAndDenied(async ({ a600, a700 }, ws) => {
      await ws.client.approvals.deny(a600);
      clock.advance(MIN);
      await ws.client.approvals.approve(a700);
    });
    expect(await dryRun(ws, cap, '600')).toMatchObject({ decision: 'allow', approvalId: a700 });
    await buy(s, cap, ws.buyer);
    expect((await ws.client.approvals.get(a700)).approval.usedAt).toBeDefined();
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 4400n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('budgets and calls past their in-flight time', () => {
  /** An authorized call its seller never completes, then the in-flight time (15 minutes) runs out; no sweep. */
  async function expiredCall(s: Seller, cap: string, buyer: Awaited<ReturnType<typeof newBuyer>>) {
    await authorizeCall(s.client, cap, buyer);
    clock.advance(16 * MIN);
  }

  it("give the agent's budget back before the sweeper refunds them, in the dry run and at authorization", async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply('budget:\n  per agent 1000 per day\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    await expiredCall(s, cap, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId).held).toBe(600n); // not refunded yet

    const ev = await ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap });
    expect(ev.decision, ev.reason).toBe('allow');
    const second = await authorizeCall(s.client, cap, ws.buyer);
    expect(second.status).toBe('authorized');
    // the open second call counts: a third would take the day to 1200
    const e = await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(e.details).toMatchObject({ ceiling: 'agent', spentMinor: '600', limitMinor: '1000' });

    // once swept, its refund gives the same amount back: nothing changes
    await t.gw.services.sweeper.sweepOnce();
    await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 600n });
    expectLedgerConsistent(t);
  });

  it("give the workspace ceiling back, whichever of the workspace's wallets made them", async () => {
    const ws = await workspaceWithAgent(t, '5000');
    const other = await newBuyer(t, ws.client, '5000');
    await ws.client.policies.apply('budget:\n  per workspace 1000 per day\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    await expiredCall(s, cap, other);

    const ev = await ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap });
    expect(ev.decision, ev.reason).toBe('allow');
    expect((await authorizeCall(s.client, cap, ws.buyer)).status).toBe('authorized');
    expect(ledgerBalance(t, other.walletId).held).toBe(600n); // still unswept: only the budget treats it as given back
    expectLedgerConsistent(t);
  });
});

describe('policies applied in the same millisecond', () => {
  it('keep the order they were applied in, each document in document order, in the list and in evaluation', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    const first = (await ws.client.policies.apply('deny "A1":\n  category == "nope"\ndeny "A2":\n  price > 100\n')).policies;
    const second = (await ws.client.policies.apply('deny "B1":\n  price > 100\ndeny "B2":\n  price > 100\n')).policies;
    expect(new Set([...first, ...second].map((p) => p.createdAt)).size).toBe(1); // the clock did not move

    const listed = (await ws.client.policies.list()).policies;
    expect(listed.map((p) => p.name)).toEqual(['A1', 'A2', 'B1', 'B2']);

    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '200' });
    const a2 = first[1]!.id;
    const ev = await ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap });
    expect(ev.steps.map((x) => x.policyId)).toEqual(listed.map((p) => p.id));
    expect(ev.matchedRule).toEqual({ policyId: a2, rule: 'price > 100' });
    const e = await refusal(authorizeCall(s.client, cap, ws.buyer), 'POLICY_DENIED');
    expect(e.details.matchedRule).toEqual({ policyId: a2, rule: 'price > 100' });
  });
});
