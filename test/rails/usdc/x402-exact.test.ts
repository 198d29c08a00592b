/**
 * Issue 30: any x402 client pays. A stock @x402/fetch with @x402/evm's ExactEvmScheme and a viem
 * local account (no agentpay code) pays a fastify seller built with our SDK, in USDC by EIP-3009
 * on a real local chain (ganache, the EIP-3009 test token): the gateway verifies the
 * authorization before the handler, settles it on chain after, and records the sale in the
 * ledger (100 cents in the platform's x402 holding, 97 to the seller, 3 fee) with a receipt
 * carrying the chain transaction, answered in PAYMENT-RESPONSE. The same authorization pays
 * once (sent again, or at once to two sellers); an expired or underfunded one is refused
 * before the handler; a failed handler settles nothing; a settlement the chain refuses after the
 * handler ran is retried, then recorded failed. Sellers: fastify and web-standard (paidHandler).
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { getAddress, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentpaySeller } from '../../../packages/sdk/src/seller/fastify.js';
import { paidHandler } from '../../../packages/sdk/src/seller/web.js';
import { decodeHeader, RECEIPT_HEADER, type Receipt } from '../../../packages/sdk/src/protocol.js';
import type { RailAdapters } from '../../../src/domain/rails/adapters.js';
import { usdcBaseRails } from '../../../src/rails/usdc/adapter.js';
import { usdcExactChain } from '../../../src/rails/usdc/exact.js';
import { PLATFORM_X402_WALLET_ID } from '../../../src/domain/payments/x402-exact.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../../src/domain/tenancy/tenants.js';
import { ManualClock, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { publish } from '../../e2e/helpers.js';
import { expectConsistent } from '../../wallets/ledger-checks.js';
import { CHAIN_ID, CONFIRMATIONS, startChain, type Chain } from './chain.js';
import { compileTestContracts } from './compile.js';

const NETWORK = `eip155:${CHAIN_ID}`;
const PRICE_UNITS = 1_000_000n; // 100 cents in USDC base units

let chain: Chain;
let t: TestGateway;
let capabilityId: string;
let sellers: { app: FastifyInstance; url: string }[] = [];
let miner: ReturnType<typeof setInterval>;
const handled: string[] = [];

async function seller(): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, batch: false });
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
  const { adapter, pricing } = usdcBaseRails({
    chainId: CHAIN_ID, usdcAddress: chain.token, confirmations: CONFIRMATIONS, treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic,
    clock, priceFeed: chain.aggregator, transport: http(chain.url),
  });
  const exact = usdcExactChain(adapter, { eip712: { name: 'USD Coin (test)', version: '2' }, pollingIntervalMs: 50 });
  const adapters: RailAdapters = { providers: [adapter], screening: { screen: async () => 'clear' }, pricing, exact };
  t = await startTestGateway({ clock, keepDataDir: true, config: { mode: 'production', rails: { adapters, pollIntervalMs: 0, reconcileIntervalMs: 0 } } });
  capabilityId = await publish(t, '100');
  sellers = [await seller(), await seller()];
  await chain.send(chain.owner, chain.token, 'mint', [chain.payer.address, 10n * PRICE_UNITS]);
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

/** An `exact` PaymentPayload signed by the stock scheme for the seller's offer, as a PAYMENT-SIGNATURE value. */
async function stockSignature(account: LocalAccount, url: string, tweak?: (a: Record<string, unknown>) => void): Promise<string> {
  const res = await fetch(url, { method: 'POST' });
  expect(res.status).toBe(402);
  const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  const accepted = required.accepts.find((a) => a.scheme === 'exact')!;
  const scheme = new ExactEvmScheme(account);
  if (tweak) tweak(accepted as unknown as Record<string, unknown>);
  const partial = await scheme.createPaymentPayload(2, accepted);
  return encodePaymentSignatureHeader({ ...partial, x402Version: 2, resource: required.resource, accepted } as never);
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
    const before = { chain: await chainState(), books: await books() };
    const n = handled.length;
    const sig = await stockSignature(chain.payer, `${sellers[0]!.url}/forecast`);
    const answers = await Promise.all(sellers.map((s) => fetch(`${s.url}/forecast`, { method: 'POST', headers: { 'payment-signature': sig } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    expect(handled.slice(n)).toEqual(['forecast']);
    const after = { chain: await chainState(), books: await books() };
    expect(before.chain.payer - after.chain.payer).toBe(PRICE_UNITS);
    expect(after.books.seller - before.books.seller).toBe(97n);
    expect(after.books.fee - before.books.fee).toBe(3n);
    expect(after.books.holding).toBe(0n);
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

  it('a settlement the chain refuses after the handler ran is tried 3 times, then recorded failed; nothing is credited', async () => {
    const before = { chain: await chainState(), books: await books() };
    const sig = await stockSignature(chain.payer, `${sellers[0]!.url}/pauses`);
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
    expect(await chainState()).toEqual(before.chain);
    expect(await books()).toEqual(before.books);
  }, 60_000);
});
