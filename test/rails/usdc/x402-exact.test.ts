/**
 * Issue 30: any x402 client pays. A stock @x402/fetch with @x402/evm's ExactEvmScheme and a viem
 * local account (no agentpay code) pays a fastify seller built with our SDK, in USDC by EIP-3009
 * on a real local chain (Hardhat's EVM engine EDR, the EIP-3009 test token): the gateway verifies the
 * authorization before the handler, settles it on chain after, and records the sale in the
 * ledger (100 cents in the platform's x402 holding, 97 to the seller, 3 fee) with a receipt
 * carrying the chain transaction, answered in PAYMENT-RESPONSE. The same authorization pays
 * once (sent again, or at once to two sellers); an expired or underfunded one is refused
 * before the handler; a failed handler settles nothing; a settlement the chain refuses after the
 * handler ran is retried, then recorded failed and alerted (x402.settlement_failed, to the seller and
 * the operator, with its alert mail). The settlement duty (moved by the manual clock and the chain's
 * own time, no sleeping) settles a failed one once the chain takes it, takes up a settlement left
 * `settling` by a crash after its transaction went out (found on chain, recorded once, never sent
 * twice), gives up an expired one with an alert, and reconciles settled ones against the chain.
 * After every path the ledger is consistent and what moved on chain is what the ledger holds.
 * Sellers: fastify and web-standard (paidHandler). What the gateway does not settle (exact by Permit2,
 * exact on Solana, another scheme) is refused before the handler.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { getAddress, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { PaymentRequirementsV2Schema } from '@x402/core/schemas';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isPaymentRequired } from '@x402/core/schemas';
import type { PaymentRequired } from '@x402/core/types';
import { z } from 'zod';
import { createSellerPayments, registerPaidTool } from '../../../packages/sdk/src/mcp/seller.js';
import { agentpaySeller } from '../../../packages/sdk/src/seller/fastify.js';
import { paidHandler } from '../../../packages/sdk/src/seller/web.js';
import { decodeHeader, RECEIPT_HEADER, type Receipt } from '../../../packages/sdk/src/protocol.js';
import type { RailAdapters } from '../../../src/domain/rails/adapters.js';
import { usdcBaseRails } from '../../../src/rails/usdc/adapter.js';
import { usdcExactChain } from '../../../src/rails/usdc/exact.js';
import { PLATFORM_X402_WALLET_ID, type ExactChain } from '../../../src/domain/payments/x402-exact.js';
import type { X402SettlementFailedData } from '../../../packages/sdk/src/contract/x402.js';
import type { BazaarResourceList } from '../../../packages/sdk/src/contract/bazaar.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../../src/domain/tenancy/tenants.js';
import { ManualClock, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { publish } from '../../e2e/helpers.js';
import { expectConsistent } from '../../wallets/ledger-checks.js';
import { CHAIN_ID, CONFIRMATIONS, startChain, type Chain } from './chain.js';
import { compileTestContracts } from './compile.js';

const NETWORK = `eip155:${CHAIN_ID}`;
const PRICE_UNITS = 1_000_000n; // 100 cents in USDC base units

let chain: Chain;
let t: TestGateway & { clock: ManualClock };
let exact: ExactChain;
let capabilityId: string;
let sellers: { app: FastifyInstance; url: string }[] = [];
let miner: ReturnType<typeof setInterval>;
const handled: string[] = [];
/** what the sellers reported through onError (their default prints it on stderr) */
const reported: { stage: string; code: string }[] = [];
let treasuryStart = 0n;

/** What one gateway instance runs on: its own adapter (its own treasury nonce manager) over the one chain. */
function gatewayRails(clock: ManualClock): { adapters: RailAdapters; exact: ExactChain } {
  const { adapter, pricing } = usdcBaseRails({
    chainId: CHAIN_ID, usdcAddress: chain.token, confirmations: CONFIRMATIONS, treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic,
    clock, priceFeed: chain.aggregator, transport: http(chain.url),
  });
  const exactChain = usdcExactChain(adapter, { eip712: { name: 'USD Coin (test)', version: '2' }, pollingIntervalMs: 50 });
  return { adapters: { providers: [adapter], screening: { screen: async () => 'clear' }, pricing, exact: exactChain }, exact: exactChain };
}

const gatewayConfig = (adapters: RailAdapters) => ({ mode: 'production' as const, rails: { adapters, pollIntervalMs: 0, reconcileIntervalMs: 0 } });

async function seller(gatewayUrl = t.baseUrl): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await app.register(agentpaySeller, {
    gatewayUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, batch: false,
    onError: (error, c) => reported.push({ stage: c.stage, code: (error as { code?: string }).code ?? String(error) }),
  });
  app.post('/forecast', { config: { agentpay: { capabilityId } } }, async () => {
    handled.push('forecast');
    return { forecast: 'sunny' };
  });
  app.post('/pauses', { config: { agentpay: { capabilityId } } }, async () => {
    handled.push('pauses');
    await pauseToken('pause'); // the token refuses every transfer from now: the settlement will revert
    return { forecast: 'sunny' };
  });
  app.post('/broken', { config: { agentpay: { capabilityId } } }, async (_req, reply) => {
    handled.push('broken');
    return reply.code(500).send({ error: 'down' });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

async function pauseToken(functionName: 'pause' | 'unpause') {
  const hash = await chain.wallet.writeContract({ address: chain.token, abi: compileTestContracts().TestUSDC.abi, functionName, args: [], account: chain.owner, chain: null, gas: 300_000n } as never);
  await chain.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
}

beforeAll(async () => {
  chain = await startChain();
  // the confirmations come from blocks mined in the background, as on a live chain
  miner = setInterval(() => { chain.rpc('evm_mine').catch(() => undefined); }, 100);
  const clock = new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
  const { adapters, exact: chainOfGateway } = gatewayRails(clock);
  exact = chainOfGateway;
  t = Object.assign(await startTestGateway({ clock, keepDataDir: true, config: gatewayConfig(adapters) }), { clock });
  capabilityId = await publish(t, '100');
  sellers = [await seller(), await seller()];
  await chain.send(chain.owner, chain.token, 'mint', [chain.payer.address, 10n * PRICE_UNITS]);
  treasuryStart = await chain.usdcOf(chain.treasury);
}, 120_000);

afterAll(async () => {
  clearInterval(miner);
  for (const s of sellers) await s.app.close();
  await t?.close();
  await chain?.close();
});

/** A stock x402 client: @x402/fetch with @x402/evm's exact scheme over a viem local account; records what it sends. */
function stockBuyer(account: LocalAccount, inner: typeof fetch = fetch) {
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const sig = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('payment-signature');
    if (sig) sent.push(sig);
    return inner(input, init);
  };
  // on Base, USDC is one of x402's default assets; the local chain's token is allowed by name, as any other token would be
  const client = x402Client.fromConfig({
    schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(account) }],
    spendControls: { allowedAssets: [{ network: NETWORK, asset: chain.token, maxAmountPerPayment: (2n * PRICE_UNITS).toString() }] },
  });
  return { pay: wrapFetchWithPayment(recording, client), sent };
}

/** An `exact` PaymentPayload signed by the stock scheme for the seller's offer. */
async function stockPayload(account: LocalAccount, url: string, tweak?: (a: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST' });
  expect(res.status).toBe(402);
  const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  const accepted = required.accepts.find((a) => a.scheme === 'exact')!;
  const scheme = new ExactEvmScheme(account);
  if (tweak) tweak(accepted as unknown as Record<string, unknown>);
  const partial = await scheme.createPaymentPayload(2, accepted);
  return { ...partial, x402Version: 2, resource: required.resource, accepted };
}

/** The same, as a PAYMENT-SIGNATURE value. */
async function stockSignature(account: LocalAccount, url: string, tweak?: (a: Record<string, unknown>) => void): Promise<string> {
  return encodePaymentSignatureHeader(await stockPayload(account, url, tweak) as never);
}

const chainState = async () => ({ payer: await chain.usdcOf(chain.payer.address), treasury: await chain.usdcOf(chain.treasury) });

async function walletBalance(id: string): Promise<bigint> {
  const entries = await t.operator.wallets.ledger(id).catch(() => []);
  expectConsistent(entries);
  return entries.reduce((s, e) => s + BigInt(e.amountMinor), 0n);
}

async function books() {
  return {
    seller: await walletBalance(t.creds.provider.walletId),
    fee: await walletBalance(PLATFORM_REVENUE_WALLET_ID),
    holding: await walletBalance(PLATFORM_X402_WALLET_ID),
  };
}

/**
 * One authorization signed by the stock scheme, sent at once to both sellers: one pays (200), the other is
 * refused for its nonce (402); the handler runs once, the chain moves the price once, and the books
 * record one sale (97 / 3, nothing left in the holding). Returns the PAYMENT-SIGNATURE sent.
 */
async function settlesOnceSentToBoth(urls: string[]): Promise<string> {
  const before = { chain: await chainState(), books: await books() };
  const n = handled.length;
  const sig = await stockSignature(chain.payer, `${urls[0]}/forecast`);
  const answers = await Promise.all(urls.map((u) => fetch(`${u}/forecast`, { method: 'POST', headers: { 'payment-signature': sig } })));
  expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
  const refused = answers.find((a) => a.status === 402)!;
  expect(decodePaymentRequiredHeader(refused.headers.get('payment-required')!).error).toMatch(/^invalid_exact_evm_nonce/);
  expect(handled.slice(n)).toEqual(['forecast']);
  // one transfer on chain, one sale in the books, whichever seller took it
  const after = { chain: await chainState(), books: await books() };
  expect(before.chain.payer - after.chain.payer).toBe(PRICE_UNITS);
  expect(after.chain.treasury - before.chain.treasury).toBe(PRICE_UNITS);
  expect(after.books.seller - before.books.seller).toBe(97n);
  expect(after.books.fee - before.books.fee).toBe(3n);
  expect(after.books.holding).toBe(0n);
  return sig;
}

describe('a stock x402 client pays an agentpay seller with `exact`', () => {
  it('the 402 offers exact on the gateway\'s chain and token, paying the platform\'s receiving address, with the EIP-712 domain', async () => {
    const res = await fetch(`${sellers[0]!.url}/forecast`, { method: 'POST' });
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.accepts.map((a) => a.scheme)).toEqual(['agentpay', 'exact']);
    expect(required.accepts[1]).toMatchObject({
      scheme: 'exact', network: NETWORK, amount: PRICE_UNITS.toString(), asset: getAddress(chain.token), payTo: getAddress(chain.treasury),
      extra: { name: 'USD Coin (test)', version: '2' },
    });
  });

  it('discovery\'s x402 Bazaar list offers exact beside agentpay, as the seller\'s 402 does, and filters by scheme and network', async () => {
    const list = (query = '') => t.workspace.http.request<BazaarResourceList>('GET', `/v1/x402/discovery/resources${query}`);
    const res = await fetch(`${sellers[0]!.url}/forecast`, { method: 'POST' });
    const offered = decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[1]!;
    const item = (await list('?limit=100')).items.find((i) => i.metadata.capabilityId === capabilityId)!;
    expect(item.accepts.map((a) => [a.scheme, a.network])).toEqual([['agentpay', 'agentpay:live'], ['exact', NETWORK]]);
    const exactAccept = item.accepts[1]!;
    expect(exactAccept).toEqual({
      scheme: 'exact', network: NETWORK, amount: PRICE_UNITS.toString(), asset: offered.asset, payTo: offered.payTo, maxTimeoutSeconds: expect.any(Number),
      extra: { name: 'USD Coin (test)', version: '2' },
    });
    expect(getAddress(exactAccept.payTo)).toBe(getAddress(chain.treasury));
    expect(PaymentRequirementsV2Schema.safeParse(exactAccept).success).toBe(true);
    for (const q of ['?scheme=exact', `?network=${NETWORK}`, '?network=eip155:*', '?scheme=exact&type=http']) {
      const only = (await list(q)).items.find((i) => i.metadata.capabilityId === capabilityId)!;
      expect(only.accepts, q).toEqual([exactAccept]);
    }
    expect((await list('?scheme=agentpay')).items.find((i) => i.metadata.capabilityId === capabilityId)!.accepts.map((a) => a.scheme)).toEqual(['agentpay']);
    // the type filter holds for exact too: this REST capability is not an MCP tool
    expect((await list('?scheme=exact&type=mcp')).items.find((i) => i.metadata.capabilityId === capabilityId)).toBeUndefined();
    expect((await list('?network=eip155:1')).items).toEqual([]);
  });

  it('pays, the handler runs once, the gateway settles on chain and records 100 / 97 / 3 with a receipt carrying the transaction', async () => {
    const before = { chain: await chainState(), books: await books() };
    const n = handled.length;
    const { pay, sent } = stockBuyer(chain.payer);
    const res = await pay(`${sellers[0]!.url}/forecast`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    expect(handled.slice(n)).toEqual(['forecast']);
    expect(sent).toHaveLength(1);

    const settlement = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, network: NETWORK, amount: PRICE_UNITS.toString() });
    expect(settlement.payer?.toLowerCase()).toBe(chain.payer.address.toLowerCase());
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = (settlement.extra as { receipt: Receipt }).receipt;
    expect(receipt).toMatchObject({ status: 'success', capabilityId, amount: { amountMinor: '100', currency: 'USD' } });
    expect(decodeHeader<Receipt>(res.headers.get(RECEIPT_HEADER)!)).toEqual(receipt);
    // the transaction is on chain, confirmed, and moved the price from the payer to the treasury
    const onChain = await chain.pub.getTransactionReceipt({ hash: settlement.transaction as `0x${string}` });
    expect(onChain.status).toBe('success');
    const after = { chain: await chainState(), books: await books() };
    expect(before.chain.payer - after.chain.payer).toBe(PRICE_UNITS);
    expect(after.chain.treasury - before.chain.treasury).toBe(PRICE_UNITS);
    // conservation: what came in on chain (100 cents) is the seller's 97 and the fee's 3; the holding keeps nothing
    expect(after.books.seller - before.books.seller).toBe(97n);
    expect(after.books.fee - before.books.fee).toBe(3n);
    expect(after.books.holding).toBe(0n);
    const holding = await t.operator.wallets.ledger(PLATFORM_X402_WALLET_ID);
    expect(holding.slice(-2).map((e) => [e.type, e.amountMinor])).toEqual([['deposit', '100'], ['capture', '-100']]);

    // the same authorization again pays nothing and runs nothing
    const again = await fetch(`${sellers[1]!.url}/forecast`, { method: 'POST', headers: { 'payment-signature': sent[0]! } });
    expect(again.status).toBe(402);
    expect(decodePaymentRequiredHeader(again.headers.get('payment-required')!).error).toBe('invalid_exact_evm_nonce_already_used');
    expect(handled.slice(n)).toEqual(['forecast']);
    expect(await chainState()).toEqual(after.chain);
    expect(await books()).toEqual(after.books);
  }, 60_000);

  it('one authorization sent at once to two sellers settles once', async () => {
    await settlesOnceSentToBoth(sellers.map((s) => s.url));
  }, 60_000);

  it('one authorization sent at once to two gateway instances on one database settles once', async () => {
    // a second instance of the same deployment: the same data directory and database, its own process
    // state (its own chain adapter and nonce manager); a seller on each instance
    const other = await startTestGateway({ dataDir: t.dataDir, clock: t.clock, config: gatewayConfig(gatewayRails(t.clock).adapters) });
    const sellerOfOther = await seller(other.baseUrl);
    try {
      const sig = await settlesOnceSentToBoth([sellers[0]!.url, sellerOfOther.url]);
      // one reservation of the nonce, settled, as both instances read it
      const nonce = (JSON.parse(Buffer.from(sig, 'base64').toString('utf8')) as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce;
      for (const g of [t.gw, other.gw]) expect(await g.store.read((r) => r.x402Authorizations.byNonce(NETWORK, chain.token, nonce))).toMatchObject({ state: 'settled' });
    } finally {
      await sellerOfOther.app.close();
      await other.close();
    }
  }, 60_000);

  it('an authorization expiring before it could settle is refused before the handler', async () => {
    const n = handled.length;
    const before = await chainState();
    // the stock scheme signs validBefore = now + maxTimeoutSeconds: 5 s is inside the gateway's 30 s margin
    const sig = await stockSignature(chain.payer, `${sellers[0]!.url}/forecast`, (a) => { a.maxTimeoutSeconds = 5; });
    const res = await fetch(`${sellers[0]!.url}/forecast`, { method: 'POST', headers: { 'payment-signature': sig } });
    expect(res.status).toBe(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(handled.length).toBe(n);
    expect(await chainState()).toEqual(before);
  }, 30_000);

  it('an underfunded payer is refused before the handler', async () => {
    const n = handled.length;
    const poor = privateKeyToAccount(generatePrivateKey());
    const { pay } = stockBuyer(poor);
    const res = await pay(`${sellers[0]!.url}/forecast`, { method: 'POST' });
    expect(res.status).toBe(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error).toBe('invalid_exact_evm_insufficient_balance');
    expect(handled.length).toBe(n);
  }, 30_000);

  it('what the gateway does not settle (exact by Permit2, exact on Solana, upto) is refused before the handler, as docs/protocol.md\'s table says', async () => {
    const n = handled.length;
    const before = { chain: await chainState(), books: await books() };
    const url = `${sellers[0]!.url}/forecast`;
    const required = decodePaymentRequiredHeader((await fetch(url, { method: 'POST' })).headers.get('payment-required')!);
    const offered = required.accepts.find((a) => a.scheme === 'exact')!;
    const send = async (accepted: Record<string, unknown>, payload: Record<string, unknown>) => {
      const header = encodePaymentSignatureHeader({ x402Version: 2, resource: required.resource, accepted, payload } as never);
      const res = await fetch(url, { method: 'POST', headers: { 'payment-signature': header } });
      return { status: res.status, body: await res.json() as { error: { code: string; message: string; details?: { field?: string } } } };
    };
    const now = Math.floor(Date.now() / 1000);
    // x402's exact on EVM by Permit2 (the buyer approved Permit2, no EIP-3009): the route wants an EIP-3009 authorization
    const permit2 = await send({ ...offered, extra: { ...offered.extra, assetTransferMethod: 'permit2' } }, {
      signature: `0x${'11'.repeat(65)}`,
      permit2Authorization: {
        from: chain.payer.address, permitted: { token: offered.asset, amount: offered.amount }, spender: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
        nonce: '1', deadline: String(now + 600), witness: { to: offered.payTo, validAfter: String(now - 600), extra: '0x' },
      },
    });
    expect(permit2.status).toBe(400);
    expect(permit2.body.error.code).toBe('VALIDATION_FAILED');
    expect(permit2.body.error.message).toContain('payload.payload.authorization');
    // exact on Solana: the same (this gateway settles EVM authorizations only)
    const svm = await send({ ...offered, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' }, { transaction: 'AQID' });
    expect(svm.status).toBe(400);
    expect(svm.body.error.code).toBe('VALIDATION_FAILED');
    // another scheme: 400 method-unsupported
    const upto = await send({ ...offered, scheme: 'upto' }, { signature: '0x00' });
    expect(upto.status).toBe(400);
    expect(upto.body.error.code).toBe('NOT_SUPPORTED');
    // an EIP-3009 authorization signed by the stock scheme for another EVM chain: x402's 402, a fresh offer
    const otherChain = await fetch(url, { method: 'POST', headers: { 'payment-signature': await stockSignature(chain.payer, url, (a) => { a.network = 'eip155:1'; }) } });
    expect(otherChain.status).toBe(402);
    expect(decodePaymentRequiredHeader(otherChain.headers.get('payment-required')!).error).toBe('invalid_exact_evm_network_mismatch');
    // the same Permit2 payload to an MCP tool: an error result with the gateway's refusal, the tool not run
    const mcp = new McpServer({ name: 'seller', version: '1' });
    let ran = 0;
    registerPaidTool(mcp, 'forecast', { seller: createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca }), capabilityId }, async () => {
      ran += 1;
      return { content: [{ type: 'text', text: 'sunny' }] };
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await mcp.connect(a);
    const client = new Client({ name: 'buyer', version: '1' });
    await client.connect(b);
    const permit2Payload = { x402Version: 2, resource: { url: 'mcp://tool/forecast' }, accepted: { ...offered, extra: { ...offered.extra, assetTransferMethod: 'permit2' } }, payload: { signature: `0x${'11'.repeat(65)}`, permit2Authorization: {} } };
    const viaMcp = (await client.callTool({ name: 'forecast', arguments: {}, _meta: { 'x402/payment': permit2Payload } })) as CallToolResult;
    expect(viaMcp.isError).toBe(true);
    expect(JSON.stringify(viaMcp.content)).toContain('VALIDATION_FAILED');
    expect(ran).toBe(0);
    await client.close();
    expect(handled.length).toBe(n);
    expect(await chainState()).toEqual(before.chain);
    expect(await books()).toEqual(before.books);
  }, 30_000);
  it('a failed handler settles nothing: the buyer keeps its money and the authorization is released', async () => {
    const before = { chain: await chainState(), books: await books() };
    const n = handled.length;
    const sig = await stockSignature(chain.payer, `${sellers[0]!.url}/broken`);
    const res = await fetch(`${sellers[0]!.url}/broken`, { method: 'POST', headers: { 'payment-signature': sig } });
    expect(res.status).toBe(500);
    expect(res.headers.get('payment-response')).toBeNull();
    expect(handled.slice(n)).toEqual(['broken']);
    expect(await chainState()).toEqual(before.chain);
    expect(await books()).toEqual(before.books);
    const rows = await t.gw.store.read((r) => r.x402Authorizations.listByState(['released'], 10));
    expect(rows).toHaveLength(1);
  }, 30_000);

  it('a web-standard seller (paidHandler: Next.js, Workers, Bun, Deno) is paid the same way', async () => {
    const before = await books();
    let ran = 0;
    const handler = paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId }, async () => {
      ran += 1;
      return Response.json({ forecast: 'rain' });
    });
    const { pay } = stockBuyer(chain.payer, async (input, init) => handler(new Request(input as string, init)));
    const res = await pay('https://seller.example/forecast', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'rain' });
    expect(ran).toBe(1);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({ success: true, network: NETWORK });
    const after = await books();
    expect(after.seller - before.seller).toBe(97n);
    expect(after.fee - before.fee).toBe(3n);
    expect(after.holding).toBe(0n);
  }, 60_000);

  it('an MCP tool (registerPaidTool) offers exact too, and a stock x402 client\'s payload in _meta["x402/payment"] pays it: settled on chain, 100 / 97 / 3, x402/payment-response', async () => {
    const mcp = new McpServer({ name: 'seller', version: '1' });
    let ran = 0;
    registerPaidTool(mcp, 'forecast', { seller: createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca }), capabilityId, inputSchema: { city: z.string() } }, async ({ city }) => {
      ran += 1;
      return { content: [{ type: 'text', text: `sunny in ${city}` }] };
    });
    registerPaidTool(mcp, 'broken', { seller: createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca }), capabilityId }, async () => {
      ran += 1;
      return { content: [{ type: 'text', text: 'down' }], isError: true };
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await mcp.connect(a);
    const client = new Client({ name: 'buyer', version: '1' });
    await client.connect(b);
    // as @x402/mcp's client does: call unpaid, read the PaymentRequired, createPaymentPayload with the stock exact scheme, call again with it in _meta
    const unpaid = (await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })) as CallToolResult;
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent;
    if (!isPaymentRequired(required)) throw new Error('no x402 PaymentRequired in structuredContent');
    expect((required as PaymentRequired).accepts.map((x) => x.scheme)).toEqual(['agentpay', 'exact']);
    expect((required as PaymentRequired).accepts[1]).toMatchObject({ network: NETWORK, amount: PRICE_UNITS.toString(), asset: getAddress(chain.token), payTo: getAddress(chain.treasury) });
    const x402 = x402Client.fromConfig({
      schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(chain.payer) }],
      spendControls: { allowedAssets: [{ network: NETWORK, asset: chain.token, maxAmountPerPayment: (2n * PRICE_UNITS).toString() }] },
    });
    const payload = await x402.createPaymentPayload(required as PaymentRequired);
    expect(payload.accepted.scheme).toBe('exact');
    const before = { chain: await chainState(), books: await books() };
    const paid = (await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': payload } })) as CallToolResult;
    expect(paid.isError).toBeFalsy();
    expect(paid.content).toEqual([{ type: 'text', text: 'sunny in Oslo' }]);
    expect(ran).toBe(1);
    const receipt = paid._meta?.['agentpay/receipt'] as Receipt;
    expect(receipt).toMatchObject({ status: 'success', capabilityId, amount: { amountMinor: '100', currency: 'USD' } });
    const response = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string; network: string; extra: { receipt: Receipt } };
    expect(response).toMatchObject({ success: true, network: NETWORK, amount: PRICE_UNITS.toString(), extra: { receipt } });
    expect((await chain.pub.getTransactionReceipt({ hash: response.transaction as `0x${string}` })).status).toBe('success');
    await conserved(before, 1n);

    // the same payload again: refused before the tool, x402's way (a fresh PaymentRequired whose error is the reason); nothing moves
    const again = (await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'x402/payment': payload } })) as CallToolResult;
    expect(again.isError).toBe(true);
    expect((again.structuredContent as PaymentRequired).error).toBe('invalid_exact_evm_nonce_already_used');
    expect(ran).toBe(1);
    await conserved(before, 1n);

    // a tool that fails settles nothing: the authorization is released, the buyer keeps its money
    const unpaidBroken = (await client.callTool({ name: 'broken', arguments: {} })) as CallToolResult;
    const brokenPayload = await x402.createPaymentPayload(unpaidBroken.structuredContent as PaymentRequired);
    const released = (await t.gw.store.read((r) => r.x402Authorizations.listByState(['released'], 100))).length;
    const failed = (await client.callTool({ name: 'broken', arguments: {}, _meta: { 'x402/payment': brokenPayload } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(ran).toBe(2);
    expect(failed._meta?.['x402/payment-response']).toBeUndefined();
    expect((await t.gw.store.read((r) => r.x402Authorizations.listByState(['released'], 100))).length).toBe(released + 1);
    await conserved(before, 1n);
    await client.close();
  }, 60_000);

  it('a settlement the chain refuses after the handler ran is tried 3 times, then recorded failed; nothing is credited', async () => {
    const before = { chain: await chainState(), books: await books() };
    const sig = await stockSignature(chain.payer, `${sellers[0]!.url}/pauses`);
    const reports = reported.length;
    try {
      const res = await fetch(`${sellers[0]!.url}/pauses`, { method: 'POST', headers: { 'payment-signature': sig } });
      // the seller delivered (its answer stands) but was not paid: no receipt, no PAYMENT-RESPONSE
      expect(res.status).toBe(200);
      expect(res.headers.get('payment-response')).toBeNull();
      expect(res.headers.get(RECEIPT_HEADER)).toBeNull();
    } finally {
      await pauseToken('unpause');
    }
    const failed = await t.gw.store.read((r) => r.x402Authorizations.listByState(['failed'], 10));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ attempts: 3, txHash: null, transactionId: null });
    expect(failed[0]!.lastError).toMatch(/revert|paused|EnforcedPause/i);
    // the seller reports the gateway's own verdict once, not a retry's "no longer reserved" (409)
    expect(reported.slice(reports)).toEqual([{ stage: 'complete', code: 'TREASURY_UNAVAILABLE' }]);
    expect(await chainState()).toEqual(before.chain);
    expect(await books()).toEqual(before.books);

    // alerted, to the seller and to the operator, with an alert mail each: the duty keeps trying until validBefore
    const alerts = await alertsOf(failed[0]!.id);
    expect(alerts.seller).toHaveLength(1);
    expect(alerts.operator).toHaveLength(1);
    expect(alerts.seller[0]!.data).toEqual(alerts.operator[0]!.data);
    const data = alerts.seller[0]!.data as X402SettlementFailedData;
    expect(data).toMatchObject({
      stage: 'settle', capabilityId, providerId: t.creds.provider.id, payer: chain.payer.address.toLowerCase(), network: NETWORK, value: PRICE_UNITS.toString(),
      amountMinor: '100', currency: 'USD', attempts: 3, txHash: null, retryUntil: new Date(failed[0]!.validBefore * 1000).toISOString(),
    });
    expect(data.error).toMatch(/revert|paused|EnforcedPause/i);
    const mail = await t.gw.store.read((r) => r.alertMails.byEvent(alerts.seller[0]!.id));
    expect(mail).toMatchObject({ eventType: 'x402.settlement_failed', tenantId: t.creds.provider.id, state: 'pending' });
  }, 60_000);
});

/** The x402.settlement_failed events of one authorization, as the seller and the operator read them. */
async function alertsOf(authorizationId: string) {
  const of = async (c: typeof t.provider) => (await c.rail.events({ type: 'x402.settlement_failed', limit: 200 })).events.filter((e) => e.data.authorizationId === authorizationId);
  return { seller: await of(t.provider), operator: await of(t.operator) };
}

/** The books, the chain, and that what the chain brought in equals what the x402 holding took in. */
async function conserved(before: { chain: Awaited<ReturnType<typeof chainState>>; books: Awaited<ReturnType<typeof books>> }, sales: bigint) {
  const after = { chain: await chainState(), books: await books() };
  expect(before.chain.payer - after.chain.payer).toBe(sales * PRICE_UNITS);
  expect(after.chain.treasury - before.chain.treasury).toBe(sales * PRICE_UNITS);
  expect(after.books.seller - before.books.seller).toBe(sales * 97n);
  expect(after.books.fee - before.books.fee).toBe(sales * 3n);
  expect(after.books.holding).toBe(0n);
  const deposits = (await t.operator.wallets.ledger(PLATFORM_X402_WALLET_ID)).filter((e) => e.type === 'deposit').reduce((n, e) => n + BigInt(e.amountMinor), 0n);
  // every base unit the treasury received from x402 payers is a cent (10,000 units) in the holding's deposits
  expect(deposits * 10_000n).toBe(await chain.usdcOf(chain.treasury) - treasuryStart);
  return after;
}

const STALE_MS = 10 * 60_000 + 1;
const RESPONSE_HASH = `sha256:${'ab'.repeat(32)}`;

/** An authorization verified by the gateway and claimed for settlement (`settling`) as the route does, then left: a crash. */
async function claimedThenCrashed(): Promise<{ id: string; payload: Record<string, unknown> }> {
  const payload = await stockPayload(chain.payer, `${sellers[0]!.url}/forecast`);
  const v = await t.provider.payments.exactVerify({ capabilityId, payload });
  const claimed = await t.gw.store.tx((r) => r.x402Authorizations.transition(v.authorizationId, ['reserved'], { state: 'settling', responseHash: RESPONSE_HASH, updatedAt: t.clock.now() }));
  expect(claimed).toBe(true);
  return { id: v.authorizationId, payload };
}

const row = (id: string) => t.gw.store.read(async (r) => (await r.x402Authorizations.get(id))!);

/**
 * The chain's search for a transaction it was not told (the crash case), once the chain has gone on 9
 * blocks past it: 3 blocks per eth_getLogs request, newest first, so 4 requests at least; a lookback
 * that stops short of its block does not find it.
 */
async function foundByLogsInRanges(authorization: Parameters<ExactChain['settle']>[0], txHash: string): Promise<void> {
  const mined = (await chain.pub.getTransactionReceipt({ hash: txHash as `0x${string}` })).blockNumber;
  while ((await chain.pub.getBlockNumber()) < mined + 9n) await new Promise((r) => setTimeout(r, 50));
  let getLogs = 0;
  const { adapter } = usdcBaseRails({
    chainId: CHAIN_ID, usdcAddress: chain.token, confirmations: CONFIRMATIONS, treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic,
    clock: t.clock, priceFeed: chain.aggregator,
    transport: http(chain.url, { onFetchRequest: async (req) => { if ((await req.clone().text()).includes('eth_getLogs')) getLogs++; } }),
  });
  const eip712 = { name: 'USD Coin (test)', version: '2' };
  const paged = usdcExactChain(adapter, { eip712, maxBlockRange: 3n, lookbackBlocks: 200n });
  expect(await paged.lookup(authorization, null)).toMatchObject({ state: 'used', txHash });
  expect(getLogs).toBeGreaterThanOrEqual(4);
  const short = usdcExactChain(adapter, { eip712, maxBlockRange: 3n, lookbackBlocks: 5n });
  expect(await short.lookup(authorization, null)).toEqual({ state: 'used_elsewhere' });
}
const duty = () => t.gw.services.x402Exact.runSettlementDuty();

describe('the settlement duty', () => {
  it('settles the failed one once the chain takes it again: recorded once, 100 / 97 / 3, a receipt, then reconciled', async () => {
    const [failed] = await t.gw.store.read((r) => r.x402Authorizations.listByState(['failed'], 10));
    const before = { chain: await chainState(), books: await books() };
    // not due yet: the duty waits retryBackoffMs (30 s) after the settle route's last try. The five sales
    // paid earlier (REST, two sellers at once, two instances at once, web-standard, MCP) are reconciled meanwhile
    expect(await duty()).toEqual({ settled: 0, retried: 0, expired: 0, reconciled: 5, mismatched: 0 });
    expect(await row(failed!.id)).toMatchObject({ state: 'failed', attempts: 3 });
    // due, and the chain still refuses: tried once more, then not again before twice the pause
    await pauseToken('pause');
    try {
      t.clock.advance(30_000);
      expect(await duty()).toEqual({ settled: 0, retried: 1, expired: 0, reconciled: 0, mismatched: 0 });
      expect(await row(failed!.id)).toMatchObject({ state: 'failed', attempts: 4 });
      t.clock.advance(59_000);
      expect(await duty()).toEqual({ settled: 0, retried: 0, expired: 0, reconciled: 0, mismatched: 0 });
    } finally {
      await pauseToken('unpause');
    }
    t.clock.advance(1_000);
    expect(await duty()).toEqual({ settled: 1, retried: 0, expired: 0, reconciled: 0, mismatched: 0 });
    const done = await row(failed!.id);
    expect(done).toMatchObject({ state: 'settled', attempts: 5, responseHash: expect.stringMatching(/^sha256:/) });
    expect(done.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await chain.pub.getTransactionReceipt({ hash: done.txHash as `0x${string}` })).status).toBe('success');
    await conserved(before, 1n);
    const receipts = await t.gw.store.read((r) => r.receipts.byTransaction(done.transactionId!));
    expect(receipts.map((x) => [x.status, x.responseHash])).toEqual([['success', done.responseHash]]);
    const sold = (await t.provider.rail.events({ type: 'payment.succeeded', limit: 200 })).events.filter((e) => e.data.transactionId === done.transactionId);
    expect(sold).toHaveLength(1);
    // the next run finds every settled transaction confirmed on chain, as recorded, and settles nothing again
    expect(await duty()).toEqual({ settled: 0, retried: 0, expired: 0, reconciled: 1, mismatched: 0 });
    expect((await row(failed!.id)).reconciledAt).toBe(t.clock.now());
    expect(await t.gw.store.read((r) => r.x402Authorizations.unreconciled(100))).toEqual([]);
    await conserved(before, 1n);
  }, 60_000);

  it('a crash after the transaction went out: taken up once stale, found on chain, recorded once, never sent again', async () => {
    const before = { chain: await chainState(), books: await books() };
    const { id, payload } = await claimedThenCrashed();
    // the crashed instance had sent it (and died before keeping the hash)
    const p = payload as { payload: { authorization: Parameters<ExactChain['settle']>[0]; signature: string } };
    const { txHash } = await exact.settle(p.payload.authorization, p.payload.signature);
    const nonceBefore = await chain.pub.getTransactionCount({ address: chain.treasury });
    // not stale yet: the settle that claimed it may still be at work
    expect(await duty()).toEqual({ settled: 0, retried: 0, expired: 0, reconciled: 0, mismatched: 0 });
    expect((await row(id)).state).toBe('settling');
    t.clock.advance(STALE_MS);
    expect(await duty()).toMatchObject({ settled: 1, retried: 0, expired: 0 });
    expect(await row(id)).toMatchObject({ state: 'settled', txHash, responseHash: RESPONSE_HASH });
    // nothing was sent: the treasury's nonce did not move, the payer paid once
    expect(await chain.pub.getTransactionCount({ address: chain.treasury })).toBe(nonceBefore);
    await conserved(before, 1n);
    expect(await duty()).toMatchObject({ settled: 0, retried: 0, expired: 0, mismatched: 0 });
    await foundByLogsInRanges(p.payload.authorization, txHash);
    await conserved(before, 1n);
    // no alert: nothing failed
    expect((await alertsOf(id)).seller).toEqual([]);
  }, 60_000);

  it('a crash before the transaction went out: sent by the duty once stale, and recorded', async () => {
    const before = { chain: await chainState(), books: await books() };
    const { id } = await claimedThenCrashed();
    t.clock.advance(STALE_MS);
    expect(await duty()).toMatchObject({ settled: 1, retried: 0, expired: 0 });
    const done = await row(id);
    expect(done).toMatchObject({ state: 'settled', attempts: 1 });
    expect((await chain.pub.getTransactionReceipt({ hash: done.txHash as `0x${string}` })).status).toBe('success');
    await conserved(before, 1n);
  }, 60_000);

  it('a settled row whose recorded transaction is not the chain\'s is alerted to the operator, once', async () => {
    const [settled] = await t.gw.store.read((r) => r.x402Authorizations.listByState(['settled'], 1));
    const before = { chain: await chainState(), books: await books() };
    await t.gw.store.tx((r) => r.x402Authorizations.update(settled!.id, { txHash: `0x${'1'.repeat(64)}`, reconciledAt: null }));
    expect(await duty()).toMatchObject({ settled: 0, mismatched: 1 });
    const alerts = await alertsOf(settled!.id);
    expect(alerts.seller).toEqual([]);
    expect(alerts.operator.map((e) => (e.data as X402SettlementFailedData).stage)).toEqual(['reconcile']);
    expect((alerts.operator[0]!.data as X402SettlementFailedData).error).toContain(settled!.txHash!);
    expect(await duty()).toMatchObject({ mismatched: 0 });
    expect((await alertsOf(settled!.id)).operator).toHaveLength(1);
    // the books and the chain did not move
    expect({ chain: await chainState(), books: await books() }).toEqual(before);
    await t.gw.store.tx((r) => r.x402Authorizations.update(settled!.id, { txHash: settled!.txHash }));
  }, 60_000);

  // last: it moves the chain's time past the authorizations' validity
  it('a failed one whose authorization expired is given up and alerted; the buyer keeps its money, nothing is recorded', async () => {
    const before = { chain: await chainState(), books: await books() };
    const { id } = await claimedThenCrashed();
    await t.gw.store.tx((r) => r.x402Authorizations.update(id, { state: 'failed', attempts: 3, lastError: 'reverted' }));
    const r0 = await row(id);
    await chain.rpc('evm_increaseTime', [r0.validBefore - Math.floor(Date.now() / 1000) + 60]);
    await chain.mine(1);
    t.clock.advance(30_000); // the duty's pause after the route's tries
    expect(await duty()).toMatchObject({ settled: 0, retried: 0, expired: 1 });
    expect(await row(id)).toMatchObject({ state: 'expired', txHash: null, transactionId: null });
    const alerts = await alertsOf(id);
    expect(alerts.seller.map((e) => (e.data as X402SettlementFailedData).stage)).toEqual(['retry']);
    expect(alerts.operator).toHaveLength(1);
    expect(alerts.seller[0]!.data).toMatchObject({ retryUntil: null, error: expect.stringMatching(/expired/) });
    expect({ chain: await chainState(), books: await books() }).toEqual(before);
    // given up for good: later runs leave it
    expect(await duty()).toMatchObject({ settled: 0, retried: 0, expired: 0 });
    expect(await conserved(before, 0n)).toEqual(before);
  }, 60_000);
});
