/**
 * The buyer client's `fetchWithApproval` against a real gateway and a real fastify
 * seller: a purchase an approval rule holds waits for a person's decision, is retried
 * exactly once after an approval, and ends in APPROVAL_DENIED after a denial. Every
 * case checks the wallet and the ledger afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent as expectAllLedgersConsistent, ledgerBalance } from '../payments/helpers.js';
import { expectLedgerConsistent, fetchTrusting, publish, startFastifySeller, type RunningSeller } from '../e2e/helpers.js';
import { refusal } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;
let ws: { id: string; apiKey: string; client: AgentpayClient };
/** an agent key: it can read approvals but not decide them */
let agent: AgentpayClient;
let sellerFetch: typeof fetch;

beforeAll(async () => {
  t = await startTestGateway();
  // /forecast costs 100 and is held for a person; /cheap costs 1 and is not
  seller = await startFastifySeller(t, { price100: await publish(t, '100'), price1: await publish(t, '1') });
  sellerFetch = fetchTrusting(t.ca);
  ws = await t.newWorkspace('Buyer Approvals');
  await ws.client.policies.apply('approval "over 50":\n  price > 50\n');
  agent = t.client((await ws.client.keys.create({ preset: 'agent' })).apiKey.key);
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

/** A funded agent wallet of the workspace and its buyer. */
async function agentBuyer(fundMinor = '1000') {
  const a = await t.newAgentWallet(ws.client, `agent-${Math.random().toString(36).slice(2, 8)}`);
  await ws.client.wallets.fund(a.walletId, fundMinor);
  const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: sellerFetch });
  return { walletId: a.walletId, buyer };
}

describe('buyer.fetchWithApproval', () => {
  it('waits while the purchase is held, retries once after a person approves, and pays; the next purchase is held again', async () => {
    const { walletId, buyer } = await agentBuyer();
    const handled = seller.log.handled.forecast ?? 0;
    let pendingId: string | undefined;
    let statusSeenWhilePending: string | undefined;

    const res = await buyer.fetchWithApproval(`${seller.url}/forecast`, undefined, {
      approvals: agent,
      pollMs: 20,
      onPending: (id) => {
        pendingId = id;
        // a person decides a little later, while the helper polls
        setTimeout(() => {
          void ws.client.approvals.get(id).then(({ approval }) => {
            statusSeenWhilePending = approval.status;
            return ws.client.approvals.approve(id, { resolvedBy: 'alice' });
          });
        }, 100);
      },
    });

    expect(pendingId).toMatch(/^apr_/);
    expect(statusSeenWhilePending).toBe('pending');
    expect(res.status).toBe(200);
    expect(res.receipt).toMatchObject({ status: 'success', consumerId: walletId, amount: { amountMinor: '100', currency: 'USD' } });
    expect(seller.log.handled.forecast).toBe(handled + 1);
    expect((await ws.client.approvals.get(pendingId!)).approval).toMatchObject({ status: 'approved', resolvedBy: 'alice', usedAt: expect.any(String) });
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 900n, held: 0n });

    // the approval is used up: the same purchase again is a new question for a person
    const again = await refusal(buyer.fetch(`${seller.url}/forecast`), 'APPROVAL_REQUIRED');
    expect(again.body.approvalId).toMatch(/^apr_/);
    expect(again.body.approvalId).not.toBe(pendingId);
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 900n, held: 0n });
    await expectLedgerConsistent(ws.client, walletId);
    expectAllLedgersConsistent(t);
  });

  it('throws APPROVAL_DENIED when a person denies, never pays, and the purchase stays refused', async () => {
    const { walletId, buyer } = await agentBuyer();
    const handled = seller.log.handled.forecast ?? 0;
    let pendingId = '';

    const e = await refusal(buyer.fetchWithApproval(`${seller.url}/forecast`, undefined, {
      approvals: agent,
      pollMs: 20,
      onPending: (id) => {
        pendingId = id;
        void ws.client.approvals.deny(id, { resolvedBy: 'bob' });
      },
    }), 'APPROVAL_DENIED');
    // how long the denial stands comes from the approval record, not from the SDK (the gateway's refusal below says the same)
    const { approval } = await ws.client.approvals.get(pendingId);
    expect(Date.parse(approval.standsUntil!)).toBeGreaterThan(Date.parse(approval.resolvedAt!));
    expect(e.details).toEqual({ approvalId: pendingId, resolvedBy: 'bob', standsUntil: approval.standsUntil });
    expect(e.message).toContain('nothing was charged');
    expect(e.message).toContain(`the denial stands until ${approval.standsUntil}`);
    expect(e.message).not.toMatch(/\d+ hours/);
    expect(seller.log.handled.forecast ?? 0).toBe(handled);
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 1000n, held: 0n });

    // the denial stands: a plain retry is refused by the gateway, still without paying
    const retry = await refusal(buyer.fetch(`${seller.url}/forecast`), 'POLICY_DENIED');
    expect(retry.details).toMatchObject({ approvalId: pendingId, standsUntil: approval.standsUntil });
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 1000n, held: 0n });
    await expectLedgerConsistent(ws.client, walletId);
    expectAllLedgersConsistent(t);
  });

  it('gives up after timeoutMs with APPROVAL_REQUIRED and the approval id, leaving the approval pending and nothing charged', async () => {
    const { walletId, buyer } = await agentBuyer();
    const e = await refusal(buyer.fetchWithApproval(`${seller.url}/forecast`, undefined, { approvals: agent, pollMs: 20, timeoutMs: 150 }), 'APPROVAL_REQUIRED');
    const approvalId = String(e.body.approvalId);
    expect(approvalId).toMatch(/^apr_/);
    expect(e.message).toContain('still pending');
    expect((await ws.client.approvals.get(approvalId)).approval.status).toBe('pending');
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 1000n, held: 0n });
    await expectLedgerConsistent(ws.client, walletId);
  });

  it('stops waiting with CANCELLED when its signal aborts, nothing charged', async () => {
    const { walletId, buyer } = await agentBuyer();
    const ac = new AbortController();
    const e = await refusal(buyer.fetchWithApproval(`${seller.url}/forecast`, undefined, {
      approvals: agent, pollMs: 20, signal: ac.signal, onPending: () => setTimeout(() => ac.abort(), 50),
    }), 'CANCELLED');
    expect(e).toBeInstanceOf(AgentpayError);
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 1000n, held: 0n });
    await expectLedgerConsistent(ws.client, walletId);
  });

  it('pays at once, with no approval, for a purchase no rule holds', async () => {
    const { walletId, buyer } = await agentBuyer();
    const res = await buyer.fetchWithApproval(`${seller.url}/cheap`, undefined, { approvals: agent, pollMs: 20 });
    expect(res.receipt?.status).toBe('success');
    expect((await ws.client.approvals.list()).approvals.filter((a) => a.walletId === walletId)).toEqual([]);
    expect(ledgerBalance(t, walletId)).toEqual({ balance: 999n, held: 0n });
    await expectLedgerConsistent(ws.client, walletId);
  });
});
