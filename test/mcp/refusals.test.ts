/**
 * What the paying MCP client reports, and what the seller wrapper does, when a paid tool
 * call does not simply succeed: every refusal is a typed AgentpayError, the tool does not
 * run before authorization, and no money moves except where the payment happened.
 * The tools run in this process (in-memory MCP transport) against a real HTTPS gateway.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, type BuyerOptions } from '../../packages/sdk/src/buyer/index.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { CAPABILITY_META, ERROR_META, PAYMENT_META, RECEIPT_META, STATUS_META } from '../../packages/sdk/src/mcp/protocol.js';
import { createSellerPayments, paidToolCallback, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../e2e/helpers.js';
import { weatherServer } from './fixtures/weather.js';
import { connectInMemory, money, moved, publishPackageCapability, type Connected } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
let seller: SellerPayments;
let c: Connected;
const runs: Record<string, number> = {};

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, '100');
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca });
  c = await connectInMemory(weatherServer(seller, capabilityId, runs));
});
afterAll(async () => {
  await c?.close();
  await t?.close();
});

const buyerFor = (a: Pick<AgentWallet, 'walletId' | 'privateKeyPem'>, extra: Partial<BuyerOptions> = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, ...extra });

const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e as AgentpayError);

const NOTHING = { buyer: '0', seller: '0', platform: '0' };
const SALE = { buyer: '-100', seller: '97', platform: '3' };

/** Runs `fn` and checks that no tool ran and no money moved. */
async function expectNothingCharged(walletId: string, fn: () => Promise<void>, ws: AgentpayClient = t.workspace): Promise<void> {
  const before = await money(t, walletId, ws);
  const ranBefore = { ...runs };
  await fn();
  expect(runs).toEqual(ranBefore);
  expect(await moved(t, walletId, before, ws)).toEqual(NOTHING);
  await expectLedgerConsistent(ws, walletId);
}

describe('registerPaidTool', () => {
  it('lists a paid tool with the capability it sells in its _meta, and a free tool without', async () => {
    const { tools } = await c.client.listTools();
    expect(tools.find((x) => x.name === 'forecast')?._meta).toEqual({ [CAPABILITY_META]: capabilityId });
    expect(tools.find((x) => x.name === 'ping')?._meta).toBeUndefined();
  });

  it('passes a gateway refusal of the proof back as a tool error with its status, without running the tool (replayed proof)', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    const before = await money(t, a.walletId);
    const asked = (await c.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
    const challenge = await buyer.payer.verifiedChallenge(asked._meta?.[ERROR_META]);
    const proof = await buyer.payer.signProof(challenge!);

    const paid = (await c.client.callTool({ name: 'forecast', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } })) as CallToolResult;
    expect(paid._meta?.[RECEIPT_META]).toMatchObject({ status: 'success' });
    const ranAfterFirst = runs.forecast;
    const replay = (await c.client.callTool({ name: 'forecast', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } })) as CallToolResult;
    expect(replay).toMatchObject({ isError: true, _meta: { [STATUS_META]: 409 } });
    expect(JSON.parse((replay.content[0] as { text: string }).text)).toMatchObject({ error: { code: 'REPLAY_DETECTED' } });
    expect(runs.forecast).toBe(ranAfterFirst);
    expect(await moved(t, a.walletId, before)).toEqual(SALE); // the first use only
  });

  it('fails structured content that breaks the outputSchema as provider_error instead of selling it', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const { result, receipt } = await payingCallTool(c.client, buyerFor(a), { name: 'bad-output', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^Output validation error/);
    expect(receipt).toMatchObject({ status: 'failed' });
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
  });

  it('answers GATEWAY_UNAVAILABLE (503) when the seller cannot reach its gateway; nothing charged', async () => {
    const errors: string[] = [];
    const unreachable = createSellerPayments({ gatewayUrl: 'https://127.0.0.1:9', apiKey: 'k', onError: (_e, ctx) => errors.push(ctx.stage) });
    const cut = await connectInMemory(weatherServer(unreachable, capabilityId, runs));
    try {
      const a = await fundedAgent(t, '1000');
      await expectNothingCharged(a.walletId, async () => {
        const e = await refusal(payingCallTool(cut.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }));
        expect(e).toBeInstanceOf(AgentpayError);
        expect(e).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', status: 503 });
      });
      expect(errors).toEqual(['challenge']);
    } finally {
      await cut.close();
    }
  });
});

describe('payingCallTool', () => {
  it('returns a free tool result as is, with no receipt and no challenge', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const call = await payingCallTool(c.client, buyerFor(a), { name: 'ping', arguments: {} });
    expect(call).toMatchObject({ result: { content: [{ type: 'text', text: 'pong' }] }, receipt: null, challenge: null });
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
  });

  it('reports INSUFFICIENT_FUNDS (402) from the gateway; the tool does not run, nothing charged', async () => {
    const a = await fundedAgent(t, '50');
    await expectNothingCharged(a.walletId, async () => {
      const e = await refusal(payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }));
      expect(e).toBeInstanceOf(AgentpayError);
      expect(e).toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 402 });
    });
  });

  it('reports CANCELLED for an aborted signal before calling anything', async () => {
    const a = await fundedAgent(t, '1000');
    await expectNothingCharged(a.walletId, async () => {
      const e = await refusal(payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }, { signal: AbortSignal.abort() }));
      expect(e).toMatchObject({ code: 'CANCELLED' });
    });
  });

  it('refuses a challenge the platform did not sign with INVALID_CHALLENGE; nothing signed', async () => {
    const forger = new McpServer({ name: 'forger', version: '1' });
    forger.registerTool('forecast', {}, async () => {
      const real = await t.provider.payments.challenge(capabilityId);
      const envelope = { error: { code: 'PAYMENT_REQUIRED', message: 'pay' }, challenge: { ...real, amountMinor: '1' } };
      return { content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope, isError: true, _meta: { [STATUS_META]: 402 } };
    });
    const forged = await connectInMemory(forger);
    try {
      const a = await fundedAgent(t, '1000');
      let signed = 0;
      await expectNothingCharged(a.walletId, async () => {
        const e = await refusal(payingCallTool(forged.client, buyerFor(a, { privateKeyPem: undefined, signer: () => { signed++; return 'x'; } }), { name: 'forecast' }));
        expect(e).toMatchObject({ code: 'INVALID_CHALLENGE' });
      });
      expect(signed).toBe(0);
    } finally {
      await forged.close();
    }
  });

  it('refuses a receipt that does not cover the result received with INVALID_RECEIPT (the payment happened)', async () => {
    const tamper = new McpServer({ name: 'tamper', version: '1' });
    const sold = paidToolCallback<undefined>(async () => ({ content: [{ type: 'text' as const, text: 'what was hashed' }] }), { seller, capabilityId });
    tamper.registerTool('forecast', {}, async (extra) => {
      const r = await sold(extra);
      return r._meta?.[RECEIPT_META] ? { ...r, content: [{ type: 'text', text: 'changed after hashing' }] } : r;
    });
    const tampered = await connectInMemory(tamper);
    try {
      const a = await fundedAgent(t, '1000');
      const before = await money(t, a.walletId);
      const e = await refusal(payingCallTool(tampered.client, buyerFor(a), { name: 'forecast' }));
      expect(e).toMatchObject({ code: 'INVALID_RECEIPT', message: expect.stringContaining('responseHash mismatch') });
      expect(e.body.receipt).toMatchObject({ status: 'success', consumerId: a.walletId });
      expect(await moved(t, a.walletId, before)).toEqual(SALE);
    } finally {
      await tampered.close();
    }
  });

  describe('approvals', () => {
    let ws: { id: string; apiKey: string; client: AgentpayClient };
    let agent: AgentpayClient;
    beforeAll(async () => {
      ws = await t.newWorkspace('MCP approvals');
      await ws.client.policies.apply('approval "over 50":\n  price > 50\n');
      agent = t.client((await ws.client.keys.create({ preset: 'agent' })).apiKey.key);
    });
    const held = async () => {
      const a = await t.newAgentWallet(ws.client, `agent-${Math.random().toString(36).slice(2, 8)}`);
      await ws.client.wallets.fund(a.walletId, '1000');
      return a;
    };

    it('reports APPROVAL_REQUIRED with the approval id; the tool does not run, nothing charged', async () => {
      const a = await held();
      await expectNothingCharged(a.walletId, async () => {
        const e = await refusal(payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }));
        expect(e).toMatchObject({ code: 'APPROVAL_REQUIRED', status: 403 });
        expect(e.body.approvalId).toMatch(/^apr_/);
      }, ws.client);
    });

    it('waits for a person with `approval`, and reports APPROVAL_DENIED after a denial; nothing charged', async () => {
      const a = await held();
      await expectNothingCharged(a.walletId, async () => {
        const e = await refusal(payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }, {
          approval: { approvals: agent, pollMs: 20, onPending: (id) => void ws.client.approvals.deny(id, { resolvedBy: 'bob' }) },
        }));
        expect(e).toMatchObject({ code: 'APPROVAL_DENIED', details: { resolvedBy: 'bob' } });
      }, ws.client);
    });

    it('retries once after a person approves, and pays', async () => {
      const a = await held();
      const before = await money(t, a.walletId, ws.client);
      const { receipt } = await payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }, {
        approval: { approvals: agent, pollMs: 20, onPending: (id) => void ws.client.approvals.approve(id, { resolvedBy: 'alice' }) },
      });
      expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId });
      expect(await moved(t, a.walletId, before, ws.client)).toEqual(SALE);
      await expectLedgerConsistent(ws.client, a.walletId);
    });
  });
});
