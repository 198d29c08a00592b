/**
 * The seller's own behaviour, without a gateway: a stand-in for the payment side
 * (the `seller` option of the agentpay plugin) records what the plugin asked it, so these
 * tests show which calls are free, which are charged, and that the handler runs only
 * after a payment was admitted. scripts/e2e.mjs does the same against a real gateway.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, summarize } from '../src/app.js';
import { capability, publishInput } from '../src/capability.js';
import { decodeHeader } from 'agentpay-sdk/protocol';

const CAPABILITY_ID = 'cap_test';

/** A SellerPayments stand-in: an x-payment header of "ok" is admitted, anything else gets a 402. */
function fakePayments() {
  const log = { admitted: [], settled: [] };
  return {
    log,
    capabilityFor: () => undefined,
    async admit(capabilityId, header) {
      if (header !== 'ok') {
        const challenge = { capabilityId, providerId: 'prv_test', amountMinor: capability.priceMinor, currency: 'USD', nonce: 'n', expiresAt: '2030-01-01T00:00:00.000Z', payTo: 'wal_seller', signature: 's', signingKeyId: 'k' };
        const body = new TextEncoder().encode(JSON.stringify({ error: { code: 'PAYMENT_REQUIRED' }, challenge: { capabilityId } }));
        return { kind: 'challenge', challenge, status: 402, headers: { 'content-type': 'application/json' }, body };
      }
      const call = { transactionId: `txn_${log.admitted.length + 1}`, capabilityId, walletId: 'wal_buyer', amountMinor: capability.priceMinor, currency: 'USD' };
      log.admitted.push(call);
      return { kind: 'admitted', call };
    },
    async settle(call, outcome) {
      log.settled.push({ transactionId: call.transactionId, statusCode: outcome.statusCode, body: Buffer.from(outcome.body).toString('utf8') });
      // the gateway's signed receipt; the plugin sends it in the x-service-receipt header
      return { receipt: { id: `rcp_of_${call.transactionId}`, transactionId: call.transactionId, status: 'success' } };
    },
  };
}

let app;
afterEach(async () => {
  await app?.close();
});

async function appWith(payments) {
  app = await buildApp({ capabilityId: CAPABILITY_ID, seller: payments });
  return app;
}

describe('GET /health', () => {
  it('answers 200 for free: the payment side is never asked', async () => {
    const payments = fakePayments();
    const res = await (await appWith(payments)).inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(payments.log.admitted).toEqual([]);
    expect(payments.log.settled).toEqual([]);
  });
});

describe('POST /summarize', () => {
  it('answers an unpaid call with 402 and the price challenge, without running the handler', async () => {
    const payments = fakePayments();
    const res = await (await appWith(payments)).inject({ method: 'POST', url: '/summarize', payload: { text: 'one two three' } });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ error: { code: 'PAYMENT_REQUIRED' }, challenge: { capabilityId: CAPABILITY_ID } });
    // the same challenge in the other dialects' headers: x402 v2 and the HTTP Payment scheme
    expect(res.headers['payment-required']).toBeTruthy();
    expect(res.headers['www-authenticate']).toMatch(/^Payment /);
    expect(payments.log.settled).toEqual([]);
  });

  it('runs a paid call and settles it with the exact bytes it sends, receipt attached', async () => {
    const payments = fakePayments();
    const res = await (await appWith(payments)).inject({ method: 'POST', url: '/summarize', headers: { 'x-payment': 'ok' }, payload: { text: 'one two three four', maxWords: 2 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ summary: 'one two', words: 2, truncated: true });
    expect(decodeHeader(res.headers['x-service-receipt'])).toEqual({ id: 'rcp_of_txn_1', transactionId: 'txn_1', status: 'success' });
    expect(payments.log.settled).toEqual([{ transactionId: 'txn_1', statusCode: 200, body: res.body }]);
  });

  it.each([
    ['no text', { maxWords: 3 }],
    ['text not a string', { text: 42 }],
    ['an empty text', { text: '' }],
    ['maxWords not an integer', { text: 'a b', maxWords: '2' }],
    ['maxWords out of range', { text: 'a b', maxWords: 0 }],
    ['an unknown field', { text: 'a b', extra: true }],
  ])('refuses a body with %s with 400 before any payment', async (_, payload) => {
    const payments = fakePayments();
    const res = await (await appWith(payments)).inject({ method: 'POST', url: '/summarize', headers: { 'x-payment': 'ok' }, payload });
    expect(res.statusCode).toBe(400);
    expect(payments.log.admitted).toEqual([]);
    expect(payments.log.settled).toEqual([]);
  });
});

describe('summarize', () => {
  it('keeps the first maxWords words and says whether it cut', () => {
    expect(summarize('  a  b\nc ', 5)).toEqual({ summary: 'a b c', words: 3, truncated: false });
    expect(summarize('a b c', 2)).toEqual({ summary: 'a b', words: 2, truncated: true });
  });
});

describe('the capability', () => {
  it('is a REST capability priced in integer minor units, publishing the route and its body schema', () => {
    expect(capability.priceMinor).toMatch(/^[1-9][0-9]*$/);
    expect(publishInput('https://api.example.com')).toMatchObject({ protocol: 'rest', endpoint: 'https://api.example.com/summarize', schema: { type: 'object', required: ['text'] } });
  });
});
