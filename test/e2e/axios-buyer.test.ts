/**
 * The axios buyer (agentpay-sdk/buyer/axios) against a real fastify seller over HTTPS and a
 * real gateway: an axios instance made to pay with withAgentpay buys a call, the ledger moves
 * (buyer −100, seller +97, platform +3), the receipt is verified against the bytes received;
 * the buyer's refusals (a price above the ceiling, the default one included) arrive as
 * AgentpayError with nothing signed, nothing sent, nothing charged.
 */
import https from 'node:https';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer, DEFAULT_MAX_PRICE_MINOR, type BuyerOptions } from '../../packages/sdk/src/buyer/index.js';
import { agentpayInterceptorId, withAgentpay } from '../../packages/sdk/src/buyer/axios.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { money, moved } from '../mcp/helpers.js';
import { expectLedgerConsistent, fundedAgent, publish, sha256, startFastifySeller, STREAM_CHUNKS, type AgentWallet, type RunningSeller } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;
/** a seller whose /forecast costs 150, above the default ceiling */
let dearSeller: RunningSeller;
let httpsAgent: https.Agent;

beforeAll(async () => {
  t = await startTestGateway();
  seller = await startFastifySeller(t, { price100: await publish(t, '100'), price1: await publish(t, '1') });
  dearSeller = await startFastifySeller(t, { price100: await publish(t, '150', 'Dear forecast'), price1: await publish(t, '1', 'Cheap 2') });
  // the sellers' certificate is the test gateway's: axios trusts it as any HTTPS client would be told to
  httpsAgent = new https.Agent({ ca: t.ca });
});
afterAll(async () => {
  httpsAgent?.destroy();
  await seller?.close();
  await dearSeller?.close();
  await t?.close();
});

const buyerOptions = (a: AgentWallet, extra: Partial<BuyerOptions> = {}): BuyerOptions =>
  ({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, ...extra });
const payingAxios = (a: AgentWallet, extra: Partial<BuyerOptions> = {}): AxiosInstance => withAgentpay(axios.create({ httpsAgent }), createBuyer(buyerOptions(a, extra)));

const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e);

async function expectReceiptVerifies(receipt: Receipt, bytes: Uint8Array): Promise<void> {
  const { publicKeyPem } = await t.workspace.platform.receiptKey(receipt.signingKeyId);
  expect(await verifyObject(publicKeyPem, receipt as unknown as Record<string, unknown>)).toBe(true);
  expect(receipt.responseHash).toBe(sha256(bytes));
}

const SALE = { buyer: '-100', seller: '97', platform: '3' };
const NOTHING = { buyer: '0', seller: '0', platform: '0' };

describe('withAgentpay: an axios instance that pays', () => {
  it('buys one call: JSON data as axios gives it, the verified receipt, buyer −100, seller +97, platform +3', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const payments = seller.log.paymentsReceived;
    const api = payingAxios(a);

    const res = await api.get(`${seller.url}/forecast`, { params: { city: 'Faro' } });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ city: 'Faro', sunny: true, tempC: 21 });
    expect(res.challenge).toMatchObject({ amountMinor: '100', currency: 'USD' });
    expect(res.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, providerId: t.creds.provider.id, amount: { amountMinor: '100', currency: 'USD' } });
    // the receipt covers the exact bytes the seller sent (fastify's JSON of the object)
    await expectReceiptVerifies(res.receipt!, new TextEncoder().encode(JSON.stringify(res.data)));
    expect(await t.workspace.receipts.get(res.receipt!.id)).toMatchObject({ status: 'success' });
    expect(seller.log.paymentsReceived - payments).toBe(1);

    expect(await moved(t, a.walletId, before)).toEqual(SALE);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('hands back the bytes for responseType arraybuffer or stream (a streamed answer), and a free route unchanged', async () => {
    const a = await fundedAgent(t, '1000');
    const api = payingAxios(a);
    const before = await money(t, a.walletId);

    const streamed = await api.get<Buffer>(`${seller.url}/stream`, { responseType: 'arraybuffer' });
    const bytes = new Uint8Array(streamed.data);
    expect(new TextDecoder().decode(bytes)).toBe(STREAM_CHUNKS.join(''));
    await expectReceiptVerifies(streamed.receipt!, bytes);

    // asked as a stream, the 402 is read whole to pay it; the paid answer comes as the verified bytes
    const asStream = await api.get(`${seller.url}/stream`, { responseType: 'stream' });
    expect(new TextDecoder().decode(asStream.data as Uint8Array)).toBe(STREAM_CHUNKS.join(''));
    expect(asStream.receipt?.status).toBe('success');

    const free = await api.get(`${seller.url}/free`);
    expect(free.data).toEqual({ free: true });
    expect(free.receipt).toBeNull();
    expect((await moved(t, a.walletId, before)).buyer).toBe('-200');
    // installing twice does nothing: one interceptor, one payment per call
    expect(withAgentpay(api, createBuyer(buyerOptions(a)))).toBe(api);
    expect(agentpayInterceptorId(api)).toEqual(expect.any(Number));
  });

  it('rejects a paid call the seller failed as axios does (AxiosError with the response), with its failed receipt: refunded', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const e = await refusal(payingAxios(a).get(`${seller.url}/server-error`));
    expect(e).toBeInstanceOf(AxiosError);
    const res = (e as AxiosError).response!;
    expect(res.status).toBe(503);
    expect(res.data).toEqual({ error: { code: 'UPSTREAM_DOWN', message: 'weather service down' } });
    expect(res.receipt).toMatchObject({ status: 'failed', amount: { amountMinor: '100' } });
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('passes the gateway refusal of the proof as an AgentpayError (INSUFFICIENT_FUNDS); the handler never ran', async () => {
    const a = await fundedAgent(t, '50');
    const handled = { ...seller.log.handled };
    const e = await refusal(payingAxios(a).get(`${seller.url}/forecast`));
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 402 });
    expect(seller.log.handled).toEqual(handled);
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('50');
  });
});

describe('withAgentpay: the price ceiling', () => {
  it('refuses above the buyer\'s ceiling, or a request\'s own, with PRICE_ABOVE_CLIENT_LIMIT before signing: nothing sent, nothing charged', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const [payments, handled] = [seller.log.paymentsReceived, { ...seller.log.handled }];

    const e = await refusal(payingAxios(a, { maxPriceMinor: '99' }).get(`${seller.url}/forecast`));
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99', defaultLimit: false } });
    const e2 = await refusal(payingAxios(a).get(`${seller.url}/forecast`, { agentpay: { maxPriceMinor: '50' } }));
    expect(e2).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { maxPriceMinor: '50' } });

    expect(seller.log.paymentsReceived).toBe(payments);
    expect(seller.log.handled).toEqual(handled);
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);
  });

  it(`applies the default ceiling (${DEFAULT_MAX_PRICE_MINOR}) when none is set; raised, the dearer call is bought`, async () => {
    expect(DEFAULT_MAX_PRICE_MINOR).toBe('100');
    const a = await fundedAgent(t, '1000');
    const before = await money(t, a.walletId);
    const e = await refusal(payingAxios(a).get(`${dearSeller.url}/forecast`));
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '150', maxPriceMinor: '100', defaultLimit: true } });
    expect((e as Error).message).toMatch(/default limit of 100.*maxPriceMinor/);
    expect(await moved(t, a.walletId, before)).toEqual(NOTHING);

    const res = await payingAxios(a, { maxPriceMinor: '150' }).get(`${dearSeller.url}/forecast`);
    expect(res.receipt).toMatchObject({ status: 'success', amount: { amountMinor: '150' } });
    const perCall = await payingAxios(a).get(`${dearSeller.url}/forecast`, { agentpay: { maxPriceMinor: '200' } });
    expect(perCall.receipt?.status).toBe('success');
    expect((await moved(t, a.walletId, before)).buyer).toBe('-300');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('refuses a malformed key or ceiling when the interceptor is installed from options', () => {
    const a = { walletId: 'wal_x', privateKeyPem: 'not a key', publicKeyPem: '' };
    expect(() => withAgentpay(axios.create(), buyerOptions(a))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'privateKeyPem' } }));
  });
});
