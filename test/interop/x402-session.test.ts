/**
 * Issue 29 part 2, x402: the seller's 402 offers a payment session beside per-call payment as an
 * x402 `batch-settlement` entry (docs/protocol.md § Sessions in the other dialects), and the stock
 * @x402/fetch 2.27.0 `wrapFetchWithPayment` with our `createAgentpayX402SessionScheme` registered
 * pays a fastify seller over HTTPS (the real test gateway, the backend of the run): one session
 * opened (x402's deposit = our open, the grant in the corrective 402), every call a voucher in
 * PAYMENT-SIGNATURE with the seller-signed receipt in PAYMENT-RESPONSE, the seller's claims reach
 * the gateway, the close (x402's refund) releases the rest, and the ledger moves exactly what the
 * successful calls cost. A refused voucher's corrective 402 is x402's error shape with the state.
 */
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { isPaymentRequired } from '@x402/core/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentpayX402Scheme, createAgentpayX402SessionScheme, decodeX402Header, encodeX402Header, type X402PaymentPayload } from '../../packages/sdk/src/interop/x402.js';
import { parsePaymentChallenges, decodePaymentRequest } from '../../packages/sdk/src/interop/wire.js';
import { X402_SESSION_HINT } from '../../packages/sdk/src/interop/session-wire.js';
import type { SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { fundedAgent } from '../e2e/helpers.js';
import { expectSettled, PRICE, sessionsOf, snapshot, startSessionSeller, type SessionSeller } from './session-helpers.js';

let t: TestGateway;
let s: SessionSeller;

beforeAll(async () => {
  t = await startTestGateway();
  s = await startSessionSeller(t, 'Forecast (x402 sessions)', 10);
});
afterAll(async () => {
  await s?.app.close();
  await t?.close();
});

const schemeFor = (a: { walletId: string; privateKeyPem: string }, o: { capMinor?: string } = {}) =>
  createAgentpayX402SessionScheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '50', ...o });

describe('the 402 of a seller that takes sessions', () => {
  it('offers a batch-settlement entry after the agentpay one, and a Payment challenge of intent session, on the same signed challenge', async () => {
    const res = await s.fetch(`${s.url}/forecast/Porto`);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { challenge: { nonce: string; payTo: string; amountMinor: string } };
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(isPaymentRequired(required)).toBe(true);
    expect(required.accepts.map((a) => a.scheme)).toEqual(['agentpay', 'batch-settlement']);
    expect(required.accepts[1]).toMatchObject({
      network: 'agentpay:sandbox', amount: '10', asset: 'USD', payTo: body.challenge.payTo,
      extra: { howToPay: X402_SESSION_HINT, challenge: body.challenge, requestHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), session: { version: 1, capabilityId: s.capabilityId, priceMinor: '10' } },
    });
    const payment = parsePaymentChallenges(res.headers.get('www-authenticate')!);
    expect(payment.map((c) => c.intent)).toEqual(['charge', 'session']);
    expect(payment[1]).toMatchObject({ id: `${body.challenge.nonce}.session`, method: 'agentpay' });
    expect(decodePaymentRequest(payment[1]!.request!)).toMatchObject({ amount: '10', currency: 'usd', recipient: body.challenge.payTo, methodDetails: { challenge: body.challenge } });
  });
});

describe('stock @x402/fetch with createAgentpayX402SessionScheme', () => {
  it('pays 30 calls with one session: an open, then a voucher a call; the claims reach the gateway and the close settles the ledger', async () => {
    const a = await fundedAgent(t, '10000');
    const before = await snapshot(t, a.walletId);
    const scheme = schemeFor(a);
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const h = (input as Request).headers?.get('payment-signature');
      sent.push(h ? String(decodeX402Header<X402PaymentPayload>(h).payload.type) : 'unpaid');
      return s.fetch(input, init);
    };
    const pay = wrapFetchWithPayment(scheme.checkingFetch(recording), new x402Client().register('agentpay:*', scheme));
    const calls0 = s.handled.calls;
    for (let i = 0; i < 30; i++) {
      const res = await pay(`${s.url}/forecast/Lisbon`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', sunny: true });
      const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(settled).toMatchObject({ success: true, transaction: '', amount: '', payer: a.walletId, extra: { chargedAmount: '10' } });
      expect(settled.extra!.sessionReceipt as SessionReceipt).toMatchObject({ type: 'session.receipt', sequence: i + 1, chargedMinor: '10', cumulativeMinor: String((i + 1) * 10) });
    }
    expect(s.handled.calls - calls0).toBe(30);
    // the first call: unpaid (402), deposit (our open) answered with the grant in a corrective 402, its voucher;
    // the route learned, every later call carries its voucher straight away: no 402, no gateway challenge
    expect(sent.slice(0, 3)).toEqual(['unpaid', 'deposit', 'voucher']);
    expect(sent.slice(3)).toEqual(Array(29).fill('voucher'));
    const [open] = await sessionsOf(t, a.walletId);
    expect(await sessionsOf(t, a.walletId)).toHaveLength(1);
    expect(open).toMatchObject({ status: 'open', capMinor: String(PRICE * 100n) });
    // the seller claims every 10 vouchers, by itself (each claim takes what was served when it runs; one claim runs at a time)
    await until(async () => BigInt((await sessionsOf(t, a.walletId))[0]!.claimedMinor) >= 100n, 'the seller\'s claims of 30 calls');
    expect(BigInt((await sessionsOf(t, a.walletId))[0]!.claimedMinor)).toBeLessThanOrEqual(300n);
    expect(scheme.sessions.sessions()).toEqual([{ sessionId: open!.id, capMinor: '1000', settledMinor: '300', inFlight: 0 }]);

    const closed = await scheme.closeAll(s.fetch);
    expect(closed.map((x) => x.id)).toEqual([open!.id]);
    expect(scheme.sessions.sessions()).toEqual([]);
    await expectSettled(t, a.walletId, before, 30n * PRICE);
  });

  it('without the checking fetch, the response hook keeps the session; a failing call charges nothing; a spent cap opens another session', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(t, a.walletId);
    const scheme = schemeFor(a, { capMinor: '30' });
    const pay = wrapFetchWithPayment(s.fetch, new x402Client().register('agentpay:*', scheme));
    const statuses: number[] = [];
    for (const fail of [false, true, false, false, false]) statuses.push((await pay(`${s.url}/forecast/Faro${fail ? '?fail=1' : ''}`)).status);
    expect(statuses).toEqual([200, 500, 200, 200, 200]);
    // 4 paid calls of 10 under caps of 30: a second session for the fourth
    expect(await sessionsOf(t, a.walletId)).toHaveLength(2);
    expect((await scheme.closeAll(s.fetch))).toHaveLength(2);
    const after = await sessionsOf(t, a.walletId);
    expect(after.map((x) => x.claimedMinor).sort()).toEqual(['10', '30']);
    await expectSettled(t, a.walletId, before, 4n * PRICE);
  });

  it('resyncs from the corrective 402 when a parallel call\'s voucher overtook its own', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(t, a.walletId);
    const scheme = schemeFor(a);
    const errors: string[] = [];
    let held = false;
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    const holding: typeof fetch = async (input, init) => {
      const h = (input as Request).headers?.get('payment-signature');
      const type = h ? decodeX402Header<X402PaymentPayload>(h).payload.type : undefined;
      // hold back the first voucher of the parallel pair until the other one was served
      if (type === 'voucher' && scheme.sessions.sessions()[0]?.settledMinor === '10' && !held) {
        held = true;
        await released;
      }
      const res = await s.fetch(input, init);
      if (type === 'voucher' && res.status === 402) errors.push(decodePaymentRequiredHeader(res.headers.get('payment-required')!).error ?? '');
      if (type === 'voucher' && res.status === 200 && held) release();
      return res;
    };
    const pay = wrapFetchWithPayment(scheme.checkingFetch(holding), new x402Client().register('agentpay:*', scheme));
    expect((await pay(`${s.url}/forecast/Evora`)).status).toBe(200); // opens it
    const both = await Promise.all([pay(`${s.url}/forecast/Tavira`), pay(`${s.url}/forecast/Lagos`)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(errors).toEqual(['invalid_batch_settlement_agentpay_cumulative_amount_mismatch']);
    expect(await sessionsOf(t, a.walletId)).toHaveLength(1);
    await scheme.closeAll(s.fetch);
    await expectSettled(t, a.walletId, before, 3n * PRICE);
  });

  it('answers a replayed older voucher with x402\'s corrective 402: the error and the session\'s state', async () => {
    const a = await fundedAgent(t, '1000');
    const scheme = schemeFor(a);
    const headers: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const h = (input as Request).headers?.get('payment-signature');
      if (h && decodeX402Header<X402PaymentPayload>(h).payload.type === 'voucher') headers.push(h);
      return s.fetch(input, init);
    };
    const pay = wrapFetchWithPayment(scheme.checkingFetch(recording), new x402Client().register('agentpay:*', scheme));
    for (let i = 0; i < 3; i++) expect((await pay(`${s.url}/forecast/Nazare`)).status).toBe(200);
    const [session] = await sessionsOf(t, a.walletId);
    const calls0 = s.handled.calls;
    const res = await s.fetch(`${s.url}/forecast/Nazare`, { headers: { 'payment-signature': headers[0]! } });
    expect(res.status).toBe(402);
    expect(s.handled.calls).toBe(calls0);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.error).toBe('invalid_batch_settlement_agentpay_cumulative_amount_mismatch');
    expect(required.accepts).toHaveLength(1);
    expect(required.accepts[0]).toMatchObject({
      scheme: 'batch-settlement', amount: '10', asset: 'USD',
      extra: { channelId: session!.id, refusal: 'VOUCHER_STALE', channelState: { sessionId: session!.id, sequence: 3, cumulativeMinor: '30', spentMinor: '30' } },
    });
    expect(await res.json()).toMatchObject({ error: { code: 'VOUCHER_STALE' }, state: { sequence: 3 } });
    // a voucher payload that is not one: refused without serving
    const bad = encodeX402Header({ x402Version: 2, accepted: { scheme: 'batch-settlement' }, payload: { type: 'voucher', voucher: { sessionId: session!.id } } });
    expect((await s.fetch(`${s.url}/forecast/Nazare`, { headers: { 'payment-signature': bad } })).status).toBe(402);
    expect(s.handled.calls).toBe(calls0);
    await scheme.closeAll(s.fetch);
  });

  it('falls back to the stock flow when a straight voucher is refused: a seller that lost the session, and a new one opened', async () => {
    const a = await fundedAgent(t, '3000'); // two caps of 1000 held at once
    const before = await snapshot(t, a.walletId);
    const scheme = schemeFor(a);
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const h = (input as Request).headers?.get('payment-signature');
      const res = await s.fetch(input, init);
      sent.push(`${h ? String(decodeX402Header<X402PaymentPayload>(h).payload.type) : 'unpaid'} ${res.status}`);
      return res;
    };
    const pay = wrapFetchWithPayment(scheme.checkingFetch(recording), new x402Client().register('agentpay:*', scheme));
    for (let i = 0; i < 2; i++) expect((await pay(`${s.url}/forecast/Sagres`)).status).toBe(200);
    const [lost] = await sessionsOf(t, a.walletId);
    await s.store.delete(lost!.id); // as a restart of a seller that keeps its vouchers in memory
    sent.length = 0;
    const res = await pay(`${s.url}/forecast/Sagres`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ city: 'Sagres', sunny: true });
    // the straight voucher refused (the seller knows no such session), the request again as sent, a new open
    expect(sent).toEqual(['voucher 402', 'unpaid 402', 'deposit 402', 'voucher 200']);
    const all = await sessionsOf(t, a.walletId);
    expect(all).toHaveLength(2);
    expect(scheme.sessions.sessions().map((x) => x.sessionId)).toEqual([all.find((x) => x.id !== lost!.id)!.id]);
    expect((await scheme.closeAll(s.fetch)).map((x) => x.id)).not.toContain(lost!.id);
    // the lost session's two calls were never claimed: the seller's loss; closed at the gateway, its hold goes back
    await t.provider.sessions.close(lost!.id);
    await expectSettled(t, a.walletId, before, 1n * PRICE);
  });

  it('leaves a client that registers only the per-call scheme paying per call', async () => {
    const a = await fundedAgent(t, '1000');
    const perCall = createAgentpayX402Scheme({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    const res = await wrapFetchWithPayment(s.fetch, new x402Client().register('agentpay:*', perCall))(`${s.url}/forecast/Obidos`);
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!).extra).toHaveProperty('receipt');
    expect(await sessionsOf(t, a.walletId)).toEqual([]);
  });
});
