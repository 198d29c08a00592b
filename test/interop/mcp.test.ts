/**
 * Issue 18, MCP: a paid tool (registerPaidTool) also answers in the MPP MCP transport's
 * convention, so that mppx's own MCP client (McpClient.wrap, mppx 0.11.0) with our `agentpay`
 * method pays it: payment required in the result's `_meta["org.paymentauth/payment-required"]`,
 * the credential in `_meta["org.paymentauth/credential"]`, the receipt in
 * `_meta["org.paymentauth/receipt"]` (our signed receipt inside) beside `agentpay/receipt`.
 * x402's MCP convention (specs/transports-v2/mcp.md): the unpaid answer is `isError` with the x402
 * v2 PaymentRequired as structuredContent and as content[0].text (our envelope moves to
 * `_meta["agentpay/error"]`); a PaymentPayload in `_meta["x402/payment"]` pays and is answered
 * with `_meta["x402/payment-response"]`. Driven with @x402/core's schemas and x402Client, as
 * @x402/mcp's client does (@x402/mcp is not published on npm). In-memory MCP transport, real
 * HTTPS gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { isPaymentRequired, parsePaymentRequired } from '@x402/core/schemas';
import type { PaymentRequired } from '@x402/core/types';
import { McpClient } from 'mppx/mcp/client';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentpayMppx } from '../../packages/sdk/src/interop/mppx.js';
import { createAgentpayX402Scheme } from '../../packages/sdk/src/interop/x402.js';
import { MPP_CLIENT_HINT, X402_CLIENT_HINT } from '../../packages/sdk/src/interop/wire.js';
import { createSellerPayments, registerPaidTool, resultBytes, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import type { PriceChallenge, Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish } from '../e2e/helpers.js';

let t: TestGateway;
let seller: SellerPayments;
let capabilityId: string;
/** how many times the paid tool's handler ran */
let ran = 0;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100', 'Summarize tool');
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca });
});
afterAll(async () => {
  await t?.close();
});

async function connected(): Promise<Client> {
  const mcp = new McpServer({ name: 'seller', version: '1' });
  registerPaidTool(mcp, 'summarize', { seller, capabilityId, inputSchema: { text: z.string() } }, async ({ text }) => {
    ran++;
    return { content: [{ type: 'text', text: text.split(' ').slice(0, 2).join(' ') }] };
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: 'buyer', version: '1' });
  await client.connect(b);
  return client;
}

async function balances(walletId: string) {
  return {
    buyer: BigInt((await t.workspace.wallets.balance(walletId)).balanceMinor),
    seller: BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor),
    platform: await platformRevenue(t),
  };
}

async function expectMoved(walletId: string, before: Awaited<ReturnType<typeof balances>>) {
  const after = await balances(walletId);
  expect([before.buyer - after.buyer, after.seller - before.seller, after.platform - before.platform]).toEqual([100n, 97n, 3n]);
  await expectLedgerConsistent(t.workspace, walletId);
}

describe('a paid tool in the MPP MCP convention', () => {
  it('an unpaid call carries our envelope in _meta["agentpay/error"] and the Payment challenge in _meta["org.paymentauth/payment-required"]', async () => {
    const client = await connected();
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'a b c' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    const ours = r._meta?.['agentpay/error'] as { error: { code: string }; challenge: PriceChallenge };
    expect(ours.error.code).toBe('PAYMENT_REQUIRED');
    expect(r._meta?.['org.paymentauth/payment-required']).toMatchObject({
      httpStatus: 402,
      challenges: [{ id: ours.challenge.nonce, method: 'agentpay', intent: 'charge', request: { amount: '100', currency: 'usd', methodDetails: { challenge: ours.challenge } } }],
    });
    await client.close();
  });

  it("mppx's McpClient with the agentpay method buys one call: 100 / 97 / 3, our signed receipt in the MPP receipt", async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const client = await connected();
    const ap = agentpayMppx({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });
    McpClient.wrap(client, { methods: [ap.method] });
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'one two three' } })) as CallToolResult & { receipt?: { receipt: Receipt; status: string; method: string } };
    expect(r.isError).toBeFalsy();
    expect(r.content).toEqual([{ type: 'text', text: 'one two' }]);
    expect(r.receipt).toMatchObject({ status: 'success', method: 'agentpay' });
    expect(r._meta?.['agentpay/receipt']).toEqual(r.receipt!.receipt);
    const challenge = { capabilityId, providerId: r.receipt!.receipt.providerId, amountMinor: '100', currency: 'USD' } as PriceChallenge;
    expect(await ap.payer.verifiedReceipt(r.receipt!.receipt, resultBytes(r), challenge)).toMatchObject({ status: 'success', consumerId: a.walletId });
    await expectMoved(a.walletId, before);
    await client.close();
  });

});

describe('a paid tool in the x402 MCP convention (specs/transports-v2/mcp.md)', () => {
  it('an unpaid call is isError with the x402 v2 PaymentRequired as structuredContent and as content[0].text, which @x402/core accepts', async () => {
    const client = await connected();
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'a b c' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    // what @x402/mcp's client checks: isPaymentRequired (@x402/core/schemas) on structuredContent, then on the JSON of content[0].text
    expect(isPaymentRequired(r.structuredContent)).toBe(true);
    const parsed = parsePaymentRequired(JSON.parse((r.content[0] as { text: string }).text));
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(r.structuredContent);
    const ours = r._meta?.['agentpay/error'] as { error: { code: string; message: string }; challenge: PriceChallenge };
    expect(r.structuredContent).toMatchObject({
      x402Version: 2,
      error: `PAYMENT_REQUIRED: ${ours.error.message}; ${X402_CLIENT_HINT}`,
      resource: { url: 'mcp://tool/summarize' },
      accepts: [{ scheme: 'agentpay', network: 'agentpay:sandbox', amount: '100', asset: 'USD', payTo: t.creds.provider.walletId, extra: { howToPay: X402_CLIENT_HINT, challenge: ours.challenge } }],
    });
    expect(r._meta?.['agentpay/status']).toBe(402);
    await client.close();
  });

  it('tells a client without our scheme what to install: a stock x402Client names agentpay-sdk/x402, the MPP challenge agentpay-sdk/mppx', async () => {
    const client = await connected();
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'a b c' } })) as CallToolResult;
    expect(isPaymentRequired(r.structuredContent)).toBe(true);
    // what @x402/mcp's client does next, with only an EVM scheme registered: it throws with the accepts, our pointer among them
    const evmOnly = new x402Client().register('eip155:*', { scheme: 'exact', createPaymentPayload: async () => { throw new Error('not called'); } } as never);
    const e = await evmOnly.createPaymentPayload(r.structuredContent as unknown as PaymentRequired).then(() => null, (err: Error) => err);
    expect(e?.message).toMatch(/No network\/scheme registered/);
    expect(e?.message).toContain('agentpay-sdk/x402');
    const mpp = r._meta?.['org.paymentauth/payment-required'] as { challenges: Array<{ description?: string }> };
    expect(mpp.challenges[0]!.description).toBe(MPP_CLIENT_HINT);
    expect(MPP_CLIENT_HINT).toContain('agentpay-sdk/mppx');
    await client.close();
  });

  it('an x402 `exact` PaymentPayload, on a gateway with no chain, is answered as unpaid: no exact offer, the tool does not run, nothing moves', async () => {
    const client = await connected();
    const seller0 = BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
    const platform0 = await platformRevenue(t);
    const ran0 = ran;
    // what a stock x402 EVM client would send: an EIP-3009 authorization for USDC on Base
    const payload = {
      x402Version: 2,
      resource: { url: 'mcp://tool/summarize' },
      accepted: { scheme: 'exact', network: 'eip155:8453', amount: '1000000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: '0x0000000000000000000000000000000000000001', maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } },
      payload: {
        signature: `0x${'11'.repeat(65)}`,
        authorization: { from: '0x0000000000000000000000000000000000000002', to: '0x0000000000000000000000000000000000000001', value: '1000000', validAfter: '0', validBefore: '99999999999', nonce: `0x${'22'.repeat(32)}` },
      },
    };
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'x y z' }, _meta: { 'x402/payment': payload } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r._meta?.['agentpay/status']).toBe(402);
    expect(isPaymentRequired(r.structuredContent)).toBe(true);
    const required = r.structuredContent as unknown as PaymentRequired;
    // only what this gateway settles is offered, with the pointer to our plug-in
    expect(required.accepts.map((a) => a.scheme)).toEqual(['agentpay']);
    expect(required.error).toContain(X402_CLIENT_HINT);
    expect(ran).toBe(ran0);
    expect(BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor)).toBe(seller0);
    expect(await platformRevenue(t)).toBe(platform0);
    await client.close();
  });

  it('a stock x402Client with our agentpay scheme pays it as @x402/mcp would: _meta["x402/payment"], then _meta["x402/payment-response"]; 100 / 97 / 3', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const client = await connected();
    const scheme = createAgentpayX402Scheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });
    const x402 = new x402Client().register('agentpay:*', scheme);

    // @x402/mcp's x402MCPClient.callTool: call unpaid, extract the PaymentRequired, createPaymentPayload, retry with it in _meta
    const unpaid = (await client.callTool({ name: 'summarize', arguments: { text: 'x y z' } })) as CallToolResult;
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent;
    if (!isPaymentRequired(required)) throw new Error('no x402 PaymentRequired in structuredContent');
    const payload = await x402.createPaymentPayload(required as PaymentRequired); // as @x402/mcp does after the same check
    expect(payload).toMatchObject({ x402Version: 2, resource: { url: 'mcp://tool/summarize' }, accepted: { scheme: 'agentpay', amount: '100' } });
    const r = (await client.callTool({ name: 'summarize', arguments: { text: 'x y z' }, _meta: { 'x402/payment': payload } })) as CallToolResult;

    expect(r.isError).toBeFalsy();
    expect(r.content).toEqual([{ type: 'text', text: 'x y' }]);
    const receipt = r._meta?.['agentpay/receipt'] as Receipt;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId });
    expect(r._meta?.['x402/payment-response']).toMatchObject({ success: true, payer: a.walletId, network: 'agentpay:sandbox', amount: '100', transaction: receipt.transactionId, extra: { receipt } });
    // our signed receipt checks out against the platform key, the bytes of the result and the challenge that was paid
    const challenge = ((required as PaymentRequired).accepts[0]!.extra as { challenge: PriceChallenge }).challenge;
    expect(await scheme.payer.verifiedReceipt(receipt, resultBytes(r), challenge)).toMatchObject({ status: 'success' });
    await expectMoved(a.walletId, before);
    await client.close();
  });
});
