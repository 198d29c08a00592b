/**
 * A paid MCP tool on a metered capability (docs/protocol.md § Metered prices) reports what a call
 * used with `paidToolCallOf(extra)?.charge(units)`: the buyer authorized the maximum (unit price ×
 * maxUnits), the call is charged units × unit price, and the rest goes back to the buyer, per call
 * and in a session (the claim takes what the calls used, not the vouchers' maximum). A framework's
 * MCP Client wrapped with wrapMcpClient over the in-memory transport; the real HTTPS test gateway on
 * the backend of the run; the ledger checked after each case.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { wrapMcpClient } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments, paidToolCallOf, registerPaidTool, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { RECEIPT_META } from '../../packages/sdk/src/mcp/protocol.js';
import type { Receipt } from '../../packages/sdk/src/protocol.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent } from '../e2e/helpers.js';
import { money } from './helpers.js';

const METERING = { unit: 'word', unitPriceMinor: '2', maxUnits: '50' };
/** 3% rounded down */
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
let perCall: SellerPayments;
let sessions: SellerPayments;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  const { capability } = await t.provider.capabilities.publish({
    name: 'Word counter (metered)', description: 'charged per word counted', protocol: 'mcp', toolName: 'count', priceMinor: '100', category: 'text',
    endpoint: 'https://127.0.0.1/mcp', metering: METERING,
  });
  capabilityId = capability.id;
  const opts = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} };
  perCall = createSellerPayments(opts);
  sessions = createSellerPayments({ ...opts, sessions: { claimEvery: 1_000_000 } });
});
afterAll(async () => {
  await sessions?.close?.();
  await t?.close();
});

/** A server with the paid `count` tool (charges one unit per word) and a client connected to it. */
async function connected(seller: SellerPayments): Promise<Client> {
  const mcp = new McpServer({ name: 'seller', version: '1' });
  registerPaidTool(mcp, 'count', { seller, capabilityId, inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    const words = text.split(' ').filter(Boolean).length;
    paidToolCallOf(extra)?.charge?.(words);
    return { content: [{ type: 'text', text: String(words) }] };
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: 'buyer', version: '1' });
  await client.connect(b);
  return client;
}

async function expectMoved(walletId: string, before: Awaited<ReturnType<typeof money>>, paid: bigint, fees: bigint): Promise<void> {
  expect(await money(t, walletId)).toEqual({ buyer: before.buyer - paid, seller: before.seller + paid - fees, platform: before.platform + fees });
  const b = await t.workspace.wallets.balance(walletId);
  expect(b.availableMinor).toBe(b.balanceMinor); // nothing held
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

describe('a metered paid MCP tool', () => {
  it('per call: charges the words counted × 2, not the 100 authorized; the receipt states the usage', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '100', sessions: { prefer: 'per-call' } });
    const client = wrapMcpClient(await connected(perCall), buyer);
    const r = (await client.callTool({ name: 'count', arguments: { text: 'agents pay for what they use' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.content).toEqual([{ type: 'text', text: '6' }]);
    const receipt = r._meta?.[RECEIPT_META] as Receipt & { usage?: unknown };
    expect(receipt).toMatchObject({ status: 'success', amount: { amountMinor: '12', currency: 'USD' } });
    expect(receipt.usage).toMatchObject({ unit: 'word', units: '6', unitPriceMinor: '2', authorizedMinor: '100' });
    await expectMoved(a.walletId, before, 12n, fee(12n));
    await client.close();
  });

  it('in a session: each call charges its words × 2; the claim at close takes 2 × all the words, the rest of the cap goes back', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '100', sessions: { capMinor: '500' } });
    const client = wrapMcpClient(await connected(sessions), buyer);
    const texts = ['one', 'one two', 'one two three', 'one two three four'];
    for (const text of texts) {
      const r = (await client.callTool({ name: 'count', arguments: { text } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
    }
    const opened = (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === a.walletId);
    expect(opened).toHaveLength(1);
    await buyer.close();
    const [closed] = (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === a.walletId);
    // 1 + 2 + 3 + 4 words at 2 each
    expect(closed).toMatchObject({ status: 'closed', claimedMinor: '20', heldMinor: '0' });
    await expectMoved(a.walletId, before, 20n, fee(20n));
    await client.close();
  });
});
