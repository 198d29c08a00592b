/**
 * A paid call end to end over real HTTPS: the test gateway, a fastify seller on
 * 127.0.0.1 with the fastify adapter, and the buyer client with a funded agent wallet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyObject } from '../../src/core/ed25519.js';
import { createBuyer, type Buyer } from '../../packages/sdk/src/buyer/index.js';
import { decodeHeader, RECEIPT_HEADER, type Receipt } from '../../packages/sdk/src/protocol.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, platformRevenue, publish, sha256, startFastifySeller, STREAM_CHUNKS, type RunningSeller } from './helpers.js';

let t: TestGateway;
let seller: RunningSeller;
let caps: { price100: string; price1: string };
let sellerFetch: typeof fetch;

beforeAll(async () => {
  t = await startTestGateway();
  caps = { price100: await publish(t, '100'), price1: await publish(t, '1') };
  seller = await startFastifySeller(t, caps);
  sellerFetch = fetchTrusting(t.ca);
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

const buyerFor = (a: { walletId: string; privateKeyPem: string }, maxPriceMinor?: string): Buyer =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: sellerFetch, ...(maxPriceMinor ? { maxPriceMinor } : {}) });

const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

async function verifiesIndependently(receipt: Receipt): Promise<boolean> {
  const key = await t.client().platform.receiptKey(receipt.signingKeyId);
  return verifyObject(key.publicKeyPem, receipt as unknown as Record<string, unknown>);
}

describe('an unpaid call', () => {
  it('is answered 402 with a platform-signed challenge, and the handler never runs', async () => {
    const before = seller.log.handled.forecast ?? 0;
    const res = await sellerFetch(`${seller.url}/forecast`);
    expect(res.status).toBe(402);
    expect(res.headers.get('access-control-expose-headers')).toContain(RECEIPT_HEADER);
    const body = (await res.json()) as { error: { code: string }; challenge: Record<string, unknown> };
    expect(body.error.code).toBe('PAYMENT_REQUIRED');
    expect(body.challenge).toMatchObject({ capabilityId: caps.price100, providerId: t.creds.provider.id, amountMinor: '100', currency: 'USD', payTo: t.creds.provider.walletId });
    const key = await t.client().platform.receiptKey(body.challenge.signingKeyId as string);
    expect(verifyObject(key.publicKeyPem, body.challenge)).toBe(true);
    expect(seller.log.handled.forecast ?? 0).toBe(before);
  });

  it('leaves free routes alone', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/free`);
    expect(res.status).toBe(200);
    expect(res.receipt).toBeNull();
    expect(await res.json()).toEqual({ free: true });
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('100');
  });
});

describe('a paid call', () => {
  it('pays 100: the buyer loses 100, the seller gains 97, the platform 3, with a receipt that verifies', async () => {
    const a = await fundedAgent(t, '1000');
    const [sellerBefore, platformBefore] = [await sellerBalance(), await platformRevenue(t)];

    const res = await buyerFor(a).fetch(`${seller.url}/forecast?city=Faro`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ city: 'Faro', sunny: true, tempC: 21 });

    const receipt = res.receipt!;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId: caps.price100, providerId: t.creds.provider.id, amount: { amountMinor: '100', currency: 'USD' } });
    expect(receipt.responseHash).toBe(sha256(body));
    expect(await verifiesIndependently(receipt)).toBe(true);
    // the header the buyer received carries the same receipt
    expect(decodeHeader(res.headers.get(RECEIPT_HEADER)!)).toEqual(receipt);

    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '900', availableMinor: '900', currency: 'USD' });
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    expect((await platformRevenue(t)) - platformBefore).toBe(3n);
    await expectLedgerConsistent(t.workspace, a.walletId);
    await expectLedgerConsistent(t.provider, t.creds.provider.walletId);

    // the workspace sees the purchase in its receipts
    const page = await t.workspace.receipts.list({ limit: 200 });
    expect(page.receipts.find((r) => r.id === receipt.id)).toEqual(receipt);
  });

  it('hashes exactly the bytes sent, also for a streamed body (checked with node:crypto on the raw bytes)', async () => {
    const a = await fundedAgent(t, '100');
    const res = await buyerFor(a).fetch(`${seller.url}/stream`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(bytes).toString('utf8')).toBe(STREAM_CHUNKS.join(''));
    expect(res.receipt!.responseHash).toBe(sha256(bytes));
    expect(await verifiesIndependently(res.receipt!)).toBe(true);
  });

  it('answers a browser preflight allowing x-payment and exposes the protocol headers', async () => {
    const res = await sellerFetch(`${seller.url}/forecast`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-payment' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toContain('x-payment');
    expect(res.headers.get('access-control-expose-headers')).toBe('x-payment, x-service-receipt, payment-required, payment-response, www-authenticate, payment-receipt, idempotent-replayed, x-agentpay-session-grant, x-agentpay-session-receipt');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('onSend hooks of the route or of a child plugin that change the body', () => {
  it('run before agentpay hashes: the receipt matches the bytes the buyer gets', async () => {
    for (const [path, body] of [['/decorated', 'decorated\n<!-- route hook -->'], ['/child-decorated', 'child\n<!-- child hook -->']] as const) {
      const a = await fundedAgent(t, '100');
      const res = await buyerFor(a).fetch(`${seller.url}${path}`);
      expect(await res.text(), path).toBe(body);
      expect(res.receipt).toMatchObject({ status: 'success', responseHash: sha256(body) });
    }
  });
});

describe('a paid call answered with a redirect', () => {
  it('is completed on the 3xx: the buyer gets the redirect with its receipt, pays once, and does not follow it with the proof', async () => {
    for (const [path, target] of [['/moved', 'free'], ['/moved-to-paid', 'forecast']] as const) {
      const a = await fundedAgent(t, '1000');
      const handledTarget = seller.log.handled[target] ?? 0;
      const payments = seller.log.paymentsReceived;
      const res = await buyerFor(a).fetch(`${seller.url}${path}`);
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location')).toBe(`/${target}`);
      expect(res.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, amount: { amountMinor: '100' } });
      expect(await verifiesIndependently(res.receipt!)).toBe(true);
      expect(seller.log.handled[target] ?? 0).toBe(handledTarget); // not followed
      expect(seller.log.paymentsReceived - payments).toBe(1); // the proof was sent once
      expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('900');
      await expectLedgerConsistent(t.workspace, a.walletId);
    }
  });
});

describe('a paid call whose handler fails', () => {
  it('answers the seller 4xx with a failed receipt, refunds the buyer and does not count toward the breaker', async () => {
    const a = await fundedAgent(t, '500');
    const buyer = buyerFor(a);
    for (let i = 0; i < 3; i++) {
      const res = await buyer.fetch(`${seller.url}/client-error`);
      expect(res.status).toBe(404);
      const body = await res.text();
      expect(res.receipt).toMatchObject({ status: 'failed', consumerId: a.walletId, responseHash: sha256(body) });
      expect(await verifiesIndependently(res.receipt!)).toBe(true);
    }
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '500', availableMinor: '500', currency: 'USD' });
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ paused: false, consecutiveFailures: 0 });
    const refunds = (await t.workspace.wallets.ledger(a.walletId)).filter((e) => e.type === 'refund');
    expect(refunds).toHaveLength(3);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('pauses the seller for the wallet after three provider errors (5xx, 5xx, a throw), refuses with 429 until resumed', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = buyerFor(a);
    const sellerBefore = await sellerBalance();

    const r1 = await buyer.fetch(`${seller.url}/server-error`);
    expect(r1.status).toBe(503);
    expect(r1.receipt?.status).toBe('failed');
    const r2 = await buyer.fetch(`${seller.url}/server-error`);
    expect(r2.receipt?.status).toBe('failed');
    const r3 = await buyer.fetch(`${seller.url}/throws`);
    expect(r3.status).toBe(500);
    expect(r3.receipt).toMatchObject({ status: 'failed', responseHash: sha256(new Uint8Array(await r3.arrayBuffer())) });
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ paused: true, consecutiveFailures: 3 });

    const handledBefore = seller.log.handled.forecast ?? 0;
    const paused = await buyer.fetch(`${seller.url}/forecast`).catch((e: unknown) => e);
    expect(paused).toMatchObject({ name: 'AgentpayError', code: 'WALLET_PROVIDER_PAUSED', status: 429 });
    expect(seller.log.handled.forecast ?? 0).toBe(handledBefore);

    await t.workspace.wallets.resumeProvider(a.walletId, t.creds.provider.id);
    const ok = await buyer.fetch(`${seller.url}/forecast`);
    expect(ok.status).toBe(200);
    expect(ok.receipt?.status).toBe('success');

    // three refunds and one sale: the buyer paid exactly once
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('900');
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
