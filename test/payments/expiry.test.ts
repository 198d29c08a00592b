import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, ManualClock, type TestGateway } from '../helpers/gateway.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import {
  authorizeCall, expectLedgerConsistent, hashOf, ledgerBalance, ledgerRows, newBuyer, refused, signProof,
  transactionRow, verifiesWithPlatformKey, newSeller,
} from './helpers.js';

const MINUTE = 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0));
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t.close();
});

const seller = (priceMinor?: string) => newSeller(t, priceMinor);

describe('challenge expiry', () => {
  it('refuses a proof after the challenge expired (410 CHALLENGE_EXPIRED) and moves nothing', async () => {
    const s = await seller();
    const buyer = await newBuyer(t, t.workspace, '1000');
    const challenge = await s.client.payments.challenge(s.capabilityId);
    expect(challenge.expiresAt).toBe(new Date(clock.now() + 5 * MINUTE).toISOString());
    const proof = signProof(challenge, buyer);
    clock.advance(5 * MINUTE);
    const before = snapshotDb(t.dataDir);
    await refused(s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 410, 'CHALLENGE_EXPIRED');
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
  });

  it('accepts a proof just before the challenge expires', async () => {
    const s = await seller();
    const buyer = await newBuyer(t, t.workspace, '1000');
    const proof = signProof(await s.client.payments.challenge(s.capabilityId), buyer);
    clock.advance(5 * MINUTE - 1);
    const auth = await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof });
    expect(auth.expiresAt).toBe(new Date(clock.now() + 15 * MINUTE).toISOString());
  });
});

describe('the expiry sweeper', () => {
  it('refunds an authorized transaction after 15 minutes with a failed receipt; a late complete is 409', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    const { sweeper } = t.gw.services;

    clock.advance(15 * MINUTE - 1);
    await sweeper.sweepOnce();
    expect(transactionRow(t, auth.transactionId).status).toBe('authorized');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });

    clock.advance(1);
    await sweeper.sweepOnce();
    expect(transactionRow(t, auth.transactionId)).toMatchObject({ status: 'expired', failure_reason: 'expired' });
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((e) => [e.type, e.amount_minor, e.hold_minor])).toEqual([
      ['hold', 0n, 100n], ['refund', 0n, -100n],
    ]);
    const receipts = await t.workspace.receipts.forTransaction(auth.transactionId);
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({ status: 'failed', responseHash: null, amount: { amountMinor: '100', currency: 'USD' } });
    expect(await verifiesWithPlatformKey(t, receipts[0]!)).toBe(true);
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toMatchObject({ consecutiveFailures: 0, paused: false });

    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('late') }), 409, 'CONFLICT');
    await refused(s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' }), 409, 'CONFLICT');
    expect(await sweeper.sweepOnce()).toBe(0);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(0n);
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toMatchObject({ consecutiveFailures: 0 });
    expectLedgerConsistent(t);
  });

  it('expires an overdue transaction on a late complete even before the sweeper ran (409, buyer refunded once)', async () => {
    const s = await seller('40');
    const buyer = await newBuyer(t, t.workspace, '100');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    clock.advance(15 * MINUTE);
    const e = await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('late') }), 409, 'CONFLICT');
    expect(e.details).toMatchObject({ status: 'expired' });
    expect(transactionRow(t, auth.transactionId).status).toBe('expired');
    expect(await t.gw.services.sweeper.sweepOnce()).toBe(0);
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((x) => x.type)).toEqual(['hold', 'refund']);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('refunds a wallet\'s overdue holds when a purchase would otherwise be short, before the sweeper ran', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '150');
    const first = await authorizeCall(s.client, s.capabilityId, buyer);
    // not overdue yet: still held, so the second call is short, and nothing is expired
    clock.advance(15 * MINUTE - 1);
    await refused(authorizeCall(s.client, s.capabilityId, buyer), 402, 'INSUFFICIENT_FUNDS');
    expect(transactionRow(t, first.transactionId).status).toBe('authorized');
    clock.advance(1);
    const second = await authorizeCall(s.client, s.capabilityId, buyer);
    expect(transactionRow(t, first.transactionId).status).toBe('expired');
    expect(ledgerRows(t, { transactionId: first.transactionId }).map((x) => x.type)).toEqual(['hold', 'refund']);
    expect((await t.workspace.receipts.forTransaction(first.transactionId))[0]).toMatchObject({ status: 'failed' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 150n, held: 100n });
    expect(await t.gw.services.sweeper.sweepOnce()).toBe(0);
    await s.client.payments.complete({ transactionId: second.transactionId, responseHash: hashOf('ok') });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 50n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('leaves completed and failed transactions alone', async () => {
    const s = await seller('10');
    const buyer = await newBuyer(t, t.workspace, '100');
    const a = await authorizeCall(s.client, s.capabilityId, buyer);
    const b = await authorizeCall(s.client, s.capabilityId, buyer);
    await s.client.payments.complete({ transactionId: a.transactionId, responseHash: hashOf('ok') });
    await s.client.payments.fail({ transactionId: b.transactionId, reason: 'client_error' });
    clock.advance(60 * MINUTE);
    await t.gw.services.sweeper.sweepOnce();
    expect(transactionRow(t, a.transactionId).status).toBe('succeeded');
    expect(transactionRow(t, b.transactionId).status).toBe('failed');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 90n, held: 0n });
    expectLedgerConsistent(t);
  });
});
