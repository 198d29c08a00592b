/**
 * The MCP server: each paid tool of src/tools.js registered with agentpay's registerPaidTool
 * (it runs only after the gateway authorized the buyer's payment, and its result carries a
 * signed receipt), plus a free `pricing` tool. createHttpServer serves it over streamable HTTP.
 */
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerPaidTool } from 'agentpay-sdk/mcp/seller';
import { SERVER_NAME } from './capabilities.js';
import { paidTools } from './tools.js';

/**
 * `seller`: one createSellerPayments(...) for every tool; `capabilities`: capability id by tool name;
 * `priceCacheMs`: how long the pricing tool reuses a price it read from the gateway.
 */
export function createMcpServer({ seller, capabilities, priceCacheMs = PRICE_CACHE_MS }) {
  const server = new McpServer({ name: SERVER_NAME, version: '0.1.0' });
  for (const [name, tool] of Object.entries(paidTools)) {
    const { description, inputSchema, outputSchema, run } = tool;
    registerPaidTool(server, name, { seller, capabilityId: capabilities[name], description, inputSchema, outputSchema }, async (args) => {
      const result = run(args);
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    });
  }
  server.registerTool('pricing', { description: 'Free: what each paid tool of this server costs per call now, and the capability it sells.' }, async () => {
    let tools;
    try {
      tools = await Promise.all(Object.keys(paidTools).map((name) => priceOf(seller, name, capabilities[name], priceCacheMs)));
    } catch (e) {
      // no price is better than a wrong one: each paid call still quotes its own
      return { content: [{ type: 'text', text: `the prices cannot be read from the payment gateway right now (${e.message}); a paid call quotes its price before anything is paid` }], isError: true };
    }
    const pricing = { tools };
    return { content: [{ type: 'text', text: JSON.stringify(pricing) }], structuredContent: pricing };
  });
  return server;
}

/**
 * How long the pricing tool reuses a price read from the gateway, ms. The tool is free and anyone
 * may call it: without the cache each call would ask the gateway for a signed challenge per paid
 * tool with your provider key, using up its rate limit (which paid calls need) and the gateway's CPU.
 */
export const PRICE_CACHE_MS = 30_000;
/** A price that could not be read is asked again after this long, ms (not at every call: see above). */
const FAILED_PRICE_MS = 5_000;

/** Prices per seller, then per capability: `{ expires, quote }`, shared by every request's McpServer. */
const prices = new WeakMap();

/**
 * A tool's price as the gateway quotes it: the amount of a price challenge for its capability
 * (what a paid call would be asked; nothing is charged or stored), read at most once per
 * `cacheMs` per capability (callers meanwhile share the same read). It follows
 * `agentpay capabilities edit --price` within `cacheMs`, unlike a price written into this server.
 */
async function priceOf(seller, name, capabilityId, cacheMs) {
  let byCapability = prices.get(seller);
  if (!byCapability) prices.set(seller, (byCapability = new Map()));
  let entry = byCapability.get(capabilityId);
  if (!entry || Date.now() >= entry.expires) {
    const read = { expires: Date.now() + cacheMs, quote: seller.client.payments.challenge(capabilityId) };
    read.quote.catch(() => {
      read.expires = Math.min(read.expires, Date.now() + FAILED_PRICE_MS);
    });
    byCapability.set(capabilityId, (entry = read));
  }
  const { amountMinor, currency } = await entry.quote;
  return { name, capabilityId, priceMinor: amountMinor, currency };
}

const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/**
 * A node:http server (not yet listening) with the MCP endpoint at POST /mcp and GET /health.
 * Stateless streamable HTTP: each request gets its own McpServer and transport (cheap), so
 * any number of server processes can sit behind a load balancer.
 */
export function createHttpServer({ seller, capabilities }) {
  return http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (pathname === '/health') return json(res, 200, { ok: true });
    if (pathname !== '/mcp') return json(res, 404, { error: 'not found: the MCP endpoint is POST /mcp' });
    if (req.method !== 'POST') {
      return json(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'this stateless server answers POST /mcp only' }, id: null });
    }
    const server = createMcpServer({ seller, capabilities });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((e) => {
        console.error('mcp request failed:', e);
        if (!res.headersSent) json(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null });
      });
  });
}
