/**
 * The session events (docs/api/webhooks.md § Session events) over a real HTTPS gateway, on the
 * backend of the run: `session.opened`, `session.claimed`, `session.closed` and `session.expired`
 * are delivered, signed, to the seller's endpoint and to the buyer's workspace's, once each, with
 * the data the contract describes, recorded in the transaction that changes the session; a refused
 * claim says nothing. The ledger is checked after every movement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { EVENT_DATA_SCHEMAS } from '../../packages/sdk/src/contract/webhooks.js';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import type { SessionOpen, Voucher } from '../../packages/sdk/src/contract/sessions.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { CLAIM_WINDOW_MS } from '../../src/domain/payments/sessions/view.js';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { hashOf, ledgerBalance, newBuyer, newSeller, refused, type Buyer } from '../payments/helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

const HOUR = 60 * 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 11, 7, 10, 0, 0));
let t: TestGateway;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await startTestGateway({ clock, config: { webhooks: { deliveryIntervalMs: 0 } } });
});
afterAll(async () => {
  for (const rx of receivers) await rx.close();
  await t?.close();
});

const ajv = new Ajv.default({ strict: false });
const contractAccepts = (type: string, data: unknown): boolean => ajv.validate(EVENT_DATA_SCHEMAS[type as keyof typeof EVENT_DATA_SCHEMAS] as TSchema, data) as boolean;

interface Event { id: string; type: string; data: Record<string, any> }

/** An endpoint of the client's tenant on a receiver of its own; `delivered()` runs the deliverer and answers what arrived since the last call, signatures checked. */
async function hooked(client: AgentpayClient) {
  const rx = await startReceiver('/sessions');
  receivers.push(rx);
  const { secret } = await client.webhooks.create({ url: rx.url });
  let mark = 0;
  return async (): Promise<Event[]> => {
    for (let seen = -1; seen !== rx.received.length;) {
      seen = rx.received.length;
      await t.gw.services.webhookDeliverer.runOnce();
    }
    const got = await Promise.all(rx.received.slice(mark).map((x) => verifyWebhookSignature(x.rawBody, String(x.headers['agentpay-signature']), secret, { now: clock.now() })));
    mark = rx.received.length;
    return got as unknown as Event[];
  };
}

async function expectLedgerVerifies(): Promise<void> {
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}

type Seller = Awaited<ReturnType<typeof newSeller>>;
const sellerKey = generateEd25519();

async function open(s: Seller, buyer: Buyer, capMinor: string) {
  const sessionKey = generateEd25519();
  const unsigned = {
    version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: s.id, capabilityId: s.capabilityId, capMinor, currency: 'USD',
    expiresAt: new Date(clock.now() + HOUR).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `events-${Math.random().toString(36).slice(2)}-${Date.now()}`,
    signedAt: new Date(clock.now()).toISOString(),
  };
  const { session } = await s.client.sessions.open({ open: { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) } as SessionOpen, sellerPublicKey: sellerKey.publicKeyPem });
  return { session, sessionKey: sessionKey.privateKeyPem };
}

function voucher(privateKeyPem: string, sessionId: string, cumulativeMinor: string, sequence: number): Voucher {
  const unsigned = { sessionId, cumulativeMinor, sequence, requestHash: hashOf(`GET /events?${sequence}`) };
  return { ...unsigned, signature: signObject(privateKeyPem, unsigned) };
}

/** the same events, with the same data, reached the seller and the buyer's workspace */
function both(seller: Event[], buyer: Event[]): Event[] {
  expect(buyer.map((e) => [e.type, e.data])).toEqual(seller.map((e) => [e.type, e.data]));
  for (const e of seller) expect(contractAccepts(e.type, e.data), `${e.type}: ${JSON.stringify(e.data)}`).toBe(true);
  return seller;
}

describe('session events', () => {
  it('opened, claimed and closed reach the seller and the buyer with the money each moved; a refused claim says nothing', async () => {
    const s = await newSeller(t, '10');
    const ws = await t.newWorkspace('Session Events Buyer');
    const toSeller = await hooked(s.client);
    const toBuyer = await hooked(ws.client);
    const buyer = await newBuyer(t, ws.client, '1000');
    const platformBefore = ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance;

    const { session, sessionKey } = await open(s, buyer, '500');
    const [opened, ...more] = both(await toSeller(), await toBuyer());
    expect(more).toEqual([]);
    expect(opened).toMatchObject({ type: 'session.opened' });
    expect(opened!.data).toEqual({
      sessionId: session.id, walletId: buyer.walletId, workspaceId: ws.id, providerId: s.id, capabilityId: s.capabilityId, currency: 'USD',
      capMinor: '500', claimedMinor: '0', session,
    });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 500n });

    const [claim] = await s.client.sessions.claim([{ sessionId: session.id, voucher: voucher(sessionKey, session.id, '150', 3) }]);
    expect(claim!.status).toBe(200);
    const [claimed, ...more2] = both(await toSeller(), await toBuyer());
    expect(more2).toEqual([]);
    expect(claimed).toMatchObject({ type: 'session.claimed' });
    // 3% of 150 rounded down
    expect(claimed!.data).toMatchObject({ sessionId: session.id, claimedMinor: '150', cumulativeMinor: '150', sequence: 3, amountMinor: '150', feeMinor: '4', saleMinor: '146' });
    expect(claimed!.data.session).toMatchObject({ claimedMinor: '150', heldMinor: '350', status: 'open' });

    // a replayed claim (unchanged) and a stale one (refused) move nothing and say nothing
    const [replay, stale] = await s.client.sessions.claim([
      { sessionId: session.id, voucher: voucher(sessionKey, session.id, '150', 3) },
      { sessionId: session.id, voucher: voucher(sessionKey, session.id, '100', 2) },
    ]);
    expect(replay!.body).toMatchObject({ status: 'unchanged' });
    expect(stale!.status).toBe(409);
    expect(await toSeller()).toEqual([]);
    expect(await toBuyer()).toEqual([]);

    await s.client.sessions.close(session.id);
    const [closed, ...more3] = both(await toSeller(), await toBuyer());
    expect(more3).toEqual([]);
    expect(closed).toMatchObject({ type: 'session.closed' });
    expect(closed!.data).toMatchObject({ sessionId: session.id, capMinor: '500', claimedMinor: '150', releasedMinor: '350' });
    expect(closed!.data.session).toMatchObject({ status: 'closed', heldMinor: '0' });
    // closing again changes nothing and says nothing
    await s.client.sessions.close(session.id);
    expect(await toSeller()).toEqual([]);

    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 850n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(146n);
    expect(ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance - platformBefore).toBe(4n);
    await expectLedgerVerifies();
  });

  it('expired when the claim window ends (the sweeper), and after the buyer ends a session early, with the seller still paid in the window', async () => {
    const s = await newSeller(t, '10');
    const ws = await t.newWorkspace('Session Expiry Buyer');
    const toSeller = await hooked(s.client);
    const toBuyer = await hooked(ws.client);
    const buyer = await newBuyer(t, ws.client, '1000');

    // a session left to expire: claims in the window, then the sweeper releases the rest
    const a = await open(s, buyer, '200');
    const b = await open(s, buyer, '300');
    expect((await toSeller()).map((e) => e.type)).toEqual(['session.opened', 'session.opened']);
    await toBuyer();
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 500n });

    // the buyer ends b early: nothing released at once, expiresAt is now, the claim window an hour from now
    clock.advance(10 * 60 * 1000);
    const ended = await ws.client.sessions.end(b.session.id);
    expect(ended).toMatchObject({ status: 'open', heldMinor: '300', expiresAt: new Date(clock.now()).toISOString(), claimWindowEndsAt: new Date(clock.now() + CLAIM_WINDOW_MS).toISOString() });
    expect(await toSeller()).toEqual([]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 500n });
    // ending it again changes nothing; the seller's key cannot end it, another workspace does not see it
    expect(await ws.client.sessions.end(b.session.id)).toEqual(ended);
    await refused(s.client.sessions.end(b.session.id), 403, 'FORBIDDEN');
    await refused((await t.newWorkspace('Stranger')).client.sessions.end(b.session.id), 404, 'SESSION_NOT_FOUND');

    // the seller claims a call it served before the end: still paid
    await s.client.sessions.claim([{ sessionId: b.session.id, voucher: voucher(b.sessionKey, b.session.id, '40', 1) }]);
    const [claimedB] = both(await toSeller(), await toBuyer());
    expect(claimedB!.data).toMatchObject({ sessionId: b.session.id, amountMinor: '40', feeMinor: '1', saleMinor: '39' });

    // an hour past a's expiry its window ends (a: 60 + 60 minutes after the open; b: 10 + 60)
    clock.advance(CLAIM_WINDOW_MS);
    await t.gw.services.sweeper.sweepOnce();
    const [expiredB, ...more] = both(await toSeller(), await toBuyer());
    expect(more).toEqual([]);
    expect(expiredB).toMatchObject({ type: 'session.expired' });
    expect(expiredB!.data).toMatchObject({ sessionId: b.session.id, claimedMinor: '40', releasedMinor: '260' });
    expect(expiredB!.data.session).toMatchObject({ status: 'expired', heldMinor: '0' });
    // a claim after the window: refused, nothing moves
    const [late] = await s.client.sessions.claim([{ sessionId: b.session.id, voucher: voucher(b.sessionKey, b.session.id, '80', 2) }]);
    expect(late!.status).toBe(409);

    clock.advance(HOUR);
    await t.gw.services.sweeper.sweepOnce();
    const [expiredA] = both(await toSeller(), await toBuyer());
    expect(expiredA).toMatchObject({ type: 'session.expired' });
    expect(expiredA!.data).toMatchObject({ sessionId: a.session.id, claimedMinor: '0', releasedMinor: '200' });

    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 960n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(39n);
    await expectLedgerVerifies();
  });

  it('the sandbox expires a seller\'s open session now, as the sweeper would: session.expired, the rest released', async () => {
    const s = await newSeller(t, '10');
    const toBuyer = await hooked(t.workspace);
    const buyer = await newBuyer(t, t.workspace, '100');
    const { session } = await open(s, buyer, '100');
    await toBuyer();
    const expired = await s.client.sandbox.expireSession(session.id);
    expect(expired).toMatchObject({ status: 'expired', heldMinor: '0' });
    const [e] = await toBuyer();
    expect(e).toMatchObject({ type: 'session.expired', data: { sessionId: session.id, releasedMinor: '100' } });
    // again: as it is, nothing more
    expect(await s.client.sandbox.expireSession(session.id)).toEqual(expired);
    expect(await toBuyer()).toEqual([]);
    // another seller's: not found
    await refused((await newSeller(t, '10')).client.sandbox.expireSession(session.id), 404, 'SESSION_NOT_FOUND');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 0n });
    await expectLedgerVerifies();
  });
});
