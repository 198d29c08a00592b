/**
 * The generated MCP template (`agentpay init --template mcp`, the built binary), its own
 * files run against a real HTTPS gateway:
 * - src/stdio.js, launched as an MCP host launches it: when the host closes stdin while a paid
 *   call runs, the server lets the call settle before it exits (no hold left on the buyer);
 * - the free `pricing` tool reports the price the gateway quotes, reading it at most once per
 *   cache period: after `capabilities edit` repriced a tool, the new price once that period passed.
 * Generated once. Its dependencies are linked from this checkout (agentpay-sdk and agentpay-cli, the MCP SDK,
 * zod) instead of installed: installing is what test/templates/templates.test.ts covers.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { caPath } from '../../src/cli/local-gateway.js';
import { cli, json, removeTempDirs, tempDir } from '../cli/helpers.js';
import { expectLedgerConsistent, fundedAgent } from '../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { connectInMemory } from '../mcp/helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const SLOW_STDIO = fileURLToPath(new URL('./fixtures/slow-mcp-stdio.mjs', import.meta.url));

let t: TestGateway;
let dir: string;
let publishInput: (tool: string, where: Record<string, unknown>) => Record<string, unknown>;
let createMcpServer: (o: { seller: unknown; capabilities: Record<string, string>; priceCacheMs?: number }) => McpServer;

/** The generated project with node_modules linking what it imports to this checkout. */
async function generate(): Promise<string> {
  const cwd = tempDir('agentpay-mcp-template-');
  const made = await cli(['init', 'project', '--template', 'mcp', '--yes', '--local', ROOT], { configDir: cwd, cwd });
  expect(made.exitCode, made.stderr).toBe(0);
  const project = json<{ dir: string }>(made).dir;
  for (const [name, target] of [['agentpay-sdk', join(ROOT, 'packages/sdk')], ['agentpay-cli', ROOT], ['@modelcontextprotocol/sdk', join(ROOT, 'node_modules/@modelcontextprotocol/sdk')], ['zod', join(ROOT, 'node_modules/zod')]]) {
    const link = join(project, 'node_modules', name!);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(target!, link, 'dir');
  }
  return project;
}

async function publishTools(): Promise<Record<string, string>> {
  const caps: Record<string, string> = {};
  for (const tool of ['text_stats', 'top_words']) caps[tool] = (await t.provider.capabilities.publish(publishInput(tool, { endpoint: 'https://127.0.0.1/mcp' }) as never)).capability.id;
  return caps;
}

beforeAll(async () => {
  t = await startTestGateway();
  dir = await generate();
  ({ publishInput } = await import(pathToFileURL(join(dir, 'src/capabilities.js')).href));
  ({ createMcpServer } = await import(pathToFileURL(join(dir, 'src/server.js')).href));
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** src/stdio.js (text_stats slowed to `slowMs`) as a host launches it, and a client connected to it. */
async function launchStdio(caps: Record<string, string>, slowMs: number) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SLOW_STDIO],
    env: {
      TEMPLATE_DIR: dir, SLOW_MS: String(slowMs), PATH: process.env.PATH ?? '',
      AGENTPAY_GATEWAY_URL: t.baseUrl, AGENTPAY_PROVIDER_KEY: t.creds.provider.apiKey, AGENTPAY_CA: caPath(t.dataDir), AGENTPAY_CAPABILITIES: JSON.stringify(caps),
    },
    stderr: 'pipe',
  });
  const log = { stderr: '' };
  transport.stderr?.on('data', (d) => (log.stderr += d));
  const client = new Client({ name: 'host', version: '1' });
  await client.connect(transport);
  const pid = transport.pid!;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return { client, pid, alive, log };
}

describe('template src/stdio.js', () => {
  it('host closes stdin while a paid call runs: the call settles (charged once, no hold left), then the server exits on its own', async () => {
    const caps = await publishTools();
    const server = await launchStdio(caps, 700);
    try {
      const a = await fundedAgent(t, '1000');
      const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
      const call = payingCallTool(server.client, buyer, { name: 'text_stats', arguments: { text: 'hello world' } }).then(() => null, (e: unknown) => e as AgentpayError);
      // the gateway placed the hold: the tool is running; then the host shuts down
      await until(async () => {
        const b = await t.workspace.wallets.balance(a.walletId);
        return b.availableMinor !== b.balanceMinor;
      }, 'the hold on the wallet', { everyMs: 10 });
      const t0 = Date.now();
      await server.client.close(); // stdin end; the MCP SDK sends SIGTERM only after 2 s
      const closedMs = Date.now() - t0;

      // the host gave up on the answer; the call was still paid for and settled
      expect(await call).toMatchObject({ code: 'SELLER_UNREACHABLE', details: { paid: true, tool: 'text_stats' } });
      expect(closedMs, server.log.stderr).toBeLessThan(2000); // exited by itself, not by the SDK's SIGTERM
      expect(server.alive()).toBe(false);
      expect(await t.workspace.wallets.balance(a.walletId)).toMatchObject({ balanceMinor: '900', availableMinor: '900' });
      const mine = (await t.workspace.receipts.list()).receipts.filter((r) => r.consumerId === a.walletId);
      expect(mine.map((r) => [r.status, r.capabilityId])).toEqual([['success', caps.text_stats]]);
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      if (server.alive()) process.kill(server.pid, 'SIGKILL');
    }
  });

  it('with no call running, exits at once when stdin ends', async () => {
    const server = await launchStdio(await publishTools(), 0);
    try {
      const t0 = Date.now();
      await server.client.close();
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(server.alive()).toBe(false);
    } finally {
      if (server.alive()) process.kill(server.pid, 'SIGKILL');
    }
  });
});

describe('template pricing tool', () => {
  it('reports the price the gateway quotes, read at most once per cache period: after capabilities edit, the new price once it passed, which is what a call is charged', async () => {
    const caps = await publishTools();
    const seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
    const cacheMs = 2000;
    const c = await connectInMemory(createMcpServer({ seller, capabilities: caps, priceCacheMs: cacheMs }));
    const prices = async () => {
      const pricing = await c.client.callTool({ name: 'pricing', arguments: {} });
      expect(pricing.isError).toBeFalsy();
      return pricing.structuredContent;
    };
    const listed = (statsMinor: string) => ({
      tools: [
        { name: 'text_stats', capabilityId: caps.text_stats, priceMinor: statsMinor, currency: 'USD' },
        { name: 'top_words', capabilityId: caps.top_words, priceMinor: '100', currency: 'USD' },
      ],
    });
    try {
      // the gateway was read between these two instants: its price is kept until cacheMs after
      const before = Date.now();
      expect(await prices()).toEqual(listed('100'));
      const after = Date.now();
      await t.provider.capabilities.edit(caps.text_stats!, { priceMinor: '250' });
      if (Date.now() < before + cacheMs) expect(await prices()).toEqual(listed('100')); // (unless this machine was that slow)
      await sleep(after + cacheMs - Date.now());
      expect(await prices()).toEqual(listed('250'));

      const a = await fundedAgent(t, '1000');
      const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
      const { receipt } = await payingCallTool(c.client, buyer, { name: 'text_stats', arguments: { text: 'a b' } }, { maxPriceMinor: '250' }); // above the default ceiling
      expect(receipt?.amount).toEqual({ amountMinor: '250', currency: 'USD' });
      expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('750');
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await c.close();
    }
  });
});
