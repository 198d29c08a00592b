/**
 * The MCP server over streamable HTTP on 127.0.0.1, without a gateway: what a client sees
 * before any payment. (A real purchase is `npm run e2e`.)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createSellerPayments } from 'agentpay-sdk/mcp/seller';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PRICE_MINOR, publishInput } from '../src/capabilities.js';
import { createHttpServer, createMcpServer, PRICE_CACHE_MS } from '../src/server.js';

const capabilities = { text_stats: 'cap_stats', top_words: 'cap_words' };
const problems = [];
// a gateway nobody listens on: the paid tools must not run without it
const seller = createSellerPayments({ gatewayUrl: 'https://127.0.0.1:9', apiKey: 'ap_p_none', onError: (_e, { stage }) => problems.push(stage) });
let server;
let url;
let client;

beforeAll(async () => {
  server = createHttpServer({ seller, capabilities });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}`;
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
});
afterAll(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** A seller whose gateway quotes `prices` (else PRICE_MINOR) and counts the reads per capability. */
function quotingGateway(prices, { failing = false } = {}) {
  const gateway = { prices, failing, reads: {} };
  const challenge = async (id) => {
    gateway.reads[id] = (gateway.reads[id] ?? 0) + 1;
    if (gateway.failing) throw new Error('the gateway is unreachable');
    return { capabilityId: id, amountMinor: gateway.prices[id] ?? PRICE_MINOR, currency: 'USD' };
  };
  gateway.seller = { ...seller, client: { payments: { challenge } } };
  return gateway;
}

/** A client connected in memory to `server`. */
async function connectLocal(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const local = new Client({ name: 'test', version: '1.0.0' });
  await local.connect(clientSide);
  return local;
}

describe('the MCP server', () => {
  it('lists the paid tools with the capability each sells, and the free pricing tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['pricing', 'text_stats', 'top_words']);
    expect(tools.find((t) => t.name === 'text_stats')._meta).toEqual({ 'agentpay/capabilityId': 'cap_stats' });
    expect(tools.find((t) => t.name === 'top_words').inputSchema.properties).toHaveProperty('limit');
  });

  it('answers the free pricing tool without any payment; with the gateway unreachable it says so, and makes up no price', async () => {
    const result = await client.callTool({ name: 'pricing', arguments: {} });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/prices cannot be read from the payment gateway/) }] });
    expect(result._meta?.['agentpay/status']).toBeUndefined(); // not a payment answer: the tool itself
    expect(result.structuredContent).toBeUndefined();
  });

  it("the pricing tool reports each tool's price as the gateway quotes it, not the price it was built with", async () => {
    // the gateway's quote, as a repriced capability (agentpay capabilities edit --price 250) would give it
    const gateway = quotingGateway({ cap_stats: '250' });
    const local = await connectLocal(createMcpServer({ seller: gateway.seller, capabilities }));
    try {
      expect((await local.callTool({ name: 'pricing', arguments: {} })).structuredContent).toEqual({
        tools: [
          { name: 'text_stats', capabilityId: 'cap_stats', priceMinor: '250', currency: 'USD' },
          { name: 'top_words', capabilityId: 'cap_words', priceMinor: PRICE_MINOR, currency: 'USD' },
        ],
      });
    } finally {
      await local.close();
    }
  });

  describe('the pricing tool reads prices from the gateway at most once per capability every PRICE_CACHE_MS', () => {
    afterEach(() => vi.useRealTimers());

    it('shares one read among concurrent and repeated calls, across McpServers, and shows a reprice once that time has passed', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const gateway = quotingGateway({ cap_stats: '250' });
      // a stateless HTTP server builds a new McpServer per request, all with the same seller
      const hosts = await Promise.all([1, 2, 3].map(() => connectLocal(createMcpServer({ seller: gateway.seller, capabilities }))));
      const priceOfStats = async (host) => (await host.callTool({ name: 'pricing', arguments: {} })).structuredContent.tools[0].priceMinor;
      try {
        expect(await Promise.all(hosts.map(priceOfStats))).toEqual(['250', '250', '250']);
        expect(await priceOfStats(hosts[0])).toBe('250');
        expect(gateway.reads).toEqual({ cap_stats: 1, cap_words: 1 });

        gateway.prices.cap_stats = '300'; // agentpay capabilities edit --price 300
        vi.setSystemTime(Date.now() + PRICE_CACHE_MS - 1);
        expect(await priceOfStats(hosts[1])).toBe('250');
        vi.setSystemTime(Date.now() + 1);
        expect(await priceOfStats(hosts[2])).toBe('300');
        expect(gateway.reads).toEqual({ cap_stats: 2, cap_words: 2 });
      } finally {
        await Promise.all(hosts.map((h) => h.close()));
      }
    });

    it('asks again a few seconds after a failed read, not at every call', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const gateway = quotingGateway({}, { failing: true });
      const local = await connectLocal(createMcpServer({ seller: gateway.seller, capabilities }));
      try {
        expect((await local.callTool({ name: 'pricing', arguments: {} })).isError).toBe(true);
        expect((await local.callTool({ name: 'pricing', arguments: {} })).isError).toBe(true);
        expect(gateway.reads).toEqual({ cap_stats: 1, cap_words: 1 });

        gateway.failing = false; // the gateway is back
        vi.setSystemTime(Date.now() + 5_000);
        const result = await local.callTool({ name: 'pricing', arguments: {} });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent.tools.map((t) => t.priceMinor)).toEqual([PRICE_MINOR, PRICE_MINOR]);
        expect(gateway.reads).toEqual({ cap_stats: 2, cap_words: 2 });
      } finally {
        await local.close();
      }
    });
  });

  it('does not run a paid tool it cannot be paid for: a tool error, GATEWAY_UNAVAILABLE', async () => {
    const result = await client.callTool({ name: 'text_stats', arguments: { text: 'hello' } });
    expect(result).toMatchObject({ isError: true, _meta: { 'agentpay/status': 503 } });
    expect(JSON.parse(result.content[0].text)).toMatchObject({ error: { code: 'GATEWAY_UNAVAILABLE' } });
    expect(problems).toContain('challenge');
  });

  it('refuses arguments that fail the input schema before asking for payment', async () => {
    const result = await client.callTool({ name: 'text_stats', arguments: { text: 42 } });
    expect(result.isError).toBe(true);
    expect(result._meta?.['agentpay/status']).toBeUndefined();
  });

  it('answers /health, and 405 to anything but POST /mcp', async () => {
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ ok: true });
    expect((await fetch(`${url}/mcp`)).status).toBe(405);
  });
});

describe('publishInput', () => {
  it('publishes a paid tool as an mcp capability with its tool name, price and input JSON Schema', () => {
    const input = publishInput('top_words', { endpoint: 'https://tools.example/mcp' });
    expect(input).toMatchObject({ protocol: 'mcp', toolName: 'top_words', priceMinor: PRICE_MINOR, endpoint: 'https://tools.example/mcp' });
    expect(input.schema).toMatchObject({ type: 'object', required: ['text'], properties: { text: { type: 'string' }, limit: { type: 'integer' } } });
  });
});
