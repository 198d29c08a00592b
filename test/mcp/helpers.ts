/**
 * Real parts for the paid-MCP-tool tests: the package capability the stdio seller is
 * published as, MCP clients connected to the fixture server over stdio (a child process
 * launched through launchPackageCapability with an npx stand-in) and over streamable HTTP
 * on 127.0.0.1, and the money snapshot every test compares against.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createSellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { connectPackageCapability, type LaunchableCapability } from '../../packages/sdk/src/mcp/buyer.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { platformRevenue } from '../e2e/helpers.js';
import { weatherServer } from './fixtures/weather.js';

export const FAKE_NPX = fileURLToPath(new URL('./fixtures/fake-npx.mjs', import.meta.url));
export const PACKAGE_ADDRESS = { kind: 'package', command: 'npx', args: ['-y', 'agentpay-test-weather@1.0.0'], version: '1.0.0' } as const;

/** Publishes the fixture server as an MCP package capability selling `forecast` at `priceMinor`. */
export async function publishPackageCapability(t: TestGateway, priceMinor = '100'): Promise<string> {
  const { capability } = await t.provider.capabilities.publish({
    name: 'Test weather MCP',
    description: 'paid weather forecasts as an MCP tool, run with npx',
    protocol: 'mcp',
    toolName: 'forecast',
    priceMinor,
    category: 'weather',
    address: { ...PACKAGE_ADDRESS, args: [...PACKAGE_ADDRESS.args] },
  });
  return capability.id;
}

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

/** Launches the capability's package over stdio (npx replaced by the stand-in) and connects. */
export async function connectStdio(t: TestGateway, capability: LaunchableCapability, capabilityId: string): Promise<Connected> {
  const client = await connectPackageCapability(capability, {
    npxCommand: FAKE_NPX,
    env: { AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_PROVIDER_KEY: t.creds.provider.apiKey, AGENTPAY_CA: t.ca, AGENTPAY_CAPABILITY_ID: capabilityId },
    stderr: 'pipe',
  });
  return { client, close: () => client.close() };
}

/**
 * An MCP server over stateless streamable HTTP (JSON responses) on 127.0.0.1: a new server and
 * transport per request, as the SDK's stateless example does. `first` may answer a request
 * itself (return true), e.g. through a shared stateful transport.
 */
export async function listenStateless(
  newServer: () => McpServer,
  first?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    if (first?.(req, res)) return;
    const mcp = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    mcp.connect(transport).then(() => transport.handleRequest(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

/** The fixture server over streamable HTTP (stateless, JSON responses) on 127.0.0.1, and a client. */
export async function connectHttp(t: TestGateway, capabilityId: string, runs: Record<string, number> = {}): Promise<Connected & { url: string }> {
  const seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca });
  const { server, url } = await listenStateless(() => weatherServer(seller, capabilityId, runs));
  const client = new Client({ name: 'test-buyer', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    url,
    async close() {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A client connected to `server` in this process (no network between them). */
export async function connectInMemory(server: McpServer): Promise<Connected> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-buyer', version: '1' });
  await client.connect(clientSide);
  return { client, close: async () => { await client.close(); await server.close(); } };
}

export interface Money {
  buyer: bigint;
  seller: bigint;
  platform: bigint;
}

/** Balances of the buyer's wallet (read with `ws`, its workspace), the seller's and the platform's. */
export async function money(t: TestGateway, buyerWalletId: string, ws: AgentpayClient = t.workspace): Promise<Money> {
  const [b, s] = await Promise.all([ws.wallets.balance(buyerWalletId), t.provider.wallets.balance(t.creds.provider.walletId)]);
  return { buyer: BigInt(b.balanceMinor), seller: BigInt(s.balanceMinor), platform: await platformRevenue(t) };
}

/** How each balance moved since `before`. */
export async function moved(t: TestGateway, buyerWalletId: string, before: Money, ws: AgentpayClient = t.workspace): Promise<Record<keyof Money, string>> {
  const now = await money(t, buyerWalletId, ws);
  return { buyer: String(now.buyer - before.buyer), seller: String(now.seller - before.seller), platform: String(now.platform - before.platform) };
}
