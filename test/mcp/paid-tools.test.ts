/**
 * Paid MCP tools end to end: the fixture MCP server (registerPaidTool) sells tool calls
 * through a real HTTPS gateway, bought with payingCallTool over stdio (a child process
 * launched from the package capability's address) and over streamable HTTP on 127.0.0.1.
 * Every money test ends with the ledger: a sale moves buyer −100, seller +97, platform +3;
 * a failure or a refusal moves nothing.
 */
import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, type BuyerOptions } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { ERROR_META, PAYMENT_META, RECEIPT_META, resultBytes, STATUS_META } from '../../packages/sdk/src/mcp/protocol.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../e2e/helpers.js';
import { connectHttp, connectStdio, money, moved, publishPackageCapability, type Connected } from './helpers.js';

let t: TestGateway;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, '100');
});
afterAll(async () => {
  await t?.close();
});

const buyerFor = (a: AgentWallet, extra: Partial<BuyerOptions> = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, ...extra });

const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e as AgentpayError);

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** Checked here without the SDK's buyer: the platform's signature, and the hash of the exact result. */
async function expectReceiptVerifies(receipt: Receipt, result: CallToolResult): Promise<void> {
  const { publicKeyPem } = await t.workspace.platform.receiptKey(receipt.signingKeyId);
  expect(await verifyObject(publicKeyPem, receipt as unknown as Record<string, unknown>)).toBe(true);
  expect(receipt.responseHash).toBe(sha256(resultBytes(result)));
}

const NOTHING = { buyer: '0', seller: '0', platform: '0' };
const SALE = { buyer: '-100', seller: '97', platform: '3' };

const transports: [string, () => Promise<Connected>][] = [
  ['stdio (package capability launched with npx)', async () => {
    // found through discovery, launched from the address it shows
    const [found] = await t.workspace.discovery.search({ query: 'weather', protocol: 'mcp' });
    expect(found?.version.address).toMatchObject({ kind: 'package', command: 'npx', version: '1.0.0' });
    return connectStdio(t, found!, capabilityId);
  }],
  ['streamable HTTP on 127.0.0.1', () => connectHttp(t, capabilityId)],
];

describe.each(transports)('paid MCP tool over %s', (_name, connect) => {
  let c: Connected;
  beforeAll(async () => {
    c = await connect();
  });
  afterAll(async () => {
    await c?.close();
  });

  it('sells one call: the result, buyer −100, seller +97, platform +3, and the receipt verifies', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const { result, receipt, challenge } = await payingCallTool(c.client, buyerFor(a, { maxPriceMinor: '100' }), { name: 'forecast', arguments: { city: 'Faro' } });

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'Faro', sunny: true, tempC: 21.5 });
    expect(result.content).toEqual([{ type: 'text', text: 'Sunny in Faro, 21.5 °C' }]);
    expect(challenge).toMatchObject({ capabilityId, amountMinor: '100', currency: 'USD' });
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, providerId: t.creds.provider.id, amount: { amountMinor: '100', currency: 'USD' } });
    expect(result._meta?.[RECEIPT_META]).toEqual(receipt);
    await expectReceiptVerifies(receipt!, result);
    expect(await t.workspace.receipts.get(receipt!.id)).toMatchObject({ id: receipt!.id, status: 'success' });

    expect(await moved(t, a.walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('answers an unpaid call with the signed price challenge as a tool error, and does not run the tool', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const result = (await c.client.callTool({ name: 'flaky', arguments: {} })) as CallToolResult;

    expect(result.isError).toBe(true);
    expect(result._meta?.[STATUS_META]).toBe(402);
    // our envelope in _meta["agentpay/error"]
    const envelope = result._meta?.[ERROR_META] as { challenge: Record<string, unknown> };
    expect(envelope).toMatchObject({
      error: { code: 'PAYMENT_REQUIRED', message: expect.stringContaining(`_meta["${PAYMENT_META}"]`) },
      challenge: { capabilityId, amountMinor: '100', currency: 'USD', payTo: t.creds.provider.walletId, signature: expect.any(String), signingKeyId: expect.any(String) },
    });
    // structuredContent is x402's PaymentRequired (the signed challenge in the agentpay accepts entry), content[0].text its JSON
    expect(result.structuredContent).toMatchObject({
      x402Version: 2,
      error: expect.stringMatching(/^PAYMENT_REQUIRED: payment required: 100 USD/),
      resource: { url: 'mcp://tool/flaky' },
      accepts: [{ scheme: 'agentpay', amount: '100', asset: 'USD', payTo: t.creds.provider.walletId, extra: { challenge: envelope.challenge } }],
    });
    const first = result.content[0];
    expect(first?.type === 'text' && JSON.parse(first.text)).toEqual(result.structuredContent);
    // a tool with an outputSchema gets the PaymentRequired as text only: clients check structuredContent against that schema
    const forecast = (await c.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
    expect(forecast).toMatchObject({ isError: true, _meta: { [STATUS_META]: 402, [ERROR_META]: { error: { code: 'PAYMENT_REQUIRED' } } } });
    expect(forecast.structuredContent).toBeUndefined();
    const text = forecast.content[0];
    expect(text?.type === 'text' && JSON.parse(text.text)).toMatchObject({ x402Version: 2, resource: { url: 'mcp://tool/forecast' }, accepts: [{ scheme: 'agentpay', amount: '100' }] });

    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
  });

  it('fails a tool error (isError) as provider_error: failed receipt, buyer refunded, breaker counts it', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const { result, receipt } = await payingCallTool(c.client, buyerFor(a), { name: 'flaky', arguments: {} });

    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'upstream weather service is down' }] });
    expect(receipt).toMatchObject({ status: 'failed', consumerId: a.walletId, amount: { amountMinor: '100' } });
    await expectReceiptVerifies(receipt!, result);
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ paused: false, consecutiveFailures: 1 });
    const entries = await t.workspace.wallets.ledger(a.walletId);
    expect(entries.map((e) => e.type)).toContain('refund');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('fails a tool that throws as provider_error: its message as the tool error, failed receipt, buyer refunded', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const { result, receipt } = await payingCallTool(c.client, buyerFor(a), { name: 'explode', arguments: {} });

    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'kaboom' }] });
    expect(receipt).toMatchObject({ status: 'failed' });
    await expectReceiptVerifies(receipt!, result);
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('refuses a price above maxPriceMinor with PRICE_ABOVE_CLIENT_LIMIT before signing: nothing signed, nothing charged', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    let signed = 0;
    const buyer = buyerFor(a, { maxPriceMinor: '1000', privateKeyPem: undefined, signer: () => { signed++; return 'never'; } });
    const e = await refusal(payingCallTool(c.client, buyer, { name: 'forecast', arguments: { city: 'Faro' } }, { maxPriceMinor: '99' }));

    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99', capabilityId } });
    expect(signed).toBe(0);
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1); // the funding only
  });
});
