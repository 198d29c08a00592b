/**
 * A paid tool's error result (`isError: true`) that carries structuredContent: the call fails as
 * provider_error (the buyer is refunded) and the buyer gets the error result with its failed
 * receipt. The MCP SDK's client checks structuredContent against the tool's advertised output
 * schema even on an error result, and throws when it does not match; so structured content that
 * would not pass is not sent (the error's content is), and structured content that passes is.
 * Over streamable HTTP on 127.0.0.1 with a real HTTPS gateway; the client listed the tools first,
 * as hosts do.
 */
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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

const Weather = { city: z.string(), unit: z.string() };
const DOWN = [{ type: 'text' as const, text: 'upstream weather service is down' }];

/** Each tool answers a tool error with the given structuredContent, under Weather as its outputSchema or none. */
const TOOLS: Record<string, { structuredContent: Record<string, unknown>; outputSchema?: typeof Weather }> = {
  'breaks-zod': { structuredContent: { reason: 'upstream down', retryAfterS: 30 }, outputSchema: Weather },
  'breaks-advertised': { structuredContent: { city: 'Faro', unit: 'C', reason: 'stale' }, outputSchema: Weather }, // zod strips the extra key, Ajv refuses it
  'conforms': { structuredContent: { city: 'Faro', unit: 'C' }, outputSchema: Weather },
  'no-schema': { structuredContent: { reason: 'upstream down' } },
};

function errorTools(): McpServer {
  const mcp = new McpServer({ name: 'error-results', version: '1' });
  for (const [name, { structuredContent, outputSchema }] of Object.entries(TOOLS)) {
    registerPaidTool(mcp, name, { seller, capabilityId, ...(outputSchema ? { outputSchema } : {}) }, async (): Promise<CallToolResult> => {
      runs[name] = (runs[name] ?? 0) + 1;
      return { content: DOWN, structuredContent, isError: true };
    });
  }
  return mcp;
}

beforeAll(async () => {
  t = await startTestGateway();
  const { capability } = await t.provider.capabilities.publish({
    name: 'Weather that fails', description: 'paid weather', protocol: 'mcp', toolName: 'conforms', priceMinor: '100', category: 'weather',
    endpoint: 'https://127.0.0.1/mcp',
  });
  capabilityId = capability.id;
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
  let url: string;
  ({ server, url } = await listenStateless(errorTools));
  client = new Client({ name: 'host', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  // the client now checks every structuredContent of these tools, error results included
  const { tools } = await client.listTools();
  expect(tools.find((x) => x.name === 'breaks-zod')?.outputSchema).toMatchObject({ additionalProperties: false, required: ['city', 'unit'] });
});
afterAll(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await t?.close();
});

const buyerFor = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });

/** Calls `tool` as a buyer, checks the refund in the ledger, and returns the result the buyer got. */
async function refundedCall(tool: string): Promise<CallToolResult> {
  const a = await fundedAgent(t, '1000');
  const before = await money(t, a.walletId);
  const ran = runs[tool] ?? 0;

  const { result, receipt } = await payingCallTool(client, buyerFor(a), { name: tool, arguments: {} });

  expect(runs[tool]).toBe(ran + 1);
  expect(result.isError).toBe(true);
  expect(result.content).toEqual(DOWN);
  // payingCallTool verified it against the result as received: the hash covers what was sent
  expect(receipt).toMatchObject({ status: 'failed', consumerId: a.walletId, capabilityId, amount: { amountMinor: '100' } });
  expect(await moved(t, a.walletId, before)).toEqual({ buyer: '0', seller: '0', platform: '0' });
  const balance = await t.workspace.wallets.balance(a.walletId);
  expect(balance.availableMinor).toBe(balance.balanceMinor); // no hold left
  const mine = (await t.workspace.receipts.list()).receipts.filter((r) => r.consumerId === a.walletId);
  expect(mine.map((r) => r.status)).toEqual(['failed']);
  await expectLedgerConsistent(t.workspace, a.walletId);
  return result;
}

describe('registerPaidTool: a tool error with structuredContent', () => {
  it('structuredContent that breaks the outputSchema (zod): not sent; the buyer gets the error result with its failed receipt, refunded', async () => {
    const result = await refundedCall('breaks-zod');
    expect(result.structuredContent).toBeUndefined();
  });

  it('structuredContent that zod accepts but the advertised JSON Schema refuses (an extra key): not sent either', async () => {
    const result = await refundedCall('breaks-advertised');
    expect(result.structuredContent).toBeUndefined();
  });

  it('structuredContent that matches the outputSchema: sent with the error, failed receipt, refunded', async () => {
    const result = await refundedCall('conforms');
    expect(result.structuredContent).toEqual({ city: 'Faro', unit: 'C' });
  });

  it('a tool without an outputSchema: its structuredContent is sent as returned, failed receipt, refunded', async () => {
    const result = await refundedCall('no-schema');
    expect(result.structuredContent).toEqual({ reason: 'upstream down' });
  });
});

describe('the MCP SDK client (why the seller drops such structured content)', () => {
  it('throws on an error result whose structuredContent fails the listed outputSchema', async () => {
    // a free tool with the same outputSchema, on a server of its own: nothing to pay
    const { server: plain, url } = await listenStateless(() => {
      const m = new McpServer({ name: 'plain', version: '1' });
      m.registerTool('plain', { outputSchema: Weather }, async () => ({ content: DOWN, structuredContent: { reason: 'x' }, isError: true }));
      return m;
    });
    const c = new Client({ name: 'host', version: '1' });
    try {
      await c.connect(new StreamableHTTPClientTransport(new URL(url)));
      await c.listTools();
      await expect(c.callTool({ name: 'plain', arguments: {} })).rejects.toThrow(/Structured content does not match the tool's output schema/);
    } finally {
      await c.close();
      plain.closeAllConnections();
      await new Promise<void>((r) => plain.close(() => r()));
    }
  });
});
