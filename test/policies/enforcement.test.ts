/**
 * Policies enforced on real purchases: a seller's authorize through the SDK, as the
 * seller middleware calls it, against a real gateway. Each test has its own workspace
 * (policies apply workspace-wide), and every refusal is checked against the database:
 * a POLICY_DENIED writes nothing at all, an APPROVAL_REQUIRED writes only its approval
 * request, and no refusal moves money.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { authorizeCall, expectLedgerConsistent, hashOf, ledgerBalance, newBuyer } from '../payments/helpers.js';
import { buy, newSeller, policyFixture, refusal, workspaceWithAgent } from './helpers.js';

const HOUR = 60 * 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 4, 12, 9, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t.close();
});

/** Runs a refused purchase and checks what it wrote: nothing but `writes`, and no money. */
async function refusedWith(code: 'POLICY_DENIED' | 'APPROVAL_REQUIRED', purchase: () => Promise<unknown>, walletId: string, writes: string[] = []) {
  const money = ledgerBalance(t, walletId);
  const before = snapshotDb(t.dataDir);
  const e = await refusal(purchase(), code);
  expect(e.status).toBe(403);
  expect(changedTables(before, snapshotDb(t.dataDir))).toEqual(writes);
  expect(ledgerBalance(t, walletId)).toEqual(money);
  return e;
}

describe('deny policies', () => {
  it('refuse a matching purchase with 403 POLICY_DENIED naming the policy and rule, and allow the others', async () => {
    const ws = await workspaceWithAgent(t);
    const [policy] = (await ws.client.policies.apply(policyFixture('deny-categories.policy'))).policies;
    const s = await newSeller(t);
    const gambling = await s.publish({ category: 'gambling' });
    const research = await s.publish({ category: 'research' });

    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, gambling, ws.buyer), ws.buyer.walletId);
    expect(e.details.matchedRule).toEqual({ policyId: policy!.id, rule: 'category in ["gambling", "adult"]' });
    expect(e.message).toContain('deny rule');

    await buy(s, research, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 100000n - 100n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('allow policies', () => {
  it('once enabled, refuse every purchase that matches no allow rule with POLICY_DENIED "no allow rule matched"', async () => {
    const ws = await workspaceWithAgent(t);
    const [policy] = (await ws.client.policies.apply(policyFixture('allow-rest-only.policy'))).policies;
    const s = await newSeller(t);
    const mcp = await s.publish({ protocol: 'mcp' });
    const beta = await s.publish({ tags: ['beta', 'nlp'] });
    const stable = await s.publish({ tags: ['nlp'] });

    for (const capabilityId of [mcp, beta]) {
      const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, capabilityId, ws.buyer), ws.buyer.walletId);
      expect(e.message).toContain('no allow rule matched');
      expect(e.details).toEqual({ allowPolicyIds: [policy!.id] });
    }
    await buy(s, stable, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 100000n - 100n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('budget policies', () => {
  it("refuse a purchase beyond the agent's daily ceiling, counting captures and open holds but not refunded calls", async () => {
    const ws = await workspaceWithAgent(t, '100000');
    const [policy] = (await ws.client.policies.apply(policyFixture('budget.policy'))).policies; // per agent 2000, per workspace 10_000
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '800' });

    await buy(s, cap, ws.buyer); // 800 captured
    const failed = await authorizeCall(s.client, cap, ws.buyer);
    await s.client.payments.fail({ transactionId: failed.transactionId, reason: 'client_error' }); // refunded: gives its 800 back
    const open = await authorizeCall(s.client, cap, ws.buyer); // 800 held, still open: 1600 spent today

    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, cap, ws.buyer), ws.buyer.walletId);
    expect(e.details).toEqual({
      matchedRule: { policyId: policy!.id, rule: 'per agent 2000 per day' },
      ceiling: 'agent', spentMinor: '1600', limitMinor: '2000', amountMinor: '800', resetsAt: '2026-05-13T00:00:00.000Z',
    });
    expect(e.message).toContain('daily budget of 2000');

    // a cheaper purchase still fits under the ceiling
    const cheap = await s.publish({ priceMinor: '400' });
    await buy(s, cheap, ws.buyer);
    await s.client.payments.complete({ transactionId: open.transactionId, responseHash: hashOf('{"ok":true}') });
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 100000n - 800n - 800n - 400n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('fit up to the ceiling exactly, and get the amount of a refunded purchase back at once', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply('budget:\n  per agent 1000 per day\n');
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const small = await s.publish({ priceMinor: '400' });

    await buy(s, big, ws.buyer); // 600
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId); // 1200 > 1000
    const open = await authorizeCall(s.client, small, ws.buyer); // exactly 1000: allowed, still open
    const full = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, small, ws.buyer), ws.buyer.walletId);
    expect(full.details).toMatchObject({ spentMinor: '1000', limitMinor: '1000', amountMinor: '400' });

    // the open call fails: its hold is refunded, and its 400 are spendable again today
    await s.client.payments.fail({ transactionId: open.transactionId, reason: 'provider_error' });
    await buy(s, small, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n - 600n - 400n, held: 0n });
    const after = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, small, ws.buyer), ws.buyer.walletId);
    expect(after.details).toMatchObject({ spentMinor: '1000' });
    expectLedgerConsistent(t);
  });

  it('start again on the next UTC calendar day', async () => {
    const ws = await workspaceWithAgent(t);
    await ws.client.policies.apply('budget:\n  per agent 1000 per day\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    clock.set(Date.UTC(2026, 4, 20, 23, 59, 0));
    await buy(s, cap, ws.buyer);
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, cap, ws.buyer), ws.buyer.walletId);
    clock.set(Date.UTC(2026, 4, 21, 0, 0, 0));
    await buy(s, cap, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 100000n - 1200n, held: 0n });
    expectLedgerConsistent(t);
  });

  it("refuse a purchase beyond the workspace's ceiling, summed over all its wallets", async () => {
    const ws = await workspaceWithAgent(t);
    const other = await newBuyer(t, ws.client, '5000');
    await ws.client.policies.apply('budget "team":\n  per workspace 1000 per day\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    await buy(s, cap, ws.buyer);
    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, cap, other), other.walletId);
    expect(e.details).toMatchObject({ ceiling: 'workspace', spentMinor: '600', limitMinor: '1000', amountMinor: '600' });
    expectLedgerConsistent(t);
  });
});

describe('approval policies', () => {
  it('hold a matching purchase with 403 APPROVAL_REQUIRED and a pending approval, reused on retry; others pass', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    const [policy] = (await ws.client.policies.apply(policyFixture('approval-over-500.policy'))).policies;
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const small = await s.publish({ priceMinor: '500' });

    const e = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    const approvalId = e.body.approvalId as string;
    expect(approvalId).toMatch(/^apr_/);
    expect(e.details).toEqual({ approvalId, matchedRule: { policyId: policy!.id, rule: 'price > 500' } });

    const { approvals } = await ws.client.approvals.list({ status: 'pending' });
    const wallet = await ws.client.wallets.get(ws.buyer.walletId);
    expect(approvals).toEqual([{
      id: approvalId, agentId: wallet.ownerId, walletId: ws.buyer.walletId, capabilityId: big, amountMinor: '600', currency: 'USD',
      rule: 'price > 500', policyId: policy!.id, status: 'pending', createdAt: new Date(clock.now()).toISOString(),
    }]);

    // the same purchase again: the same request, nothing new
    const again = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId);
    expect(again.body.approvalId).toBe(approvalId);

    await buy(s, small, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 4500n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('once approved, let exactly one later purchase through, and hold the next one again', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const held = await refusal(authorizeCall(s.client, big, ws.buyer), 'APPROVAL_REQUIRED');
    const approvalId = held.body.approvalId as string;

    const { approval } = await ws.client.approvals.approve(approvalId, { resolvedBy: 'alice' });
    expect(approval).toMatchObject({ id: approvalId, status: 'approved', resolvedBy: 'alice', resolvedAt: new Date(clock.now()).toISOString() });
    expect(approval.usedAt).toBeUndefined();

    const txn = await buy(s, big, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 4400n, held: 0n });
    expect((await ws.client.approvals.get(approvalId)).approval).toMatchObject({ status: 'approved', usedAt: new Date(clock.now()).toISOString() });
    expect(txn).toMatch(/^txn_/);

    const next = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    expect(next.body.approvalId).not.toBe(approvalId);
    expectLedgerConsistent(t);
  });

  it('keep an approval unused when the approved purchase is refused for funds, so the retry can use it', async () => {
    const ws = await workspaceWithAgent(t, '100');
    await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const approvalId = (await refusal(authorizeCall(s.client, big, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    await ws.client.approvals.approve(approvalId);
    await refusal(authorizeCall(s.client, big, ws.buyer), 'INSUFFICIENT_FUNDS');
    expect((await ws.client.approvals.get(approvalId)).approval.usedAt).toBeUndefined();
    await ws.client.wallets.fund(ws.buyer.walletId, '500');
    await buy(s, big, ws.buyer);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 0n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('once denied, never pay: the same purchase is refused with POLICY_DENIED naming the denial for 24 hours, then asked about again', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const approvalId = (await refusal(authorizeCall(s.client, big, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    const { approval } = await ws.client.approvals.deny(approvalId);
    expect(approval).toMatchObject({ status: 'denied', resolvedBy: expect.stringMatching(/^key_/) });

    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId);
    expect(e.message).toContain(`a person denied this purchase (approval ${approvalId}`);
    expect(e.details).toMatchObject({ approvalId, matchedRule: { rule: 'price > 500' }, standsUntil: new Date(clock.now() + 24 * HOUR).toISOString() });

    // a higher price is no better; a lower one is a new question for a person
    await s.client.capabilities.edit(big, { priceMinor: '900' });
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId);
    await s.client.capabilities.edit(big, { priceMinor: '550' });
    const lower = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    expect(lower.body.approvalId).not.toBe(approvalId);

    await s.client.capabilities.edit(big, { priceMinor: '600' });
    clock.advance(24 * HOUR);
    const later = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    expect(later.body.approvalId).not.toBe(approvalId);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 5000n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('do not let an approval for a lower amount cover a repriced capability; it still covers the approved amount or less', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    const approvalId = (await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    await ws.client.approvals.approve(approvalId);

    await s.client.capabilities.edit(cap, { priceMinor: '700' });
    const e = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, cap, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    expect(e.body.approvalId).not.toBe(approvalId);
    const pending = (await ws.client.approvals.list({ status: 'pending' })).approvals;
    expect(pending.map((a) => [a.id, a.amountMinor])).toEqual([[e.body.approvalId, '700']]);
    expect((await ws.client.approvals.get(approvalId)).approval.usedAt).toBeUndefined();

    await s.client.capabilities.edit(cap, { priceMinor: '550' });
    await buy(s, cap, ws.buyer);
    expect((await ws.client.approvals.get(approvalId)).approval.usedAt).toBeDefined();
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 4450n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('cannot be approved with an agent key: 403 FORBIDDEN naming approvals:write, and nothing changes', async () => {
    const ws = await workspaceWithAgent(t, '5000');
    await ws.client.policies.apply(policyFixture('approval-over-500.policy'));
    const s = await newSeller(t);
    const big = await s.publish({ priceMinor: '600' });
    const approvalId = (await refusal(authorizeCall(s.client, big, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    const agent = t.client((await ws.client.keys.create({ preset: 'agent' })).apiKey.key);

    expect((await agent.approvals.get(approvalId)).approval.status).toBe('pending'); // it may look
    const before = snapshotDb(t.dataDir);
    for (const decide of [() => agent.approvals.approve(approvalId), () => agent.approvals.deny(approvalId)]) {
      const e = await refusal(decide(), 'FORBIDDEN');
      expect(e.status).toBe(403);
      expect(e.message).toContain('approvals:write');
    }
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, big, ws.buyer), ws.buyer.walletId);
  });
});

describe('disabling and enabling a policy', () => {
  it('stops it applying from the next purchase, and starts it again', async () => {
    const ws = await workspaceWithAgent(t);
    const [policy] = (await ws.client.policies.apply(policyFixture('deny-categories.policy'))).policies;
    const s = await newSeller(t);
    const gambling = await s.publish({ category: 'gambling' });
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, gambling, ws.buyer), ws.buyer.walletId);

    expect((await ws.client.policies.disable(policy!.id)).policy.enabled).toBe(false);
    await buy(s, gambling, ws.buyer);

    expect((await ws.client.policies.enable(policy!.id)).policy.enabled).toBe(true);
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, gambling, ws.buyer), ws.buyer.walletId);
    expect(ledgerBalance(t, ws.buyer.walletId)).toEqual({ balance: 100000n - 100n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('the order deny, budget, allow, approval', () => {
  it('refuses a purchase that a deny rule matches without asking a person', async () => {
    const ws = await workspaceWithAgent(t);
    const policies = (await ws.client.policies.apply(policyFixture('research-team.policy'))).policies;
    const s = await newSeller(t);
    const pricyGambling = await s.publish({ category: 'gambling', priceMinor: '2000' });
    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, pricyGambling, ws.buyer), ws.buyer.walletId);
    expect(e.details.matchedRule).toEqual({ policyId: policies[0]!.id, rule: 'category in ["gambling", "adult"]' });
    expect((await ws.client.approvals.list()).approvals).toEqual([]);
  });

  it('refuses a purchase over budget without asking a person', async () => {
    const ws = await workspaceWithAgent(t);
    await ws.client.policies.apply('approval:\n  always\nbudget:\n  per agent 100 per day\n');
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '200' });
    const e = await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, cap, ws.buyer), ws.buyer.walletId);
    expect(e.details.ceiling).toBe('agent');
    expect((await ws.client.approvals.list()).approvals).toEqual([]);
  });

  it('holds for a person only what the other policies let through, and an approval does not lift a deny', async () => {
    const ws = await workspaceWithAgent(t);
    const [, approvalPolicy] = (await ws.client.policies.apply(policyFixture('research-team.policy'))).policies;
    const s = await newSeller(t);
    const mcpBeta = await s.publish({ protocol: 'mcp', tags: ['beta'], priceMinor: '300' });
    const e = await refusedWith('APPROVAL_REQUIRED', () => authorizeCall(s.client, mcpBeta, ws.buyer), ws.buyer.walletId, ['alert_mails', 'approvals', 'rail_events']);
    expect(e.details.matchedRule).toEqual({ policyId: approvalPolicy!.id, rule: 'protocol == "mcp" and tag "beta"' });
    await ws.client.approvals.approve(e.body.approvalId as string);
    await ws.client.policies.apply('deny:\n  tag "beta"\n');
    await refusedWith('POLICY_DENIED', () => authorizeCall(s.client, mcpBeta, ws.buyer), ws.buyer.walletId);
    expect((await ws.client.approvals.get(e.body.approvalId as string)).approval.usedAt).toBeUndefined();
  });
});

describe('POST /v1/policies/evaluate', () => {
  it('answers what a purchase would meet, with every step, and writes nothing', async () => {
    const ws = await workspaceWithAgent(t);
    const [deny, approval, budget] = (await ws.client.policies.apply(policyFixture('research-team.policy'))).policies;
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '1500' });
    const walletId = ws.buyer.walletId;

    const before = snapshotDb(t.dataDir);
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap })).toEqual({
      decision: 'approval',
      matchedRule: { policyId: approval!.id, rule: 'price > 1000' },
      reason: 'held for a person by the approval rule "price > 1000"',
      steps: [
        { policyId: deny!.id, policyType: 'deny', result: 'not_matched' },
        { policyId: budget!.id, policyType: 'budget', result: 'within' },
        { policyId: approval!.id, policyType: 'approval', result: 'matched', rule: 'price > 1000' },
      ],
    });
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap, priceMinor: '1000' })).toMatchObject({ decision: 'allow' });
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap, priceMinor: '6000' })).toMatchObject({
      decision: 'deny', matchedRule: { policyId: budget!.id, rule: 'per agent 5000 per day' },
    });
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);

    // with a pending, then an approved request: named, and not used up by the dry run
    const approvalId = (await refusal(authorizeCall(s.client, cap, ws.buyer), 'APPROVAL_REQUIRED')).body.approvalId as string;
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap })).toMatchObject({ decision: 'approval', approvalId });
    await ws.client.approvals.approve(approvalId);
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap })).toMatchObject({ decision: 'allow', approvalId });
    expect(await ws.client.policies.evaluate({ walletId, capabilityId: cap })).toMatchObject({ decision: 'allow', approvalId });
    await buy(s, cap, ws.buyer);
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 100000n - 1500n, held: 0n });
    expectLedgerConsistent(t);
  });

  it("refuses another tenant's wallet (404 WALLET_NOT_FOUND) and an unknown capability (404 CAPABILITY_NOT_FOUND)", async () => {
    const ws = await workspaceWithAgent(t);
    const other = await workspaceWithAgent(t);
    const s = await newSeller(t);
    const cap = await s.publish();
    expect((await refusal(other.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: cap }), 'WALLET_NOT_FOUND')).status).toBe(404);
    expect((await refusal(ws.client.policies.evaluate({ walletId: ws.buyer.walletId, capabilityId: 'cap_nope' }), 'CAPABILITY_NOT_FOUND')).status).toBe(404);
  });
});
