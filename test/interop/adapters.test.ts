/**
 * Issue 18: every HTTP adapter gets the three dialects from the seller core once. The node:http
 * adapter (paid, paidMiddleware) and the web-standard handler (paidHandler, which the hono
 * middleware renders through) each sell one call to a stock @x402/fetch and one to a stock mppx
 * client with our plug-ins registered, and our own buyer still buys from them unchanged.
 */
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Mppx } from 'mppx/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { agentpayMppx } from '../../packages/sdk/src/interop/mppx.js';
import { createAgentpayX402Scheme, decodeX402Header, type X402PaymentRequired } from '../../packages/sdk/src/interop/x402.js';
import { paidHandler } from '../../packages/sdk/src/seller/web.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fundedAgent, publish, startNodeSeller, type RunningSeller } from '../e2e/helpers.js';

let t: TestGateway;
let capabilityId: string;
let node: RunningSeller;
let web: (req: Request) => Promise<Response>;

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  node = await startNodeSeller(t, capabilityId);
  web = paidHandler({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, network: 'agentpay:live', publicUrl: 'https://api.seller.example' },
    async () => Response.json({ from: 'web' }));
});
afterAll(async () => {
  await node?.close();
  await t?.close();
});

/** A fetch that hands the request to the web handler: no socket, the handler is the seller. */
const webFetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => web(new Request(input as never, init))) as typeof fetch;

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
