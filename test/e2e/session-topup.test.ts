/**
 * Top-ups of payment sessions by the buyer (docs/sdk.md § Payment sessions, protocol.md § Sessions
 * on the wire): `createBuyer` against a fastify seller over HTTPS on 127.0.0.1 (the gateway's
 * certificate) that takes sessions, through the real HTTPS test gateway, on the backend of the run.
 * When a session's cap cannot cover the next call, the buyer signs a `session.topup`, the seller
 * forwards it and takes the raised grant, and the same session goes on: the gateway shows the
 * raised cap and a hold per top-up, the wallet holds the cap less what was claimed, and after
 * `buyer.close()` the ledger moved exactly what the calls cost (the seller credited less the 3%
 * fee, the fee to the platform, the unused rest released). Past `maxCapMinor` another session is
 * opened; a top-up the gateway refuses falls back to another session or per-call payment.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import type { BuyerSessionOptions } from '../../packages/sdk/src/buyer/session-pool.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import type { Session } from '../../packages/sdk/src/contract/sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, platformRevenue, publish, type AgentWallet } from './helpers.js';
import { until } from '../helpers/wait.js';

const PRICE = 10n;
/** 3% rounded down, over what a session paid in all */
const fee = (n: bigint) => (n * 300n) / 10_000n;

let t: TestGateway;
let seller: FastifyInstance;
let url = '';
/** every top-up header that reached the seller */
const topUpsSeen: string[] = [];
let handled = 0;

beforeAll(async () => {
  t = await startTestGateway();
  seller = Fastify({ https: { cert: t.gw.tls!.cert, key: t.gw.tls!.key } });
  seller.addHook('onRequest', async (request) => {
    const h = request.headers['x-agentpay-session-topup'];
    if (typeof h === 'string') topUpsSeen.push(h);
  });
  await seller.register(agentpaySeller, {
    gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {},
    capabilityId: await publish(t, PRICE.toString(), 'Forecast (top-ups)'), sessions: { claimEvery: 15 },
  });
  seller.get('/forecast/:city', async (req) => {
    handled++;
    return { city: (req.params as { city: string }).city, sunny: true };
  });
  await seller.listen({ host: '127.0.0.1', port: 0 });
  url = `https://127.0.0.1:${(seller.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await seller?.close();
  await t?.close();
});

const buyerFor = (a: AgentWallet, sessions: BuyerSessionOptions) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: fetchTrusting(t.ca), sessions });
const balance = async (walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
const sessionsOf = async (walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);
const snapshot = async (walletId: string) => ({ buyer: (await balance(walletId)).balance, seller: await sellerBalance(), platform: await platformRevenue(t) });
/** The holds the wallet's ledger placed for a session: its open, then one per top-up. */
const holdsOf = async (walletId: string, sessionId: string) =>
  (await t.workspace.wallets.ledger(walletId)).filter((e) => e.transactionId === sessionId && e.type === 'hold').map((e) => e.holdMinor);

/** Closed sessions and per-call payments moved exactly `paid` from the buyer: the seller got it less the fees, the platform the fees, nothing held. */
async function expectSettled(walletId: string, before: { buyer: bigint; seller: bigint; platform: bigint }, sessions: Session[], perCall: bigint, paid: bigint): Promise<void> {
  const sessionPaid = sessions.reduce((sum, s) => sum + BigInt(s.claimedMinor), 0n);
  expect(sessionPaid + perCall).toBe(paid);
  const fees = sessions.reduce((sum, s) => sum + fee(BigInt(s.claimedMinor)), 0n) + fee(perCall);
  for (const s of sessions) {
    expect(s.status).toBe('closed');
    expect(s.heldMinor).toBe('0');
    expect(s.feeMinor).toBe(fee(BigInt(s.claimedMinor)).toString());
  }
  expect(await balance(walletId)).toEqual({ balance: before.buyer - paid, held: 0n });
  expect(await sellerBalance()).toBe(before.seller + paid - fees);
  expect(await platformRevenue(t)).toBe(before.platform + fees);
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

describe('the buyer tops up a session whose cap cannot cover the next call', () => {
  it('pays 35 calls with one session of cap 100 raised three times; hold = cap − claimed; the rest released at close', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a, { capMinor: '100' });
    const seen = topUpsSeen.length;
    const ran = handled;
    for (let i = 0; i < 35; i++) {
      const res = await buyer.fetch(`${url}/forecast/Lisbon`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ city: 'Lisbon', sunny: true });
      expect(res.sessionReceipt).toMatchObject({ sequence: i + 1, chargedMinor: '10', cumulativeMinor: String((i + 1) * 10) });
    }
    expect(handled - ran).toBe(35);
    expect(topUpsSeen.length - seen).toBe(3);
    expect(buyer.sessions()).toEqual([expect.objectContaining({ capMinor: '400', topUps: 3, settledMinor: '350' })]);

    // the gateway: one session, its cap raised to 400, a hold for the open and one per top-up
    let [open] = await sessionsOf(a.walletId);
    expect(await sessionsOf(a.walletId)).toHaveLength(1);
    expect(open).toMatchObject({ status: 'open', capMinor: '400' });
    expect(await holdsOf(a.walletId, open!.id)).toEqual(['100', '100', '100', '100']);
    // the seller claims every 15 vouchers (without the call waiting): read once the wallet and the session agree
    await until(async () => (await sessionsOf(a.walletId))[0]?.claimedMinor === '300', 'the claims at 15 and 30 vouchers');
    await until(async () => {
      [open] = await sessionsOf(a.walletId);
      const b = await balance(a.walletId);
      return b.balance === before.buyer - BigInt(open!.claimedMinor) && b.held === BigInt(open!.capMinor) - BigInt(open!.claimedMinor);
    }, 'the wallet to hold the cap less what was claimed');
    expect(open!.heldMinor).toBe(String(400n - BigInt(open!.claimedMinor)));
    await expectLedgerConsistent(t.workspace, a.walletId);

    const closed = await buyer.close();
    expect(closed.map((s) => s.id)).toEqual([open!.id]);
    expect(closed[0]).toMatchObject({ status: 'closed', capMinor: '400', claimedMinor: '350', heldMinor: '0' });
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 0n, 35n * PRICE);
  });

  it('tops up once for 20 parallel calls that all need more than the cap, and charges each call once', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a, { capMinor: '50', topUpMinor: '250' });
    expect((await buyer.fetch(`${url}/forecast/Evora`)).status).toBe(200); // opens it
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => buyer.fetch(`${url}/forecast/Town${i}`)));
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(all.every((r) => r.sessionReceipt?.chargedMinor === '10')).toBe(true);
    const sessions = await sessionsOf(a.walletId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ capMinor: '300' });
    expect(await holdsOf(a.walletId, sessions[0]!.id)).toEqual(['50', '250']);
    await buyer.close();
    await expectSettled(a.walletId, before, await sessionsOf(a.walletId), 0n, 21n * PRICE);
  });

  it('opens another session once top-ups would pass maxCapMinor, and closes both', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a, { capMinor: '100', maxCapMinor: '150' });
    for (let i = 0; i < 20; i++) expect((await buyer.fetch(`${url}/forecast/Braga`)).status).toBe(200);
    await buyer.close();
    const sessions = await sessionsOf(a.walletId);
    // the first raised from 100 to 150 (the most), then a second opened for the last 5 calls
    expect(sessions.map((s) => `${s.capMinor}/${s.claimedMinor}`).sort()).toEqual(['100/50', '150/150']);
    await expectSettled(a.walletId, before, sessions, 0n, 20n * PRICE);
  });

  it('with topUpMinor 0, closes a spent session and opens another, as without top-ups', async () => {
    const a = await fundedAgent(t, '1000');
    const before = await snapshot(a.walletId);
    const seen = topUpsSeen.length;
    const buyer = buyerFor(a, { capMinor: '100', topUpMinor: '0' });
    for (let i = 0; i < 12; i++) expect((await buyer.fetch(`${url}/forecast/Faro`)).status).toBe(200);
    await buyer.close();
    expect(topUpsSeen.length).toBe(seen);
    const sessions = await sessionsOf(a.walletId);
    expect(sessions.map((s) => `${s.capMinor}/${s.claimedMinor}`).sort()).toEqual(['100/100', '100/20']);
    await expectSettled(a.walletId, before, sessions, 0n, 12n * PRICE);
  });

  it('a top-up the gateway refuses (the wallet cannot hold the increase) moves nothing; the calls go on per-call', async () => {
    const a = await fundedAgent(t, '150');
    const before = await snapshot(a.walletId);
    const buyer = buyerFor(a, { capMinor: '100' });
    const seen = topUpsSeen.length;
    const receipts: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await buyer.fetch(`${url}/forecast/Sagres`);
      expect(res.status).toBe(200);
      receipts.push(res.sessionReceipt ? 'session' : res.receipt?.status ?? 'none');
    }
    expect(topUpsSeen.length - seen).toBe(1);
    // the first ten on the session; the 11th's top-up refused (50 available, 100 asked), and so is a new open: per-call
    expect(receipts).toEqual([...Array(10).fill('session'), 'success', 'success']);
    await buyer.close();
    const sessions = await sessionsOf(a.walletId);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ capMinor: '100', claimedMinor: '100' });
    expect(await holdsOf(a.walletId, sessions[0]!.id)).toEqual(['100']);
    await expectSettled(a.walletId, before, sessions, 2n * PRICE, 12n * PRICE);
  });

  it("a top-up a budget policy refuses moves nothing; the session's rest is released at close and the call is paid per-call", async () => {
    const ws = await t.newWorkspace('Top-up budget');
    const a = await t.newAgentWallet(ws.client, 'budgeted-agent');
    await ws.client.wallets.fund(a.walletId, '5000');
    await ws.client.policies.apply('budget:\n  per agent 250 per day\n');
    const before = { buyer: 5000n, seller: await sellerBalance(), platform: await platformRevenue(t) };
    const buyer = buyerFor(a, { capMinor: '100' });
    const seen = topUpsSeen.length;
    const kinds: string[] = [];
    for (let i = 0; i < 21; i++) {
      const res = await buyer.fetch(`${url}/forecast/Tavira`);
      expect(res.status).toBe(200);
      kinds.push(res.sessionReceipt ? 'session' : res.receipt?.status ?? 'none');
    }
    // 100 then 200 fit the day's 250; the raise to 300 does not, nor does a new session of 100 beside 200: per-call
    expect(topUpsSeen.length - seen).toBe(2);
    expect(kinds).toEqual([...Array(20).fill('session'), 'success']);
    await buyer.close();
    const sessions = (await ws.client.sessions.list({ limit: 100 })).sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ status: 'closed', capMinor: '200', claimedMinor: '200', heldMinor: '0' });
    expect((await ws.client.wallets.ledger(a.walletId)).filter((e) => e.transactionId === sessions[0]!.id && e.type === 'hold').map((e) => e.holdMinor)).toEqual(['100', '100']);
    const b = await ws.client.wallets.balance(a.walletId);
    expect({ balance: b.balanceMinor, available: b.availableMinor }).toEqual({ balance: '4790', available: '4790' });
    const fees = fee(200n) + fee(10n);
    expect(await sellerBalance()).toBe(before.seller + 210n - fees);
    expect(await platformRevenue(t)).toBe(before.platform + fees);
    await expectLedgerConsistent(ws.client, a.walletId);
    expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
  });
});
