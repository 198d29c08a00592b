/**
 * `agentpay mcp proxy` pays with payment sessions (docs/cli.md, docs/protocol.md § Sessions over
 * MCP): the built binary spawned over stdio by a real MCP Client (a desktop host that knows
 * nothing of payments), the paid stdio fixture server behind it with a seller that takes
 * sessions, against a real HTTPS gateway on the backend of the run. Five calls of a paid tool:
 * one session opened, a voucher per call with the seller's receipt in the result; when the host
 * goes away the proxy closes the session through the server, and the ledger moved exactly the
 * five calls (seller +485, platform +15, the rest of the cap released).
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECEIPT_META, SESSION_RECEIPT_META } from '../../packages/sdk/src/mcp/protocol.js';
import type { SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { BIN, removeTempDirs, tempDir } from '../cli/helpers.js';
import { expectLedgerConsistent, fundedAgent } from '../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { FAKE_NPX, money, publishPackageCapability } from './helpers.js';

let t: TestGateway;
let capabilityId: string;
let dir: string;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, '100');
  dir = tempDir('agentpay-mcp-sessions-proxy-');
});
afterAll(async () => {
  await t?.close();
  removeTempDirs();
});

describe('agentpay mcp proxy with a server that takes payment sessions', () => {
  it('opens one session for five calls, and closes it when the host goes away: the ledger moved exactly the five calls', async () => {
    const a = await fundedAgent(t, '20000');
    const keyFile = join(dir, `${a.walletId}.pem`);
    writeFileSync(keyFile, a.privateKeyPem, { mode: 0o600 });
    const before = await money(t, a.walletId);

    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
    const server = [
      'env', `AGENTPAY_GATEWAY_URL=${t.baseUrl}`, `AGENTPAY_PROVIDER_KEY=${t.creds.provider.apiKey}`, `AGENTPAY_CA=${t.ca}`, `AGENTPAY_CAPABILITY_ID=${capabilityId}`, 'AGENTPAY_TEST_SESSIONS=1',
      process.execPath, FAKE_NPX, '-y', 'agentpay-test-weather@1.0.0',
    ];
    const transport = new StdioClientTransport({
      command: process.execPath, args: [BIN, 'mcp', 'proxy', '--wallet', a.walletId, '--key-file', keyFile, '--', ...server],
      env: { ...env, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: dir, AGENTPAY_BASE_URL: t.baseUrl, AGENTPAY_CA: join(t.dataDir, 'tls', 'ca.pem') }, cwd: dir, stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const host = new Client({ name: 'desktop-host', version: '1' });
    await host.connect(transport);

    for (let i = 0; i < 5; i++) {
      const result = (await host.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ city: 'Faro', sunny: true, tempC: 21.5 });
      expect(result._meta?.[RECEIPT_META]).toBeUndefined();
      expect(result._meta?.[SESSION_RECEIPT_META]).toMatchObject({ sequence: i + 1, chargedMinor: '100', cumulativeMinor: String((i + 1) * 100) } satisfies Partial<SessionReceipt>);
    }
    const listed = async () => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === a.walletId);
    const [open] = await listed();
    expect(await listed()).toHaveLength(1);
    expect(open).toMatchObject({ status: 'open', capMinor: '10000', claimedMinor: '0' });
    expect(stderr).toContain(`agentpay: paid 100 minor units for tool forecast with session ${open!.id} (voucher 5, cumulative 500)`);

    // the host goes away: the proxy closes the session through the server before stopping it
    await host.close();
    await until(async () => (await listed())[0]?.status === 'closed', 'the proxy to close the session');
    expect((await listed())[0]).toMatchObject({ claimedMinor: '500', feeMinor: '15', heldMinor: '0' });
    expect(await money(t, a.walletId)).toEqual({ buyer: before.buyer - 500n, seller: before.seller + 485n, platform: before.platform + 15n });
    const b = await t.workspace.wallets.balance(a.walletId);
    expect(b.availableMinor).toBe(b.balanceMinor);
    await expectLedgerConsistent(t.workspace, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
    await until(() => stderr.includes('agentpay: closed 1 payment session(s)'), 'the proxy to log the close', { limitMs: 10_000 });
  });
});
