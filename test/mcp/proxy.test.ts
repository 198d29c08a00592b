/**
 * `agentpay mcp proxy -- SERVER...` as a desktop MCP host runs it: the built binary spawned
 * over stdio by a real MCP Client, running the paid stdio fixture server (the package
 * capability's server, launched through the npx stand-in) behind it, against a real HTTPS
 * gateway. The host's client knows nothing of payments: paid tools are paid by the proxy
 * with the wallet given on its command line, free ones pass as they are, a refusal reaches
 * the host as a tool error. stdout carries only MCP messages (the client would report
 * anything else as an error), logs go to stderr. The ledger is checked after each sale.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPABILITY_META, RECEIPT_META, resultBytes } from '../../packages/sdk/src/mcp/protocol.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Receipt } from '../../packages/sdk/src/protocol.js';
import { BIN, cli, removeTempDirs, tempDir } from '../cli/helpers.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { writeFileSync } from 'node:fs';
import { FAKE_NPX, money, moved, publishPackageCapability } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
let dir: string;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, '100');
  dir = tempDir('agentpay-mcp-proxy-');
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

const SALE = { buyer: '-100', seller: '97', platform: '3' };
const NOTHING = { buyer: '0', seller: '0', platform: '0' };

function keyFileOf(a: AgentWallet): string {
  const path = join(dir, `${a.walletId}.pem`);
  writeFileSync(path, a.privateKeyPem, { mode: 0o600 });
  return path;
}

/** The environment a host gives the proxy: the gateway and its CA, a private config dir, nothing else of agentpay's. */
function hostEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
  return { ...env, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: dir, AGENTPAY_BASE_URL: t.baseUrl, AGENTPAY_CA: join(t.dataDir, 'tls', 'ca.pem') };
}

/**
 * The seller's server as the command after --: the npx stand-in, given its own settings with
 * env(1), since the proxy passes no AGENTPAY_* variable to the server.
 */
const serverCommand = () => [
  'env',
  `AGENTPAY_GATEWAY_URL=${t.baseUrl}`, `AGENTPAY_PROVIDER_KEY=${t.creds.provider.apiKey}`, `AGENTPAY_CA=${t.ca}`, `AGENTPAY_CAPABILITY_ID=${capabilityId}`,
  process.execPath, FAKE_NPX, '-y', 'agentpay-test-weather@1.0.0',
];

interface Host {
  client: Client;
  stderr: () => string;
  /** errors the client reported: a line on stdout that is not MCP would be one */
  errors: Error[];
  close(): Promise<void>;
}

/** A host (an MCP client) that runs `agentpay mcp proxy FLAGS -- SERVER` over stdio. */
async function hostWithProxy(flags: string[]): Promise<Host> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', 'proxy', ...flags, '--', ...serverCommand()], env: hostEnv(), cwd: dir, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'desktop-host', version: '1' });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`the proxy did not start: ${String(e)}\nstderr:\n${stderr}`);
  }
  return { client, stderr: () => stderr, errors, close: () => client.close() };
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function expectReceiptVerifies(receipt: Receipt, result: CallToolResult): Promise<void> {
  const { publicKeyPem } = await t.workspace.platform.receiptKey(receipt.signingKeyId);
  expect(await verifyObject(publicKeyPem, receipt as unknown as Record<string, unknown>)).toBe(true);
  expect(receipt.responseHash).toBe(sha256(resultBytes(result)));
}

describe('agentpay mcp proxy', () => {
  let a: AgentWallet;
  let host: Host;
  beforeAll(async () => {
    a = await fundedAgent(t, '1000');
    host = await hostWithProxy(['--wallet', a.walletId, '--key-file', keyFileOf(a)]);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  it("passes the server's identity and tools through unchanged", async () => {
    expect(host.client.getServerVersion()).toMatchObject({ name: 'agentpay-test-weather', version: '1.0.0' });
    const { tools } = await host.client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(['bad-output', 'explode', 'flaky', 'forecast', 'ping']);
    expect(tools.find((x) => x.name === 'forecast')?._meta?.[CAPABILITY_META]).toBe(capabilityId);
  });

  it('pays a paid tool with the configured wallet: the result, its verified receipt, buyer −100, seller +97, platform +3', async () => {
    const before = await money(t, a.walletId);
    const result = (await host.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'Faro', sunny: true, tempC: 21.5 });
    const receipt = result._meta?.[RECEIPT_META] as Receipt;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, amount: { amountMinor: '100', currency: 'USD' } });
    await expectReceiptVerifies(receipt, result);

    expect(await moved(t, a.walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect(host.stderr()).toContain(`agentpay mcp proxy: paying with wallet ${a.walletId} (at most 100 minor units per call, the default)`);
    expect(host.stderr()).toContain(`agentpay: paid 100 USD minor units for tool forecast (receipt ${receipt.id}, success)`);
  });

  it('leaves a free tool as it is, and gives a paid tool error back with its failed receipt (refunded)', async () => {
    const before = await money(t, a.walletId);
    expect(await host.client.callTool({ name: 'ping', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'pong' }] });
    const failed = (await host.client.callTool({ name: 'flaky', arguments: {} })) as CallToolResult;
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'upstream weather service is down' }] });
    expect(failed._meta?.[RECEIPT_META]).toMatchObject({ status: 'failed' });
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('wrote nothing but MCP on stdout', () => {
    expect(host.errors).toEqual([]);
  });
});

describe('agentpay mcp proxy: refusals', () => {
  it('refuses a price above --max-price as a tool error naming PRICE_ABOVE_CLIENT_LIMIT and the flag: nothing paid', async () => {
    const a = await fundedAgent(t, '1000');
    const host = await hostWithProxy(['--wallet', a.walletId, '--key-file', keyFileOf(a), '--max-price', '99']);
    try {
      const before = await money(t, a.walletId);
      const result = (await host.client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('PRICE_ABOVE_CLIENT_LIMIT') });
      expect(result.content[0]).toMatchObject({ text: expect.stringContaining('--max-price 100') });
      expect(result._meta?.['agentpay/error']).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99' } });
      expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
      expect(host.stderr()).toContain('PRICE_ABOVE_CLIENT_LIMIT');
      expect(host.errors).toEqual([]);
    } finally {
      await host.close();
    }
  }, 60_000);

  it('refuses a malformed key file or a missing server command before starting anything: stderr only, stdout empty', async () => {
    const bad = join(dir, 'bad.pem');
    writeFileSync(bad, '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n');
    const env = { AGENTPAY_BASE_URL: t.baseUrl, AGENTPAY_CA: join(t.dataDir, 'tls', 'ca.pem') };
    const r = await cli(['mcp', 'proxy', '--wallet', 'wal_x', '--key-file', bad, '--', ...serverCommand()], { configDir: dir, env });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--key-file: .*bad\.pem/);

    const none = await cli(['mcp', 'proxy', '--wallet', 'wal_x', '--key-file', bad], { configDir: dir, env });
    expect(none.exitCode).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('put its command after --');
  });
});
