/**
 * Issue 18: an agentpay seller payable by the field's stock clients. The REST template's app
 * (fastify adapter) on loopback, the real HTTPS test gateway, and the published packages at
 * pinned versions: @x402/fetch 2.27.0 and @x402/axios 2.11.0 with our `agentpay` x402 scheme
 * registered (agentpay-sdk/x402), mppx 0.11.0 with our `agentpay` method (agentpay-sdk/mppx).
 * Each buys one call; the ledger moves 100 / 97 / 3; the receipt they get is accepted by
 * `agentpay receipts verify` (the built binary). The 402 carries all three dialects; problem
 * details on request; each plug-in refuses a wrong platform key and a price above its ceiling
 * before signing anything.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { isPaymentRequired } from '@x402/core/schemas';
import { wrapAxiosWithPayment, x402Client as AxiosX402Client } from '@x402/axios';
import axios from 'axios';
import { Mppx } from 'mppx/client';
import { Challenge, Receipt as MppReceipt } from 'mppx';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error the template is JavaScript
import { buildApp } from '../../templates/rest/src/app.js';
import { createAgentpayX402Scheme, verifyAgentpaySettlement, decodeX402Header, type X402PaymentPayload } from '../../packages/sdk/src/interop/x402.js';
import { MPP_CLIENT_HINT, X402_CLIENT_HINT } from '../../packages/sdk/src/interop/wire.js';
import { agentpayMppx } from '../../packages/sdk/src/interop/mppx.js';
import { decodeHeader, RECEIPT_HEADER, type PaymentProof, type Receipt } from '../../packages/sdk/src/protocol.js';
import { generateKeyPair, signObject } from '../../packages/sdk/src/signing.js';
import { cli, json, removeTempDirs, tempDir } from '../cli/helpers.js';
import { expectLedgerConsistent, fundedAgent, platformRevenue, publish, sha256, type AgentWallet } from '../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let t: TestGateway;
let app: FastifyInstance;
let url: string;
let capabilityId: string;
let dir: string;
const handled: string[] = [];
const TEXT = 'the quick brown fox jumps over the lazy dog again and again';
const call = () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: TEXT, maxWords: 3 }) });

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100', 'Summarize 100');
  app = await buildApp({ capabilityId, gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca });
  app.addHook('onResponse', async (request, reply) => {
    if (request.url === '/summarize' && reply.statusCode === 200) handled.push(request.headers['payment-signature'] ? 'x402' : request.headers.authorization ? 'payment' : 'agentpay');
  });
  // the MPP discovery document mppx validate starts from (publishing it is issue 18 part 5; served by hand here)
  app.get('/openapi.json', { config: { agentpay: false } }, async () => ({
    openapi: '3.1.0', info: { title: 'summarizer', version: '1.0.0' },
    paths: { '/summarize': { post: {
      summary: 'summarize a text', requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
      'x-payment-info': { offers: [{ intent: 'charge', method: 'agentpay', amount: '100', currency: 'usd' }] },
      responses: { 200: { description: 'OK' }, 402: { description: 'Payment Required' } },
    } } },
  }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  dir = tempDir('agentpay-interop-');
});
afterAll(async () => {
  await app?.close();
  await t?.close();
  removeTempDirs();
});

/** The agent's key behind a signer that counts what it signs: "refused before signing" is signed === 0. */
function countingSigner(a: AgentWallet) {
  const counter = { signed: 0 };
  const signer = (proof: unknown) => {
    counter.signed++;
    return signObject(a.privateKeyPem, proof as Record<string, unknown>);
  };
  return { counter, opts: { gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, signer } };
}

async function balances(walletId: string) {
  return {
    buyer: BigInt((await t.workspace.wallets.balance(walletId)).balanceMinor),
    seller: BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor),
    platform: await platformRevenue(t),
  };
}

/** 100 from the buyer, 97 to the seller, 3 to the platform. */
async function expectMoved(walletId: string, before: Awaited<ReturnType<typeof balances>>) {
  const after = await balances(walletId);
  expect(before.buyer - after.buyer).toBe(100n);
  expect(after.seller - before.seller).toBe(97n);
  expect(after.platform - before.platform).toBe(3n);
  await expectLedgerConsistent(t.workspace, walletId);
}

/** `agentpay receipts verify <receipt> --response <body> --json` with the built binary. */
async function cliVerifies(receipt: Receipt, body: Uint8Array, name: string) {
  const receiptPath = join(dir, `${name}.receipt.json`);
  const bodyPath = join(dir, `${name}.body`);
  writeFileSync(receiptPath, JSON.stringify(receipt));
  writeFileSync(bodyPath, body);
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, t.ca);
  const r = await cli(['receipts', 'verify', receiptPath, '--response', bodyPath, '--json'], { configDir: dir, env: { AGENTPAY_BASE_URL: t.baseUrl, AGENTPAY_CA: caPath } });
  expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  expect(json(r)).toMatchObject({ valid: true, checks: { signature: 'valid', responseHash: 'match' } });
}

describe('the 402 of the template seller', () => {
  it('carries our body, an x402 v2 PAYMENT-REQUIRED and a WWW-Authenticate: Payment challenge, all the same signed challenge', async () => {
    const res = await fetch(`${url}/summarize`, { ...call(), headers: { ...call().headers, origin: 'https://app.example' } });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string }; challenge: { nonce: string; amountMinor: string; currency: string; payTo: string; expiresAt: string } };
    expect(body.error.code).toBe('PAYMENT_REQUIRED');
    expect(res.headers.get('cache-control')).toBe('no-store');

    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!); // the stock decoder: standard base64
    expect(isPaymentRequired(required)).toBe(true);
    expect(required).toMatchObject({ x402Version: 2, resource: { url: `${url}/summarize` } });
    expect(required.accepts).toEqual([{
      scheme: 'agentpay', network: 'agentpay:sandbox', amount: '100', asset: 'USD', payTo: body.challenge.payTo,
      maxTimeoutSeconds: expect.any(Number), extra: { howToPay: X402_CLIENT_HINT, challenge: body.challenge },
    }]);
    expect(required.error).toBe(`payment required; ${X402_CLIENT_HINT}`);
    expect(required.extensions?.['payment-identifier']).toMatchObject({ info: { required: false } });

    const ch = Challenge.fromResponse(res); // mppx's own parser
    expect(ch).toMatchObject({ id: body.challenge.nonce, realm: '127.0.0.1', method: 'agentpay', intent: 'charge', expires: body.challenge.expiresAt, description: MPP_CLIENT_HINT });
    expect(ch.request).toEqual({ amount: '100', currency: 'usd', recipient: body.challenge.payTo, methodDetails: { challenge: body.challenge } });

    const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase();
    for (const h of ['x-service-receipt', 'payment-required', 'payment-response', 'www-authenticate', 'payment-receipt']) expect(exposed).toContain(h);
  });

  it('tells a stock client without our scheme what to install: x402 names agentpay-sdk/x402, mppx agentpay-sdk/mppx', async () => {
    // @x402/fetch with only an EVM scheme: its error carries the accepts, and so our pointer
    const evmOnly = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', { scheme: 'exact', createPaymentPayload: async () => { throw new Error('not called'); } } as never));
    const x402Error = await evmOnly(`${url}/summarize`, call()).then(() => null, (e: Error) => e);
    expect(x402Error?.message).toMatch(/No network\/scheme registered/);
    expect(x402Error?.message).toContain('agentpay-sdk/x402');
    expect(x402Error?.message).toContain('createAgentpayX402Scheme');

    // mppx with only another method: it refuses, and the challenge it parsed carries the pointer
    const other = { name: 'tempo', intent: 'charge', createCredential: async () => { throw new Error('not called'); } };
    const mppx = Mppx.create({ methods: [other as never], polyfill: false });
    const mppError = await mppx.fetch(`${url}/summarize`, call()).then(() => null, (e: Error) => e);
    expect(mppError?.message).toMatch(/No method found for challenges: agentpay\.charge/);
    const unpaid = await fetch(`${url}/summarize`, call());
    expect(Challenge.fromResponse(unpaid).description).toBe(MPP_CLIENT_HINT);
    expect(MPP_CLIENT_HINT).toContain('agentpay-sdk/mppx');
  });

  it('answers problem details (RFC 9457) with our error code to a buyer that asks for them', async () => {
    const res = await fetch(`${url}/summarize`, { ...call(), headers: { ...call().headers, accept: 'application/problem+json' } });
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const p = (await res.json()) as Record<string, unknown>;
    expect(p).toMatchObject({ type: 'https://paymentauth.org/problems/payment-required', title: 'Payment Required', status: 402, code: 'PAYMENT_REQUIRED', challenge: { amountMinor: '100' } });
    expect(res.headers.get('payment-required')).toBeTruthy();
    expect(res.headers.get('www-authenticate')).toMatch(/^Payment /);
  });

  it('answers a garbage Authorization: Payment 402 with a fresh challenge, and an x402 "exact" payment 400 method-unsupported', async () => {
    const garbage = await fetch(`${url}/summarize`, { ...call(), headers: { ...call().headers, authorization: 'Payment dGhpcyBpcyBnYXJiYWdl', accept: 'application/problem+json' } });
    expect(garbage.status).toBe(402);
    expect(garbage.headers.get('www-authenticate')).toMatch(/^Payment id="/);
    expect(await garbage.json()).toMatchObject({ type: 'https://paymentauth.org/problems/malformed-credential', code: 'PAYMENT_INVALID' });

    const exact = { x402Version: 2, accepted: { scheme: 'exact', network: 'eip155:8453', amount: '100', asset: '0xabc', payTo: '0xdef', maxTimeoutSeconds: 60 }, payload: { signature: '0x00' } };
    const res = await fetch(`${url}/summarize`, { ...call(), headers: { ...call().headers, 'payment-signature': Buffer.from(JSON.stringify(exact)).toString('base64') } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'NOT_SUPPORTED', details: { problem: 'method-unsupported' } }, challenge: { amountMinor: '100' } });
    expect(res.headers.get('payment-required')).toBeTruthy();
    expect(handled).toEqual([]);
  });
});

describe('a stock @x402/fetch with the agentpay scheme registered', () => {
  it('buys one call: 200, PAYMENT-RESPONSE with the signed receipt, 100 / 97 / 3, and receipts verify accepts it', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const scheme = createAgentpayX402Scheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });
    const client = new x402Client().register('agentpay:*', scheme);
    const pay = wrapFetchWithPayment(scheme.checkingFetch(fetch), client);

    const res = await pay(`${url}/summarize`, call());
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(JSON.parse(Buffer.from(body).toString())).toEqual({ summary: 'the quick brown', words: 3, truncated: true });
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settle).toMatchObject({ success: true, network: 'agentpay:sandbox', payer: a.walletId, amount: '100' });
    const receipt = (settle.extra as { receipt: Receipt }).receipt;
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, transactionId: settle.transaction, responseHash: sha256(body) });
    expect(decodeHeader<Receipt>(res.headers.get(RECEIPT_HEADER)!)).toEqual(receipt);
    expect(scheme.lastReceipt).toEqual(receipt); // verified by the scheme (hook and checking fetch)
    expect(handled.at(-1)).toBe('x402');
    await expectMoved(a.walletId, before);
    await cliVerifies(receipt, body, 'x402');
  });

  it('refuses before signing: a challenge not signed by the pinned platform key, a price above maxPriceMinor, a price above the x402 spend cap', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const probe = (await (await fetch(`${url}/summarize`, call())).json()) as { challenge: { signingKeyId: string } };
    const other = await generateKeyPair();

    const wrongKey = countingSigner(a);
    const s1 = createAgentpayX402Scheme({ ...wrongKey.opts, platformKeys: { [probe.challenge.signingKeyId]: other.publicKeyPem } });
    await expect(wrapFetchWithPayment(fetch, new x402Client().register('agentpay:*', s1))(`${url}/summarize`, call())).rejects.toThrow(/not signed by this gateway's platform key/);
    expect(wrongKey.counter.signed).toBe(0);

    const low = countingSigner(a);
    const s2 = createAgentpayX402Scheme({ ...low.opts, maxPriceMinor: '99' });
    await expect(wrapFetchWithPayment(fetch, new x402Client().register('agentpay:*', s2))(`${url}/summarize`, call())).rejects.toThrow(/above this buyer's limit of 99/);
    expect(low.counter.signed).toBe(0);

    const capped = countingSigner(a);
    const s3 = createAgentpayX402Scheme({ ...capped.opts, maxPriceMinor: '500' });
    const c3 = new x402Client().register('agentpay:*', s3).setSpendControls({ maxAmountPerPayment: '$0.50' });
    await expect(wrapFetchWithPayment(fetch, c3)(`${url}/summarize`, call())).rejects.toThrow();
    expect(capped.counter.signed).toBe(0);

    expect(await balances(a.walletId)).toEqual(before);
  });

  it('@x402/axios 2.11 pays too; verifyAgentpaySettlement checks the receipt against the bytes', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const scheme = createAgentpayX402Scheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });
    const ax = wrapAxiosWithPayment(axios.create({ responseType: 'arraybuffer' }), new AxiosX402Client().register('agentpay:*', scheme));
    const res = await ax.post(`${url}/summarize`, { text: TEXT, maxWords: 3 });
    expect(res.status).toBe(200);
    const body = new Uint8Array(res.data as ArrayBuffer);
    const sent = decodeX402Header<X402PaymentPayload>(String(res.config.headers['PAYMENT-SIGNATURE'] ?? res.config.headers['payment-signature']));
    const receipt = await verifyAgentpaySettlement(scheme.payer, String(res.headers['payment-response']), body, (sent.payload.proof as PaymentProof).challenge);
    expect(receipt).toMatchObject({ status: 'success', consumerId: a.walletId });
    await expectMoved(a.walletId, before);
  });
});

describe('a stock mppx client with the agentpay method registered', () => {
  it('buys one call: 200, Payment-Receipt with the signed receipt, 100 / 97 / 3, and receipts verify accepts it', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const agentpay = agentpayMppx({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '500' });
    const realFetch = globalThis.fetch;
    const mppx = Mppx.create({ methods: [agentpay.method], fetch: agentpay.fetch(fetch), polyfill: false });
    expect(globalThis.fetch).toBe(realFetch);

    const res = await mppx.fetch(`${url}/summarize`, call());
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    const pr = MppReceipt.fromResponse(res) as ReturnType<typeof MppReceipt.fromResponse> & { receipt: Receipt; challengeId: string };
    expect(pr).toMatchObject({ status: 'success', method: 'agentpay', reference: pr.receipt.transactionId });
    expect(pr.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, responseHash: sha256(body) });
    expect(agentpay.lastReceipt).toEqual(pr.receipt);
    expect(handled.at(-1)).toBe('payment');
    await expectMoved(a.walletId, before);
    await cliVerifies(pr.receipt, body, 'mppx');
  });

  it('refuses before signing: a wrong platform key, a price above maxPriceMinor', async () => {
    const a = await fundedAgent(t, '100');
    const before = await balances(a.walletId);
    const probe = (await (await fetch(`${url}/summarize`, call())).json()) as { challenge: { signingKeyId: string } };
    const other = await generateKeyPair();

    const wrongKey = countingSigner(a);
    const m1 = agentpayMppx({ ...wrongKey.opts, platformKeys: { [probe.challenge.signingKeyId]: other.publicKeyPem } });
    await expect(Mppx.create({ methods: [m1.method], polyfill: false }).fetch(`${url}/summarize`, call())).rejects.toThrow(/not signed by this gateway's platform key/);
    expect(wrongKey.counter.signed).toBe(0);

    const low = countingSigner(a);
    const m2 = agentpayMppx({ ...low.opts, maxPriceMinor: '99' });
    await expect(Mppx.create({ methods: [m2.method], polyfill: false }).fetch(`${url}/summarize`, call())).rejects.toThrow(/above this buyer's limit of 99/);
    expect(low.counter.signed).toBe(0);

    expect(await balances(a.walletId)).toEqual(before);
  });
});

describe('conformance', () => {
  it('`mppx validate` (mppx 0.11.0) passes against the template seller: no check failed, exit 0', async () => {
    const bin = fileURLToPath(new URL('../../node_modules/.bin/mppx', import.meta.url));
    const r = await execa(bin, ['validate', url, '--output-json', '--body', JSON.stringify({ '/summarize': { text: TEXT } })], { reject: false, timeout: 120_000, stdin: 'ignore' });
    let report: { summary?: { passed: number; failed: number; warnings?: number } } = {};
    try {
      report = JSON.parse(r.stdout);
    } catch {
      throw new Error(`mppx validate printed no JSON (exit ${r.exitCode}):\n${r.stdout}\n${r.stderr}`);
    }
    if (process.env.AGENTPAY_SHOW_VALIDATE) console.log(r.stdout);
    expect(report.summary?.failed, r.stdout).toBe(0);
    expect(report.summary?.passed).toBeGreaterThan(5);
    expect(r.exitCode, r.stdout).toBe(0);
  });
});
