/**
 * A paid MCP call whose answer never reaches the buyer (the proof was sent; then the buyer's
 * request timed out, or its connection closed): payingCallTool throws SELLER_UNREACHABLE with
 * `paid: true` and the MCP error as `cause`, as the REST buyer does. The seller still runs the
 * tool and settles it: the call is charged, and its receipt is in the wallet's receipts. That
 * is why docs/sdk.md says to keep the buyer's `timeout` above the seller's handler time limit.
 * Streamable HTTP on 127.0.0.1 (stateless, and a stateful session) with a real HTTPS gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments, registerPaidTool, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../e2e/helpers.js';
import { listenStateless } from './helpers.js';

let t: TestGateway;
let seller: SellerPayments;
let capabilityId: string;
const finished: number[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function slowServer(): McpServer {
  const mcp = new McpServer({ name: 'slow', version: '1' });
  registerPaidTool(mcp, 'slow', { seller, capabilityId, inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await sleep(ms);
    finished.push(ms);
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  });
  return mcp;
}

interface Served { url: string; close(): Promise<void> }

/** stateless (a server per request) or one stateful session server */
async function serve(stateful: boolean): Promise<Served> {
  let shared: { mcp: McpServer; transport: StreamableHTTPServerTransport } | undefined;
  if (stateful) {
    const mcp = slowServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), enableJsonResponse: true });
    await mcp.connect(transport);
    shared = { mcp, transport };
  }
  const { server, url } = await listenStateless(slowServer, (req, res) => {
    if (!shared) return false;
    void shared.transport.handleRequest(req, res);
    return true;
  });
  return {
    url,
    async close() {
      await shared?.mcp.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function connect(url: string): Promise<Client> {
  const c = new Client({ name: 'host', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

beforeAll(async () => {
  t = await startTestGateway();
  const { capability } = await t.provider.capabilities.publish({ name: 'slow', description: 'a slow paid tool', protocol: 'mcp', toolName: 'slow', priceMinor: '100', category: 'slow', endpoint: 'https://127.0.0.1/mcp' });
  capabilityId = capability.id;
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
});
afterAll(async () => {
  await t?.close();
});

const buyerFor = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
const thrown = (p: Promise<unknown>) => p.then(() => expect.unreachable('the call should have thrown'), (e: unknown) => e as AgentpayError);

/** Waits until the tool that slept `ms` has returned and the seller had time to settle it. */
async function settledAfter(ms: number, walletId: string): Promise<void> {
  await until(() => finished.includes(ms), `the tool that slept ${ms} ms to return`);
  await until(async () => {
    const b = await t.workspace.wallets.balance(walletId);
    return b.availableMinor === b.balanceMinor;
  }, 'the seller to settle the call');
}

async function receiptsOf(walletId: string) {
  return (await t.workspace.receipts.list()).receipts.filter((r) => r.consumerId === walletId);
}

describe('payingCallTool: the paid call gets no answer', () => {
  it('a buyer timeout shorter than the tool: SELLER_UNREACHABLE {paid: true} with the timeout as cause; the seller still completes and charges', async () => {
    const srv = await serve(false);
    const c = await connect(srv.url);
    try {
      const a = await fundedAgent(t, '1000');
      const e = await thrown(payingCallTool(c, buyerFor(a), { name: 'slow', arguments: { ms: 1200 } }, { timeout: 500 }));

      expect(e).toBeInstanceOf(AgentpayError);
      expect(e).toMatchObject({ code: 'SELLER_UNREACHABLE', details: { paid: true, tool: 'slow', capabilityId, mcpErrorCode: ErrorCode.RequestTimeout } });
      expect(e.message).toMatch(/after the payment proof was sent.*may have been paid.*Do not resend the proof/);
      expect(e.cause).toBeInstanceOf(McpError);
      // the buyer stopped waiting, the seller did not: held now, charged once the tool returns
      const during = await t.workspace.wallets.balance(a.walletId);
      expect(during).toMatchObject({ balanceMinor: '1000', availableMinor: '900' });
      await settledAfter(1200, a.walletId);
      expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '900', availableMinor: '900' });
      expect((await receiptsOf(a.walletId)).map((r) => r.status)).toEqual(['success']);
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('the connection closes during the paid call (a stateful session): SELLER_UNREACHABLE {paid: true} with the close as cause', async () => {
    const srv = await serve(true);
    const c = await connect(srv.url);
    try {
      const a = await fundedAgent(t, '1000');
      const call = thrown(payingCallTool(c, buyerFor(a), { name: 'slow', arguments: { ms: 900 } }));
      // the proof is out once the gateway placed the hold
      await until(async () => {
        const b = await t.workspace.wallets.balance(a.walletId);
        return b.availableMinor !== b.balanceMinor;
      }, 'the hold on the wallet', { everyMs: 10 });
      await c.close();
      const e = await call;

      expect(e).toMatchObject({ code: 'SELLER_UNREACHABLE', details: { paid: true, tool: 'slow', mcpErrorCode: ErrorCode.ConnectionClosed } });
      expect(e.cause).toBeInstanceOf(McpError);
      await settledAfter(900, a.walletId);
      expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '900', availableMinor: '900' });
      expect((await receiptsOf(a.walletId)).map((r) => r.status)).toEqual(['success']);
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await srv.close();
    }
  });

  it('before the proof, a timeout is not a paid call: nothing charged, the error is passed on as it came', async () => {
    const srv = await serve(false);
    const c = await connect(srv.url);
    try {
      const a = await fundedAgent(t, '1000');
      // a host that stops waiting for the unpaid call: its timeout applies to the first request too
      const e = await thrown(payingCallTool(c, buyerFor(a), { name: 'slow', arguments: { ms: 0 } }, { timeout: 1 }));
      expect(e).toBeInstanceOf(McpError);
      expect((e as unknown as McpError).code).toBe(ErrorCode.RequestTimeout);
      expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('1000');
    } finally {
      await c.close();
      await srv.close();
    }
  });
});
