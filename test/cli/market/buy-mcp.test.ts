/**
 * `agentpay buy` (the built binary) of MCP capabilities and of a capability id whose endpoint
 * sells another capability. An MCP tool at a URL is bought through the MCP buyer
 * (payingCallTool): --data is the tool's arguments, the result and the verified receipt are
 * printed. What was looked up is what is paid for: a seller quoting another capability is
 * refused with CHALLENGE_MISMATCH before anything is signed. An npx package capability stays
 * NOT_CALLABLE, with a next step that works. Money is checked after every purchase.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy, buyText, type BuyResult } from '../../../src/cli/buy.js';
import type { Connection } from '../../../src/cli/client.js';
import { CliError } from '../../../src/cli/errors/index.js';
import { caPath } from '../../../src/cli/local-gateway.js';
import { createSellerPayments, registerPaidTool } from '../../../packages/sdk/src/mcp/seller.js';
import { verifyObject } from '../../../packages/sdk/src/signing.js';
import { resultBytes } from '../../../packages/sdk/src/mcp/protocol.js';
import { expectLedgerConsistent, fundedAgent, publish, sha256, startNodeSeller, type AgentWallet, type RunningSeller } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cliFor, errorOf, type Cli } from './helpers.js';
import { gatewayEnv, spawnCli } from '../helpers.js';
import { listenStateless } from '../../mcp/helpers.js';

let t: TestGateway;
let cli: Cli;
let mcpServer: http.Server;
let mcpUrl: string;
let restSeller: RunningSeller;
const caps = { stats: '', flaky: '', impostor: '', rest: '', restImpostor: '', pkg: '' };
const runs: Record<string, number> = {};
const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  const seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {} });
  const tools = () => {
    const mcp = new McpServer({ name: 'cli-tools', version: '1' });
    registerPaidTool(mcp, 'text_stats', { seller, capabilityId: caps.stats, inputSchema: { text: z.string() }, outputSchema: { words: z.number() } }, async ({ text }) => {
      ran('text_stats');
      const words = text.split(/\s+/).filter(Boolean).length;
      return { content: [{ type: 'text', text: `${words} words` }], structuredContent: { words } };
    });
    registerPaidTool(mcp, 'flaky', { seller, capabilityId: caps.flaky }, async () => {
      ran('flaky');
      return { content: [{ type: 'text', text: 'upstream down' }], isError: true };
    });
    return mcp;
  };
  ({ server: mcpServer, url: mcpUrl } = await listenStateless(tools));
  const mcpCap = async (toolName: string, priceMinor: string, name = toolName) =>
    (await t.provider.capabilities.publish({ name, description: `cli ${name}`, protocol: 'mcp', toolName, priceMinor, category: 'cli-mcp', endpoint: mcpUrl })).capability.id;
  caps.stats = await mcpCap('text_stats', '100');
  caps.flaky = await mcpCap('flaky', '100');
  // the same tool at the same endpoint, under another capability id: the tool sells caps.stats
  caps.impostor = await mcpCap('text_stats', '1', 'text_stats, cheaper');
  caps.pkg = (await t.provider.capabilities.publish({
    name: 'packaged', description: 'cli packaged', protocol: 'mcp', toolName: 'run', priceMinor: '100', category: 'cli-mcp',
    address: { kind: 'package', command: 'npx', args: ['-y', 'cli-packaged@1.0.0'], version: '1.0.0' },
  })).capability.id;

  caps.rest = await publish(t, '100', 'REST forecast sold at the seller');
  restSeller = await startNodeSeller(t, caps.rest, { onError: () => {} });
  caps.restImpostor = (await t.provider.capabilities.publish({ name: 'REST impostor', description: 'points at a seller of another capability', protocol: 'rest', priceMinor: '1', category: 'weather', endpoint: `${restSeller.url}/forecast` })).capability.id;
});
afterAll(async () => {
  await restSeller?.close();
  mcpServer?.closeAllConnections();
  await new Promise<void>((r) => (mcpServer ? mcpServer.close(() => r()) : r()));
  cli?.close();
  await t?.close();
});

async function agent(amountMinor: string): Promise<AgentWallet & { keyFile: string }> {
  const a = await fundedAgent(t, amountMinor);
  return { ...a, keyFile: cli.file(`${a.walletId}.pem`, a.privateKeyPem, 0o600) };
}
const buyArgs = (a: { walletId: string; keyFile: string }, target: string, ...extra: string[]) => ['buy', target, '--wallet', a.walletId, '--key-file', a.keyFile, ...extra];
const balance = async (walletId: string) => t.workspace.wallets.balance(walletId);

describe('agentpay buy of an MCP capability', () => {
  it('calls its tool with --data as the arguments, pays, and prints the result with the verified receipt', async () => {
    const a = await agent('1000');
    const out = await cli.json<BuyResult>(buyArgs(a, caps.stats, '--data', '{"text":"agents pay per call"}', '--max-price', '100'));

    expect(out).toMatchObject({ url: mcpUrl, capabilityId: caps.stats, tool: 'text_stats', status: null, ok: true });
    expect(out.body).toEqual({ content: [{ type: 'text', text: '4 words' }], structuredContent: { words: 4 } });
    expect(out.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId: caps.stats, amount: { amountMinor: '100', currency: 'USD' } });
    // checked here without the CLI: the platform's signature, and the hash of the result printed
    const { publicKeyPem } = await t.workspace.platform.receiptKey(out.receipt!.signingKeyId);
    expect(await verifyObject(publicKeyPem, out.receipt as unknown as Record<string, unknown>)).toBe(true);
    expect(out.receipt!.responseHash).toBe(sha256(resultBytes(out.body as never)));
    expect(await balance(a.walletId)).toMatchObject({ balanceMinor: '900', availableMinor: '900' });
    await expectLedgerConsistent(t.workspace, a.walletId);

    // a person's view: the result, that it is an MCP tool's, and the receipt
    const human = buyText(out);
    expect(human).toContain('4 words');
    expect(human).toContain('MCP tool text_stats: result');
    expect(human).toContain('receipt (signature and response hash verified)');
  });

  it('--output FILE writes the canonical JSON of the result, the bytes the receipt covers, and receipts verify --response checks it', async () => {
    const a = await agent('1000');
    const file = join(cli.dir, 'stats.json');
    const r = await cli.run(buyArgs(a, caps.stats, '--data', '{"text":"agents pay per call"}', '--output', file));
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as BuyResult;
    expect(readFileSync(file, 'utf8')).toBe('{"content":[{"text":"4 words","type":"text"}],"structuredContent":{"words":4}}');
    expect(out.output).toEqual({ path: file, bytes: statSync(file).size });
    expect(await balance(a.walletId)).toMatchObject({ balanceMinor: '900' });
    await expectLedgerConsistent(t.workspace, a.walletId);
    const purchase = cli.file('stats-purchase.json', r.stdout);
    const ok = await cli.run(['receipts', 'verify', purchase, '--response', file]);
    expect(ok.exitCode, ok.stdout).toBe(0);
    writeFileSync(file, readFileSync(file, 'utf8').replace('4 words', '5 words'));
    const bad = await cli.run(['receipts', 'verify', purchase, '--response', file]);
    expect(bad.exitCode).toBe(1);
    expect(JSON.parse(bad.stdout).checks.responseHash).toBe('mismatch');
  });

  it('a tool error after payment: printed with its failed receipt, exit 1, the hold refunded', async () => {
    const a = await agent('1000');
    const r = await cli.run(buyArgs(a, caps.flaky));
    expect(r.exitCode).toBe(1);
    const out = JSON.parse(r.stdout) as BuyResult;
    expect(out).toMatchObject({ tool: 'flaky', ok: false, status: null, body: { isError: true, content: [{ type: 'text', text: 'upstream down' }] }, receipt: { status: 'failed' } });
    expect(r.stderr).toContain('refunded');
    expect(await balance(a.walletId)).toMatchObject({ balanceMinor: '1000', availableMinor: '1000' });
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('refuses a tool that sells another capability than the id given: CHALLENGE_MISMATCH, exit 1, nothing run or charged', async () => {
    const a = await agent('1000');
    const before = runs.text_stats ?? 0;
    const r = await cli.run(buyArgs(a, caps.impostor, '--data', '{"text":"x"}'));
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'CHALLENGE_MISMATCH', details: { capabilityId: caps.impostor, challengeCapabilityId: caps.stats } });
    expect(runs.text_stats ?? 0).toBe(before);
    expect(await balance(a.walletId)).toMatchObject({ balanceMinor: '1000', availableMinor: '1000' });
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1);
  });

  it('checks the arguments before paying: --data must be a JSON object, --method does not apply (exit 2)', async () => {
    const a = await agent('1000');
    const list = await cli.run(buyArgs(a, caps.stats, '--data', '["x"]'));
    expect(list.exitCode).toBe(2);
    expect(errorOf(list)).toMatchObject({ code: 'USAGE', details: { flag: '--data' } });
    const method = await cli.run(buyArgs(a, caps.stats, '--method', 'GET'));
    expect(method.exitCode).toBe(2);
    expect(errorOf(method)).toMatchObject({ code: 'USAGE', details: { flag: '--method' } });
    expect((await balance(a.walletId)).balanceMinor).toBe('1000');
  });

  it('an npx package capability stays NOT_CALLABLE, pointing at the SDK functions that run and pay it', async () => {
    const a = await agent('1000');
    const r = await cli.run(buyArgs(a, caps.pkg));
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'NOT_CALLABLE', details: { capabilityId: caps.pkg } });
    // the next step (printed on a terminal only)
    const conn = { baseUrl: t.baseUrl, ca: caPath(t.dataDir), sources: {} } as Connection;
    const e = await buy(conn, () => t.workspace, { target: caps.pkg, walletId: a.walletId, keyFile: a.keyFile }).then(() => null, (err: unknown) => err as CliError);
    expect(e).toBeInstanceOf(CliError);
    expect(e?.tryNext).toMatch(/launchPackageCapability/);
    expect(e?.tryNext).toMatch(/payingCallTool from agentpay-sdk\/mcp\/buyer, calling the tool run/);
    expect((await balance(a.walletId)).balanceMinor).toBe('1000');
  });
});

describe('agentpay buy of a REST capability id', () => {
  it('refuses an endpoint whose seller quotes another capability: CHALLENGE_MISMATCH, exit 1, no proof sent, nothing charged', async () => {
    const a = await agent('1000');
    const [handled, payments] = [{ ...restSeller.log.handled }, restSeller.log.paymentsReceived];
    const r = await cli.run(buyArgs(a, caps.restImpostor, '--data', '{}'));
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'CHALLENGE_MISMATCH', details: { capabilityId: caps.restImpostor, challengeCapabilityId: caps.rest, amountMinor: '100' } });
    expect(restSeller.log.handled).toEqual(handled);
    expect(restSeller.log.paymentsReceived).toBe(payments);
    expect(await balance(a.walletId)).toMatchObject({ balanceMinor: '1000', availableMinor: '1000' });

    // the seller itself sells, by its URL
    const out = await cli.json<BuyResult>(buyArgs(a, `${restSeller.url}/forecast`, '--data', '{}'));
    expect(out.receipt).toMatchObject({ status: 'success', capabilityId: caps.rest });
    expect((await balance(a.walletId)).balanceMinor).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

describe('agentpay buy --wait-approval of an MCP tool', () => {
  it('waits while the call is held, calls the tool once a person approves, and pays exactly the price', async () => {
    const ws = await t.newWorkspace('MCP approvals');
    await ws.client.policies.apply('approval "everything":\n  always\n');
    const w = await t.newAgentWallet(ws.client, 'mcp-agent');
    await ws.client.wallets.fund(w.walletId, '500');
    const keyFile = cli.file(`${w.walletId}.pem`, w.privateKeyPem, 0o600);
    const before = runs.text_stats ?? 0;
    const run = spawnCli([...buyArgs({ walletId: w.walletId, keyFile }, caps.stats, '--data', '{"text":"one two three"}', '--wait-approval', '60'), '--json'], {
      configDir: cli.dir, env: gatewayEnv(t, ws.apiKey),
    });
    await run.waitFor('stderr', 'waiting up to');
    const approvalId = /approval (apr_\w+)/.exec(run.stderr())![1]!;
    expect(runs.text_stats ?? 0).toBe(before);
    expect((await ws.client.wallets.balance(w.walletId)).balanceMinor).toBe('500');

    await ws.client.approvals.approve(approvalId, { resolvedBy: 'alice' });
    const r = await run.done;
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as BuyResult;
    expect(out).toMatchObject({ tool: 'text_stats', ok: true, body: { structuredContent: { words: 3 } } });
    expect(out.receipt).toMatchObject({ status: 'success', consumerId: w.walletId, capabilityId: caps.stats, amount: { amountMinor: '100', currency: 'USD' } });
    expect((await ws.client.wallets.balance(w.walletId)).balanceMinor).toBe('400');
    expect(runs.text_stats).toBe(before + 1);
    await expectLedgerConsistent(ws.client, w.walletId);
  });
});
