/**
 * Paid MCP tools paid with payment sessions (docs/protocol.md § Sessions over MCP): the fixture
 * MCP server over streamable HTTP on 127.0.0.1, its seller created with `sessions`, sells through
 * the real HTTPS test gateway on the backend of the run; a framework's MCP Client wrapped with
 * wrapMcpClient and a Buyer calls a paid tool N times. One session is opened (one gateway trip),
 * each call carries a voucher in `_meta["agentpay/voucher"]` and gets the seller-signed receipt in
 * `_meta["agentpay/session-receipt"]`; the seller's claims reach its wallet, and after
 * `buyer.close()` the ledger moved exactly what the successful calls cost (the seller credited
 * less the 3% fee, the fee to the platform, the rest of the cap released). A tool error is not
 * charged; a cap too low is topped up; a buyer that prefers per-call pays per-call.
 */
import type http from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import type { BuyerSessionOptions } from '../../packages/sdk/src/buyer/session-pool.js';
import { payingCallTool, wrapMcpClient, type PaidToolCall } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments, type SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { RECEIPT_META, resultBytes, SESSION_RECEIPT_META, toolRequestHash } from '../../packages/sdk/src/mcp/protocol.js';
import type { Session, SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { expectLedgerConsistent, fundedAgent, sha256, type AgentWallet } from '../e2e/helpers.js';
import { weatherServer } from './fixtures/weather.js';
import { listenStateless, money, publishPackageCapability } from './helpers.js';

const PRICE = 100n;
/** 3% rounded down, over what a session paid in all */
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
let capabilityId: string;
let seller: SellerPayments;
let server: http.Server;
let url = '';
const runs: Record<string, number> = {};
/** the agentpay `_meta` keys of every tools/call the clients sent */
const seen: string[][] = [];

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publishPackageCapability(t, PRICE.toString());
  seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {}, sessions: { claimEvery: 8 } });
  ({ server, url } = await listenStateless(() => weatherServer(seller, capabilityId, runs)));
});

afterAll(async () => {
  await seller?.close?.();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await t?.close();
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  // what goes on the wire: the agentpay _meta keys of each tools/call sent
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    const m = message as { method?: string; params?: { _meta?: Record<string, unknown> } };
    if (m.method === 'tools/call') seen.push(Object.keys(m.params?._meta ?? {}).filter((k) => k.startsWith('agentpay/')).sort());
    return send(message, options);
  };
  await client.connect(transport);
  return client;
}
const buyerFor = (a: AgentWallet, sessions: BuyerSessionOptions = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500', sessions });
const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);
const balance = async (walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};

/** Closed sessions moved exactly `paid`: the seller got it less each session's fee, the platform the fees, nothing held. */
async function expectSettled(walletId: string, before: Awaited<ReturnType<typeof money>>, sessions: Session[], paid: bigint): Promise<void> {
  expect(sessions.reduce((sum, s) => sum + BigInt(s.claimedMinor), 0n)).toBe(paid);
  const fees = sessions.reduce((sum, s) => sum + fee(BigInt(s.claimedMinor)), 0n);
  for (const s of sessions) expect(s).toMatchObject({ status: 'closed', heldMinor: '0', feeMinor: fee(BigInt(s.claimedMinor)).toString() });
  expect(await money(t, walletId)).toEqual({ buyer: before.buyer - paid, seller: before.seller + paid - fees, platform: before.platform + fees });
  expect(await balance(walletId)).toEqual({ balance: before.buyer - paid, held: 0n });
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

describe('a paid MCP tool paid with a session', () => {
  it('wrapMcpClient: 12 calls, one session opened, 12 vouchers, receipts verified, claims in the seller wallet, ledger checked', async () => {
    const a = await fundedAgent(t, '20000');
    const before = await money(t, a.walletId);
    const client = await connect();
    const buyer = buyerFor(a);
    const paid: (PaidToolCall & { tool: string })[] = [];
    wrapMcpClient(client, buyer, { onPaid: (c) => paid.push(c) });
    const seenBefore = seen.length;
    const ran = runs.forecast ?? 0;

    for (let i = 0; i < 12; i++) {
      // what a framework does with the client it was handed: nothing agentpay-specific
      const result = (await client.callTool({ name: 'forecast', arguments: { city: 'Faro' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ city: 'Faro', sunny: true, tempC: 21.5 });
      expect(result._meta?.[RECEIPT_META]).toBeUndefined();
      const receipt = result._meta?.[SESSION_RECEIPT_META] as SessionReceipt;
      expect(receipt).toMatchObject({ type: 'session.receipt', sequence: i + 1, chargedMinor: '100', cumulativeMinor: String((i + 1) * 100), requestHash: await toolRequestHash('forecast') });
      expect(receipt.responseHash).toBe(sha256(resultBytes(result)));
    }
    expect((runs.forecast ?? 0) - ran).toBe(12);
    expect(paid).toHaveLength(12);
    expect(paid.every((c) => c.receipt === null && c.sessionReceipt?.chargedMinor === '100')).toBe(true);

    // on the wire: one payment-required call, one open, then a voucher per call (no payment-required round trip after the first)
    const calls = seen.slice(seenBefore);
    expect(calls[0]).toEqual([]);
    expect(calls[1]).toEqual(['agentpay/session-open']);
    expect(calls.slice(2)).toEqual(Array(12).fill(['agentpay/voucher']));

    // the gateway: one session, the seller's receipts signed by the key its grant names
    const [open] = await sessionsOf(a.walletId);
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    expect(open).toMatchObject({ status: 'open', capMinor: String(PRICE * 100n) });
    const grantKey = (await seller.sessions!.publicKeyPem());
    expect(await verifyObject(grantKey, paid[11]!.sessionReceipt as unknown as Record<string, unknown>)).toBe(true);
    // the seller claims every 8 vouchers without the call waiting: the seller's wallet has them once the session says so
    await until(async () => (await sessionsOf(a.walletId))[0]?.claimedMinor === '800', 'the claim at 8 vouchers');
    const claimed = await money(t, a.walletId);
    expect(claimed.seller - before.seller).toBe(800n - fee(800n));
    expect(await balance(a.walletId)).toEqual({ balance: before.buyer - 800n, held: PRICE * 100n - 800n });

    const closed = await buyer.close();
    expect(closed).toEqual([expect.objectContaining({ id: open!.id, status: 'closed', claimedMinor: '1200' })]);
    expect(seen.slice(seenBefore + 14)).toEqual([['agentpay/session-close']]);
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 12n * PRICE);
    await client.close();
  });

  it('charges nothing for a tool error (no session receipt); both tools of the capability share the session', async () => {
    const a = await fundedAgent(t, '20000');
    const before = await money(t, a.walletId);
    const client = await connect();
    const buyer = buyerFor(a);
    const outcomes: string[] = [];
    for (const tool of ['forecast', 'flaky', 'forecast', 'explode', 'forecast']) {
      const call = await payingCallTool(client, buyer, { name: tool, arguments: tool === 'forecast' ? { city: 'Porto' } : {} });
      outcomes.push(`${tool}:${call.result.isError ? 'error' : 'ok'}:${call.sessionReceipt ? call.sessionReceipt.chargedMinor : 'none'}`);
    }
    expect(outcomes).toEqual(['forecast:ok:100', 'flaky:error:none', 'forecast:ok:100', 'explode:error:none', 'forecast:ok:100']);
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 3n * PRICE);
    await client.close();
  });

  it('tops up a cap too low for the next call: one session for 7 calls at a first cap of 300', async () => {
    const a = await fundedAgent(t, '5000');
    const before = await money(t, a.walletId);
    const buyer = buyerFor(a, { capMinor: '300' });
    const client = wrapMcpClient(await connect(), buyer);
    const results: CallToolResult[] = [];
    for (let i = 0; i < 7; i++) results.push((await client.callTool({ name: 'forecast', arguments: { city: 'Braga' } })) as CallToolResult);
    expect(results.map((r) => (r._meta?.[SESSION_RECEIPT_META] as SessionReceipt).sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(buyer.sessions()).toEqual([expect.objectContaining({ capMinor: '900', topUps: 2 })]);
    const sessions = await sessionsOf(a.walletId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ capMinor: '900' });
    // a hold for the open and one per top-up
    const holds = (await t.workspace.wallets.ledger(a.walletId)).filter((e) => e.transactionId === sessions[0]!.id && e.type === 'hold').map((e) => e.holdMinor);
    expect(holds).toEqual(['300', '300', '300']);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 7n * PRICE);
    await client.close();
  });

  it('pays per-call when the buyer prefers it, when given a Payer rather than a Buyer, and when the wallet cannot hold the cap', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const client = await connect();
    const perCall = await payingCallTool(client, buyerFor(a, { prefer: 'per-call' }), { name: 'forecast', arguments: { city: 'Lagos' } });
    expect(perCall.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '100' } });
    expect(perCall.sessionReceipt).toBeUndefined();
    const payerOnly = await payingCallTool(client, buyerFor(a).payer, { name: 'forecast', arguments: { city: 'Lagos' } });
    expect(payerOnly.receipt).toMatchObject({ status: 'success' });
    // and when the wallet cannot hold the cap (100 calls = 10000): the open is refused, the call paid per-call
    const cannotHold = await payingCallTool(client, buyerFor(a), { name: 'forecast', arguments: { city: 'Lagos' } });
    expect(cannotHold.receipt).toMatchObject({ status: 'success' });
    expect(cannotHold.sessionReceipt).toBeUndefined();
    expect(await sessionsOf(a.walletId)).toEqual([]);
    expect(await money(t, a.walletId)).toEqual({ buyer: before.buyer - 300n, seller: before.seller + 291n, platform: before.platform + 9n });
    await expectLedgerConsistent(t.workspace, a.walletId);
    await client.close();
  });
});
