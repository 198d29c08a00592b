/**
 * Issue 18: every HTTP adapter gets the three dialects from the seller core once. The node:http
 * adapter (paid, paidMiddleware) and the web-standard handler (paidHandler, which the hono
 * middleware renders through) each sell one call to a stock @x402/fetch and one to a stock mppx
 * client with our plug-ins registered, and our own buyer still buys from them unchanged. A stock
 * client without our plug-in is told what to install by each adapter's 402 (hono's too).
 */
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Mppx } from 'mppx/client';
import { Challenge } from 'mppx';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { agentpayMppx } from '../../packages/sdk/src/interop/mppx.js';
import { createAgentpayX402Scheme, decodeX402Header, type X402PaymentRequired } from '../../packages/sdk/src/interop/x402.js';
import { paidHandler } from '../../packages/sdk/src/seller/web.js';
import { agentpayHono } from '../../packages/sdk/src/seller/hono.js';
import { MPP_CLIENT_HINT, X402_CLIENT_HINT } from '../../packages/sdk/src/interop/wire.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, publish, startNodeSeller, type RunningSeller } from '../e2e/helpers.js';

let t: TestGateway;
let capabilityId: string;
let node: RunningSeller;
let web: (req: Request) => Promise<Response>;
let hono: Hono;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  node = await startNodeSeller(t, capabilityId);
  web = paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, network: 'agentpay:live', publicUrl: 'https://api.seller.example' },
    async () => Response.json({ from: 'web' }));
  hono = new Hono();
  hono.use('/forecast', agentpayHono({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, publicUrl: 'https://hono.seller.example' }));
  hono.get('/forecast', (c) => c.json({ from: 'hono' }));
});
afterAll(async () => {
  await node?.close();
  await t?.close();
});

/** A fetch that hands the request to the web handler: no socket, the handler is the seller. */
const webFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => web(new Request(input as never, init))) as typeof fetch;
const honoFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => hono.fetch(new Request(input as never, init))) as typeof fetch;

const optsOf = (a: { walletId: string; privateKeyPem: string }) => ({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });

describe.each([
  ['node:http paid()', () => ({ url: `${node.url}/forecast`, fetch: globalThis.fetch })],
  ['web paidHandler', () => ({ url: 'https://api.seller.example/forecast?x=1', fetch: webFetch })],
])('%s', (_name, target) => {
  it('sells to @x402/fetch, mppx and our own buyer: 100 each, a receipt each', async () => {
    const { url, fetch: base } = target();
    const a = await fundedAgent(t, '300');
    const scheme = createAgentpayX402Scheme(optsOf(a));
    const x = await wrapFetchWithPayment(scheme.checkingFetch(base), new x402Client().register('agentpay:*', scheme))(url);
    expect(x.status).toBe(200);
    expect(x.headers.get('payment-response')).toBeTruthy();
    expect(scheme.lastReceipt).toMatchObject({ status: 'success', consumerId: a.walletId });

    const ap = agentpayMppx(optsOf(a));
    const m = await Mppx.create({ methods: [ap.method], fetch: ap.fetch(base), polyfill: false }).fetch(url);
    expect(m.status).toBe(200);
    expect(m.headers.get('payment-receipt')).toBeTruthy();
    expect(ap.lastReceipt).toMatchObject({ status: 'success', consumerId: a.walletId });

    const ours = await createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: base }).fetch(url);
    expect(ours.status).toBe(200);
    expect(ours.headers.get('payment-response')).toBeNull(); // only the dialect the buyer used
    expect(ours.receipt).toMatchObject({ status: 'success' });

    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('0');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});

it('the web handler names the configured network and public URL in its 402', async () => {
  const res = await web(new Request('https://internal:8080/forecast'));
  expect(res.status).toBe(402);
  const required = decodeX402Header<X402PaymentRequired>(res.headers.get('payment-required')!);
  expect(required.resource.url).toBe('https://api.seller.example/forecast');
  expect(required.accepts[0]!.network).toBe('agentpay:live');
  expect(res.headers.get('www-authenticate')).toContain('realm="api.seller.example"');
});

describe.each([
  ['node:http paid()', () => ({ url: `${node.url}/forecast`, fetch: globalThis.fetch })],
  ['web paidHandler', () => ({ url: 'https://api.seller.example/forecast', fetch: webFetch })],
  ['hono agentpayHono', () => ({ url: 'https://hono.seller.example/forecast', fetch: honoFetch })],
])('%s, to a stock client without our plug-in', (_name, target) => {
  it('names what to install: x402 agentpay-sdk/x402 (in the error it throws), the Payment challenge agentpay-sdk/mppx', async () => {
    const { url, fetch: base } = target();
    // @x402/fetch with only an EVM scheme: it throws "No network/scheme registered" with the accepts, our pointer among them
    const evmOnly = wrapFetchWithPayment(base, new x402Client().register('eip155:*', { scheme: 'exact', createPaymentPayload: async () => { throw new Error('not called'); } } as never));
    const x402Error = await evmOnly(url).then(() => null, (e: Error) => e);
    expect(x402Error?.message).toMatch(/No network\/scheme registered/);
    expect(x402Error?.message).toContain('agentpay-sdk/x402');

    const unpaid = await base(url);
    expect(unpaid.status).toBe(402);
    const required = decodeX402Header<X402PaymentRequired>(unpaid.headers.get('payment-required')!);
    expect(required.error).toBe(`payment required; ${X402_CLIENT_HINT}`);
    expect(required.accepts[0]!.extra).toMatchObject({ howToPay: X402_CLIENT_HINT });

    // mppx with only another method refuses; the challenge it parsed carries the pointer
    const other = { name: 'tempo', intent: 'charge', createCredential: async () => { throw new Error('not called'); } };
    const mppError = await Mppx.create({ methods: [other as never], fetch: base, polyfill: false }).fetch(url).then(() => null, (e: Error) => e);
    expect(mppError?.message).toMatch(/No method found for challenges: agentpay\.charge/);
    expect(Challenge.fromResponse(await base(url)).description).toBe(MPP_CLIENT_HINT);
    expect(MPP_CLIENT_HINT).toContain('agentpay-sdk/mppx');
  });
});
