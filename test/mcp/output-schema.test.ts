/**
 * A paid tool's structuredContent is checked before the call is settled as the buyer's MCP
 * client will check it after: zod (McpServer) and the JSON Schema tools/list advertises (Ajv,
 * the MCP SDK client's validator). A result zod accepts but that JSON Schema refuses (an extra
 * key under additionalProperties: false, a defaulted field left out) is failed as
 * provider_error and refunded, never charged; the client, which listed the tools first as hosts
 * do, gets the failed receipt instead of throwing. Over streamable HTTP on 127.0.0.1 with a real
 * HTTPS gateway.
 */
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments, registerPaidTool, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../e2e/helpers.js';
import { listenStateless, money, moved } from './helpers.js';

let t: TestGateway;
let seller: SellerPayments;
let capabilityId: string;
let server: http.Server;
let client: Client;
const runs: Record<string, number> = {};

const Weather = { city: z.string(), unit: z.string().default('C') };

function weatherTools(): McpServer {
  const mcp = new McpServer({ name: 'output-schema', version: '1' });
  const tool = (name: string, structuredContent: Record<string, unknown>) =>
    registerPaidTool(mcp, name, { seller, capabilityId, outputSchema: Weather }, async () => {
      runs[name] = (runs[name] ?? 0) + 1;
      return { content: [{ type: 'text', text: 'Faro' }], structuredContent };
    });
  tool('extra-key', { city: 'Faro', unit: 'C', source: 'met-office' });
  tool('default-left-out', { city: 'Faro' });
  tool('exact', { city: 'Faro', unit: 'C' });
  return mcp;
}

beforeAll(async () => {
  t = await startTestGateway();
  const { capability } = await t.provider.capabilities.publish({
    name: 'Weather with an output schema', description: 'paid weather', protocol: 'mcp', toolName: 'exact', priceMinor: '100', category: 'weather',
    endpoint: 'https://127.0.0.1/mcp',
  });
  capabilityId = capability.id;
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
  let url: string;
  ({ server, url } = await listenStateless(weatherTools));
  client = new Client({ name: 'host', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // what every MCP host does first: the client now checks structuredContent against the advertised schemas
  const { tools } = await client.listTools();
  expect(tools.find((x) => x.name === 'exact')?.outputSchema).toMatchObject({ additionalProperties: false, required: ['city', 'unit'] });
});
afterAll(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await t?.close();
});

const buyerFor = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });

describe('registerPaidTool: structuredContent the buyer\'s MCP client would reject', () => {
  for (const [tool, why] of [['extra-key', /must NOT have additional properties/], ['default-left-out', /must have required property 'unit'/]] as const) {
    it(`${tool}: fails as provider_error with a failed receipt, the buyer refunded and nothing held`, async () => {
      const a = await fundedAgent(t, '1000');
      const before = await money(t, a.walletId);
      const ran = runs[tool] ?? 0;

      const { result, receipt } = await payingCallTool(client, buyerFor(a), { name: tool, arguments: {} });

      expect(runs[tool]).toBe(ran + 1);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(why) }]);
      expect(receipt).toMatchObject({ status: 'failed', consumerId: a.walletId, capabilityId });
      expect(await moved(t, a.walletId, before)).toEqual({ buyer: '0', seller: '0', platform: '0' });
      const balance = await t.workspace.wallets.balance(a.walletId);
      expect(balance.availableMinor).toBe(balance.balanceMinor); // no hold left
      const mine = (await t.workspace.receipts.list()).receipts.filter((r) => r.consumerId === a.walletId);
      expect(mine.map((r) => r.status)).toEqual(['failed']);
      await expectLedgerConsistent(t.workspace, a.walletId);
    });
  }

  it('exactly the declared fields: sold, and the client (which listed the tools) accepts the result', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const { result, receipt } = await payingCallTool(client, buyerFor(a), { name: 'exact', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'Faro', unit: 'C' });
    expect(receipt).toMatchObject({ status: 'success', amount: { amountMinor: '100' } });
    expect(await moved(t, a.walletId, before)).toEqual({ buyer: '-100', seller: '97', platform: '3' });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
