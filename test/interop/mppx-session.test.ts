/**
 * Issue 29 part 2, MPP: the seller's 402 offers a payment session beside per-call payment as a
 * Payment challenge of intent `session` (docs/protocol.md § Sessions in the other dialects), and
 * the stock mppx 0.11.0 client (`Mppx.create`) with our `agentpayMppxSession` method pays a
 * fastify seller over HTTPS (the real test gateway, the backend of the run): one session opened
 * (action open, the grant in the corrective 402's new session challenge), every call a voucher
 * (action voucher) answered with `Payment-Receipt` carrying the seller-signed session receipt, the
 * seller's claims reach the gateway, the close (action close) releases the rest, and the ledger
 * moves exactly what the successful calls cost.
 */
import { Mppx } from 'mppx/client';
import { Receipt as MppReceipt } from 'mppx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentpayMppx, agentpayMppxSession, decodePaymentCredential, decodePaymentReceipt, parsePaymentChallenges, decodePaymentRequest } from '../../packages/sdk/src/interop/mppx.js';
import type { SessionReceipt } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { fundedAgent } from '../e2e/helpers.js';
import { expectSettled, PRICE, sessionsOf, snapshot, startSessionSeller, type SessionSeller } from './session-helpers.js';

let t: TestGateway;
let s: SessionSeller;

beforeAll(async () => {
  t = await startTestGateway();
  s = await startSessionSeller(t, 'Forecast (MPP sessions)', 10);
});
afterAll(async () => {
  await s?.app.close();
  await t?.close();
});

const sessionFor = (a: { walletId: string; privateKeyPem: string }, o: { capMinor?: string } = {}) =>
  agentpayMppxSession({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, maxPriceMinor: '50', ...o });

/** The action of each Payment credential a fetch sends. */
function recording(inner: typeof fetch, actions: string[]): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const auth = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('authorization');
    const c = auth ? decodePaymentCredential(auth) : null;
    actions.push(c?.challenge.intent === 'session' ? String(c.payload.action) : 'unpaid');
    return inner(input, init);
  }) as typeof fetch;
}

describe('stock mppx with agentpayMppxSession', () => {
  it('pays 25 calls with one session: an open, then a voucher a call, each answer with Payment-Receipt; the claims reach the gateway and the close settles the ledger', async () => {
    const a = await fundedAgent(t, '10000');
    const before = await snapshot(t, a.walletId);
    const session = sessionFor(a);
    const actions: string[] = [];
    const mppx = Mppx.create({ methods: [session.method], fetch: session.fetch(recording(s.fetch, actions)), polyfill: false });
    const calls0 = s.handled.calls;
    for (let i = 0; i < 25; i++) {
      const res = await mppx.fetch(`${s.url}/forecast/Lisbon`);
      expect(res.status).toBe(200);
      expect(await res.clone().json()).toEqual({ city: 'Lisbon', sunny: true });
      const stock = MppReceipt.fromResponse(res); // mppx's own parser
      expect(stock).toMatchObject({ status: 'success', method: 'agentpay' });
      const r = decodePaymentReceipt(res.headers.get('payment-receipt')!) as unknown as { reference: string; sessionReceipt: SessionReceipt };
      expect(r.sessionReceipt).toMatchObject({ type: 'session.receipt', sequence: i + 1, chargedMinor: '10', cumulativeMinor: String((i + 1) * 10) });
      expect(r.reference).toBe(r.sessionReceipt.sessionId);
    }
    expect(s.handled.calls - calls0).toBe(25);
    // the first call: unpaid (402), the open (the grant in a corrective 402), its voucher; then a voucher straight away a call
    expect(actions.slice(0, 3)).toEqual(['unpaid', 'open', 'voucher']);
    expect(actions.slice(3)).toEqual(Array(24).fill('voucher'));
    const all = await sessionsOf(t, a.walletId);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'open', capMinor: String(PRICE * 100n) });
    // each claim takes what was served when it runs: 100 at least after 25 calls (claims every 10), at most what was paid
    await until(async () => BigInt((await sessionsOf(t, a.walletId))[0]!.claimedMinor) >= 100n, 'the seller\'s claims at 10 and 20 vouchers');
    expect(BigInt((await sessionsOf(t, a.walletId))[0]!.claimedMinor)).toBeLessThanOrEqual(250n);

    const closed = await session.closeAll(s.fetch);
    expect(closed.map((x) => x.id)).toEqual([all[0]!.id]);
    expect(actions.at(-1)).toBe('voucher'); // the close went out by closeAll, not through mppx
    await expectSettled(t, a.walletId, before, 25n * PRICE);
  });

  it('charges nothing for a failing call and opens another session when the cap is spent', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(t, a.walletId);
    const session = sessionFor(a, { capMinor: '20' });
    const mppx = Mppx.create({ methods: [session.method], fetch: session.fetch(s.fetch), polyfill: false });
    const statuses: number[] = [];
    for (const fail of [false, true, false, false]) statuses.push((await mppx.fetch(`${s.url}/forecast/Faro${fail ? '?fail=1' : ''}`)).status);
    expect(statuses).toEqual([200, 500, 200, 200]);
    expect(await sessionsOf(t, a.walletId)).toHaveLength(2);
    expect(await session.closeAll(s.fetch)).toHaveLength(2);
    expect((await sessionsOf(t, a.walletId)).map((x) => x.claimedMinor).sort()).toEqual(['10', '20']);
    await expectSettled(t, a.walletId, before, 3n * PRICE);
  });

  it('answers a replayed older voucher with a corrective 402: a new session challenge with the state, and serves nothing', async () => {
    const a = await fundedAgent(t, '1000');
    const session = sessionFor(a);
    const sent: string[] = [];
    const keep: typeof fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const auth = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('authorization');
      if (auth && decodePaymentCredential(auth)?.payload.action === 'voucher') sent.push(auth);
      return s.fetch(input, init);
    }) as typeof fetch;
    const mppx = Mppx.create({ methods: [session.method], fetch: session.fetch(keep), polyfill: false });
    for (let i = 0; i < 3; i++) expect((await mppx.fetch(`${s.url}/forecast/Nazare`)).status).toBe(200);
    const [open] = await sessionsOf(t, a.walletId);
    const calls0 = s.handled.calls;
    const res = await s.fetch(`${s.url}/forecast/Nazare`, { headers: { authorization: sent[0]! } });
    expect(res.status).toBe(402);
    expect(s.handled.calls).toBe(calls0);
    const [challenge, ...more] = parsePaymentChallenges(res.headers.get('www-authenticate')!);
    expect(more).toEqual([]);
    expect(challenge).toMatchObject({ method: 'agentpay', intent: 'session' });
    expect(decodePaymentRequest(challenge!.request!)).toMatchObject({
      amount: '10', methodDetails: { channelId: open!.id, refusal: 'VOUCHER_STALE', channelState: { sessionId: open!.id, sequence: 3, cumulativeMinor: '30', spentMinor: '30' } },
    });
    await session.closeAll(s.fetch);
  });

  it('leaves a client with only the charge method paying per call', async () => {
    const a = await fundedAgent(t, '1000');
    const perCall = agentpayMppx({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    const res = await Mppx.create({ methods: [perCall.method], fetch: perCall.fetch(s.fetch), polyfill: false }).fetch(`${s.url}/forecast/Obidos`);
    expect(res.status).toBe(200);
    expect(decodePaymentReceipt(res.headers.get('payment-receipt')!).receipt).toMatchObject({ status: 'success' });
    expect(await sessionsOf(t, a.walletId)).toEqual([]);
  });
});
