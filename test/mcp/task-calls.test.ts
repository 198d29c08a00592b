/**
 * Task-augmented calls (`params.task`, MCP 2025-11-25 tasks) of a paid tool are refused before
 * anything is charged, whatever the server:
 * - a server that does not declare task support for tools/call: the MCP SDK refuses the call
 *   itself (-32603) before any handler runs;
 * - a server that declares it (a task store): the MCP SDK would run the paid tool as a plain call
 *   and then reject its result for not being a CreateTaskResult, after the buyer paid and without
 *   the receipt. registerPaidTool's guard refuses such a call with -32601 before the tool.
 * payingCallTool refuses `params.task` itself, before sending anything. Real HTTPS gateway; the
 * MCP servers run in this process (in-memory transport).
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, type Buyer } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { ERROR_META, PAYMENT_META, RECEIPT_META } from '../../packages/sdk/src/mcp/protocol.js';
import { createSellerPayments, paidToolCallback, registerPaidTool, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import type { PaymentProof } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent } from '../e2e/helpers.js';
import { connectInMemory, money, moved, type Connected } from './helpers.js';

let t: TestGateway;
let seller: SellerPayments;
let capabilityId: string;
const runs: Record<string, number> = {};

const NOTHING = { buyer: '0', seller: '0', platform: '0' };
const SALE = { buyer: '-100', seller: '97', platform: '3' };
const TASKS = [{}, { ttl: 60_000 }];

const forecast = (tool: string) => async ({ city }: { city: string }): Promise<CallToolResult> => {
  runs[tool] = (runs[tool] ?? 0) + 1;
  return { content: [{ type: 'text', text: `Sunny in ${city}` }] };
};

/** An McpServer with paid tools, that declares task support for tools/call (with a task store) or not. */
function weather(taskCapable: boolean): McpServer {
  const mcp = taskCapable
    ? new McpServer({ name: 'tasks', version: '1' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() })
    : new McpServer({ name: 'plain', version: '1' });
  const inputSchema = { city: z.string() };
  registerPaidTool(mcp, 'forecast', { seller, capabilityId, inputSchema }, forecast('forecast'));
  registerPaidTool(mcp, 'old-name', { seller, capabilityId, inputSchema }, forecast('renamed')).update({ name: 'renamed' });
  // a paid callback registered by hand: the guard does not know its name
  mcp.registerTool('by-hand', { inputSchema }, paidToolCallback(forecast('by-hand'), { seller, capabilityId }));
  mcp.registerTool('free', { inputSchema }, forecast('free'));
  return mcp;
}

let plain: Connected;
let taskCapable: Connected;

beforeAll(async () => {
  t = await startTestGateway();
  const { capability } = await t.provider.capabilities.publish({
    name: 'Weather', description: 'paid weather', protocol: 'mcp', toolName: 'forecast', priceMinor: '100', category: 'weather', endpoint: 'https://127.0.0.1/mcp',
  });
  capabilityId = capability.id;
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
  plain = await connectInMemory(weather(false));
  taskCapable = await connectInMemory(weather(true));
});
afterAll(async () => {
  await plain?.close();
  await taskCapable?.close();
  await t?.close();
});

async function newBuyer(): Promise<{ walletId: string; buyer: Buyer }> {
  const a = await fundedAgent(t, '1000');
  return { walletId: a.walletId, buyer: createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem }) };
}

/** A signed proof for `tool`, from its payment-required answer to a plain (unpaid) call. */
async function proofFor(c: Connected, buyer: Buyer, tool: string): Promise<PaymentProof> {
  const asked = (await c.client.callTool({ name: tool, arguments: { city: 'Faro' } })) as CallToolResult;
  const challenge = await buyer.payer.verifiedChallenge(asked._meta?.[ERROR_META]);
  return buyer.payer.signProof(challenge!);
}

/** Runs `fn`, then checks that the tool did not run, no money moved, nothing is held and no receipt was made. */
async function expectNothingCharged(walletId: string, tool: string, fn: () => Promise<void>): Promise<void> {
  const before = await money(t, walletId);
  const ran = runs[tool] ?? 0;
  await fn();
  expect(runs[tool] ?? 0).toBe(ran);
  expect(await moved(t, walletId, before)).toEqual(NOTHING);
  const balance = await t.workspace.wallets.balance(walletId);
  expect(balance.availableMinor).toBe(balance.balanceMinor);
  expect((await t.workspace.receipts.list()).receipts.filter((r) => r.consumerId === walletId)).toEqual([]);
  await expectLedgerConsistent(t.workspace, walletId);
}

const mcpError = (p: Promise<unknown>) => p.then(() => expect.unreachable('the call should have been refused'), (e: unknown) => e as McpError);

describe('payingCallTool with params.task', () => {
  for (const [label, c] of [['a server without task support', () => plain], ['a task-capable server', () => taskCapable]] as const) {
    it(`is refused with VALIDATION_FAILED before anything is sent (${label})`, async () => {
      const { walletId, buyer } = await newBuyer();
      await expectNothingCharged(walletId, 'forecast', async () => {
        const e = await payingCallTool(c().client, buyer, { name: 'forecast', arguments: { city: 'Faro' }, task: {} }).then(() => expect.unreachable('refused'), (x: unknown) => x as AgentpayError);
        expect(e).toBeInstanceOf(AgentpayError);
        expect(e).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'params.task' } });
        expect(e.message).toMatch(/without params\.task/);
      });
    });
  }
});

describe('a paid call with a proof and params.task', () => {
  for (const task of TASKS) {
    it(`a server without task support: the MCP SDK refuses it before the tool (-32603), nothing charged (task ${JSON.stringify(task)})`, async () => {
      const { walletId, buyer } = await newBuyer();
      const proof = await proofFor(plain, buyer, 'forecast');
      await expectNothingCharged(walletId, 'forecast', async () => {
        const e = await mcpError(plain.client.callTool({ name: 'forecast', arguments: { city: 'Faro' }, task, _meta: { [PAYMENT_META]: proof } }));
        expect(e.code).toBe(ErrorCode.InternalError);
        expect(e.message).toMatch(/does not support task creation/);
      });
    });

    it(`a task-capable server: refused with -32601 before the tool, nothing charged, the proof still unspent (task ${JSON.stringify(task)})`, async () => {
      const { walletId, buyer } = await newBuyer();
      const proof = await proofFor(taskCapable, buyer, 'forecast');
      await expectNothingCharged(walletId, 'forecast', async () => {
        const e = await mcpError(taskCapable.client.callTool({ name: 'forecast', arguments: { city: 'Faro' }, task, _meta: { [PAYMENT_META]: proof } }));
        expect(e).toBeInstanceOf(McpError);
        expect(e.code).toBe(ErrorCode.MethodNotFound);
        expect(e.message).toMatch(/forecast is a paid tool and cannot be called as a task .*Nothing was charged/);
      });
      // the gateway never saw the proof: it buys one plain call
      const before = await money(t, walletId);
      const paid = (await taskCapable.client.callTool({ name: 'forecast', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } })) as CallToolResult;
      expect(paid._meta?.[RECEIPT_META]).toMatchObject({ status: 'success', consumerId: walletId });
      expect(await moved(t, walletId, before)).toEqual(SALE);
      await expectLedgerConsistent(t.workspace, walletId);
    });
  }

  it('a task-capable server, through the SDK\'s task API (callToolStream with task: {}): an error message, nothing charged', async () => {
    const { walletId, buyer } = await newBuyer();
    const proof = await proofFor(taskCapable, buyer, 'forecast');
    await expectNothingCharged(walletId, 'forecast', async () => {
      const messages = [];
      for await (const m of taskCapable.client.experimental.tasks.callToolStream({ name: 'forecast', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } }, undefined, { task: {} })) messages.push(m);
      expect(messages).toEqual([{ type: 'error', error: expect.objectContaining({ code: ErrorCode.MethodNotFound }) }]);
    });
  });

  it('a paid tool renamed through its handle keeps the guard under its new name', async () => {
    const { walletId, buyer } = await newBuyer();
    const proof = await proofFor(taskCapable, buyer, 'renamed');
    await expectNothingCharged(walletId, 'renamed', async () => {
      const e = await mcpError(taskCapable.client.callTool({ name: 'renamed', arguments: { city: 'Faro' }, task: {}, _meta: { [PAYMENT_META]: proof } }));
      expect(e.code).toBe(ErrorCode.MethodNotFound);
    });
  });

  it('a hand-registered paidToolCallback next to a registerPaidTool tool: its task call is refused by the callback, nothing charged; its plain call is sold', async () => {
    const { walletId, buyer } = await newBuyer();
    const proof = await proofFor(taskCapable, buyer, 'by-hand');
    await expectNothingCharged(walletId, 'by-hand', async () => {
      // the guard does not know its name; the callback refuses, and the SDK, wanting a CreateTaskResult, answers an error
      const e = await mcpError(taskCapable.client.callTool({ name: 'by-hand', arguments: { city: 'Faro' }, task: {}, _meta: { [PAYMENT_META]: proof } }));
      expect(e.code).toBe(ErrorCode.InvalidParams);
    });
    const before = await money(t, walletId);
    const r = (await taskCapable.client.callTool({ name: 'by-hand', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } })) as CallToolResult;
    expect(r._meta?.[RECEIPT_META]).toMatchObject({ status: 'success', consumerId: walletId });
    expect(await moved(t, walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, walletId);
  });

  it('a task-capable server with only hand-registered paid callbacks (no guard): every paid call is refused, nothing charged', async () => {
    const mcp = new McpServer({ name: 'by-hand', version: '1' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() });
    mcp.registerTool('by-hand', { inputSchema: { city: z.string() } }, paidToolCallback(forecast('by-hand'), { seller, capabilityId }));
    const c = await connectInMemory(mcp);
    try {
      const { walletId, buyer } = await newBuyer();
      const proof = await proofFor(taskCapable, buyer, 'forecast'); // its own unpaid call is refused too
      await expectNothingCharged(walletId, 'by-hand', async () => {
        const r = (await c.client.callTool({ name: 'by-hand', arguments: { city: 'Faro' }, _meta: { [PAYMENT_META]: proof } })) as CallToolResult;
        expect(r).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/could not be checked for params\.task.*register paid tools with registerPaidTool\. Nothing was charged/) }] });
        expect(r._meta?.[RECEIPT_META]).toBeUndefined();
        const e = await mcpError(c.client.callTool({ name: 'by-hand', arguments: { city: 'Faro' }, task: {}, _meta: { [PAYMENT_META]: proof } }));
        expect(e.code).toBe(ErrorCode.InvalidParams);
      });
    } finally {
      await c.close();
    }
  });
});

describe('a plain paid call on a task-capable server', () => {
  it('is sold as usual: result, verified receipt, the buyer charged once', async () => {
    const { walletId, buyer } = await newBuyer();
    const before = await money(t, walletId);
    const { result, receipt } = await payingCallTool(taskCapable.client, buyer, { name: 'forecast', arguments: { city: 'Faro' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Sunny in Faro' }]);
    expect(receipt).toMatchObject({ status: 'success', consumerId: walletId, capabilityId });
    expect(await moved(t, walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, walletId);
  });
});

describe('the MCP SDK (why the guard exists)', () => {
  it('advertises every registerTool tool as taskSupport "forbidden", yet runs a free one called as a task and then answers an error', async () => {
    const { tools } = await taskCapable.client.listTools();
    expect(tools.find((x) => x.name === 'forecast')?.execution).toEqual({ taskSupport: 'forbidden' });
    const ran = runs.free ?? 0;
    const e = await mcpError(taskCapable.client.callTool({ name: 'free', arguments: { city: 'Faro' }, task: {} }));
    expect(runs.free).toBe(ran + 1); // a paid tool in its place would have been charged here
    expect(e.code).toBe(ErrorCode.InvalidParams);
    expect(e.message).toMatch(/Invalid task creation result/);
  });
});
