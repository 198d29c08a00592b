/**
 * wrapMcpClient: an @modelcontextprotocol/sdk Client that an agent framework already holds
 * pays through its own callTool. The fixture MCP server over streamable HTTP on 127.0.0.1
 * sells its tools through a real HTTPS gateway; the framework's code calls `client.callTool`
 * as it always did. A sale moves buyer −100, seller +97, platform +3; refusals move nothing.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, type BuyerOptions } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool, wrapMcpClient, type PaidToolCall } from '../../packages/sdk/src/mcp/buyer.js';
import { RECEIPT_META, resultBytes } from '../../packages/sdk/src/mcp/protocol.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, sha256, type AgentWallet } from '../e2e/helpers.js';
import { connectHttp, money, moved, PACKAGE_ADDRESS, publishPackageCapability, type Connected } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
/** a capability priced 150, above the default ceiling */
let dearId: string;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, '100');
  ({ capability: { id: dearId } } = await t.provider.capabilities.publish({
    name: 'Dear weather MCP', description: 'paid weather forecasts, dearer', protocol: 'mcp', toolName: 'forecast', priceMinor: '150', category: 'weather',
    address: { ...PACKAGE_ADDRESS, args: [...PACKAGE_ADDRESS.args] },
  }));
});
afterAll(async () => {
  await t?.close();
});

const buyerFor = (a: AgentWallet, extra: Partial<BuyerOptions> = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, ...extra });
const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e as AgentpayError);

async function expectReceiptVerifies(receipt: Receipt, result: CallToolResult): Promise<void> {
  const { publicKeyPem } = await t.workspace.platform.receiptKey(receipt.signingKeyId);
  expect(await verifyObject(publicKeyPem, receipt as unknown as Record<string, unknown>)).toBe(true);
  expect(receipt.responseHash).toBe(sha256(resultBytes(result)));
}

const SALE = { buyer: '-100', seller: '97', platform: '3' };
const NOTHING = { buyer: '0', seller: '0', platform: '0' };

describe('wrapMcpClient', () => {
  let c: Connected;
  const runs: Record<string, number> = {};
  beforeAll(async () => {
    c = await connectHttp(t, capabilityId, runs);
  });
  afterAll(async () => {
    await c?.close();
  });

  it("makes the client's own callTool pay a paid tool: the result as the tool gave it, its verified receipt, the ledger moved", async () => {
    const a = await fundedAgent(t, '1000');
    const paid: (PaidToolCall & { tool: string })[] = [];
    const client = wrapMcpClient(c.client, buyerFor(a), { onPaid: (call) => paid.push(call) });
    expect(client).toBe(c.client);
    const before = await money(t, a.walletId);

    // what a framework does with the client it was handed: nothing agentpay-specific
    const result = (await c.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'Faro', sunny: true, tempC: 21.5 });
    const receipt = result._meta?.[RECEIPT_META] as Receipt;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, amount: { amountMinor: '100', currency: 'USD' } });
    await expectReceiptVerifies(receipt, result);
    expect(paid).toEqual([expect.objectContaining({ tool: 'forecast', receipt, challenge: expect.objectContaining({ amountMinor: '100' }) })]);
    expect(await moved(t, a.walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, a.walletId);

    // a free tool's call is unchanged; a paid tool error comes back with its failed receipt (refunded)
    expect(await c.client.callTool({ name: 'ping', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'pong' }] });
    const failed = (await c.client.callTool({ name: 'flaky', arguments: {} })) as CallToolResult;
    expect(failed).toMatchObject({ isError: true, _meta: { [RECEIPT_META]: { status: 'failed' } } });
    expect(await moved(t, a.walletId, before)).toEqual(SALE);

    // wrapping again does nothing (no second payment layer); payingCallTool on the wrapped client still returns the receipt
    expect(wrapMcpClient(c.client, buyerFor(a))).toBe(c.client);
    const again = await payingCallTool(c.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Porto' } });
    expect(again.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '100' } });
    expect((await moved(t, a.walletId, before)).buyer).toBe('-200');
    expect(runs.forecast).toBe(2);
  });

  it('rejects a refusal with an AgentpayError (a ceiling below the price): nothing signed, the tool not run', async () => {
    const a = await fundedAgent(t, '1000');
    const conn = await connectHttp(t, capabilityId, runs);
    try {
      wrapMcpClient(conn.client, buyerFor(a, { maxPriceMinor: '99' }));
      const before = await money(t, a.walletId);
      const ran = runs.forecast ?? 0;
      const e = await refusal(conn.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } }));
      expect(e).toBeInstanceOf(AgentpayError);
      expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99' } });
      expect(runs.forecast ?? 0).toBe(ran);
      expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    } finally {
      await conn.close();
    }
  });
});

describe('the MCP buyer: the default price ceiling', () => {
  it('refuses 150 when no ceiling was set (default 100), with payingCallTool and a wrapped client; raised, it pays', async () => {
    const a = await fundedAgent(t, '1000');
    const conn = await connectHttp(t, dearId);
    try {
      const before = await money(t, a.walletId);
      const e = await refusal(payingCallTool(conn.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }));
      expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '150', maxPriceMinor: '100', defaultLimit: true } });
      expect(await moved(t, a.walletId, before)).toEqual(NOTHING);

      // raised for one call, then for the wrapped client
      const one = await payingCallTool(conn.client, buyerFor(a), { name: 'forecast', arguments: { city: 'Faro' } }, { maxPriceMinor: '150' });
      expect(one.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '150' } });
      wrapMcpClient(conn.client, buyerFor(a), { maxPriceMinor: '150' });
      const result = (await conn.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
      expect(result._meta?.[RECEIPT_META]).toMatchObject({ status: 'success', amount: { amountMinor: '150' } });
      expect((await moved(t, a.walletId, before)).buyer).toBe('-300');
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await conn.close();
    }
  });
});
