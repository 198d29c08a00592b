import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import {
  authorizeCall, createCapability, encodeProof, expectLedgerConsistent, hashOf, ledgerBalance, ledgerRows, newBuyer, paidCall,
  refused, setPrice, signProof, transactionRow, verifiesWithPlatformKey, newSeller,
} from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const seller = (priceMinor?: string) => newSeller(t, priceMinor);

describe('POST /v1/x402/challenge', () => {
  it('signs a challenge for the caller\'s capability at its current price, verifiable with the platform key', async () => {
    const s = await seller('250');
    const before = Date.now();
    const c = await s.client.payments.challenge(s.capabilityId);
    expect(c).toMatchObject({ capabilityId: s.capabilityId, providerId: s.id, amountMinor: '250', currency: 'USD', payTo: s.walletId });
    expect(c.nonce).toMatch(/^[0-9a-z]{9}[A-Za-z0-9_-]{32}$/); // the time, then 24 random bytes (src/core/ids.ts)
    const after = Date.now();
    // issued between before and after, valid for five minutes (ms precision on the wire)
    expect(Date.parse(c.expiresAt)).toBeGreaterThanOrEqual(before + 5 * 60 * 1000 - 1);
    expect(Date.parse(c.expiresAt)).toBeLessThanOrEqual(after + 5 * 60 * 1000 + 1);
    expect(await verifiesWithPlatformKey(t, c)).toBe(true);
    const again = await s.client.payments.challenge(s.capabilityId);
    expect(again.nonce).not.toBe(c.nonce);
  });

  it('refuses an unknown capability (404), another provider\'s (403), a deprecated one (409) and an unverified seller (403)', async () => {
    const s = await seller();
    await refused(s.client.payments.challenge('cap_unknown'), 404, 'CAPABILITY_NOT_FOUND');
    const other = await seller();
    await refused(s.client.payments.challenge(other.capabilityId), 403, 'FORBIDDEN');
    const deprecated = await createCapability(t, s.id, { status: 'deprecated' });
    await refused(s.client.payments.challenge(deprecated), 409, 'CONFLICT');
    const unverified = await t.newProvider({ verified: false });
    const cap = await createCapability(t, unverified.id);
    await refused(unverified.client.payments.challenge(cap), 403, 'FORBIDDEN');
  });

  it('is refused to a workspace key, which lacks payments:write', async () => {
    const s = await seller();
    const e = await refused(t.workspace.payments.challenge(s.capabilityId), 403, 'FORBIDDEN');
    expect(String(e.message)).toContain('payments:write');
  });
});

describe('a paid call (challenge, proof, authorize, complete)', () => {
  it('moves 100 from the buyer: 97 to the seller, 3 to the platform, with a receipt that verifies', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const platformBefore = ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance;

    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    expect(auth).toMatchObject({ status: 'authorized', walletId: buyer.walletId, capabilityId: s.capabilityId, amountMinor: '100', currency: 'USD' });
    expect(auth.transactionId).toMatch(/^txn_/);
    expect(await t.workspace.wallets.balance(buyer.walletId)).toEqual({ balanceMinor: '1000', availableMinor: '900', currency: 'USD' });

    const body = '{"answer":42}';
    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf(body) });
    expect(receipt).toMatchObject({
      transactionId: auth.transactionId, providerId: s.id, consumerId: buyer.walletId, capabilityId: s.capabilityId,
      amount: { amountMinor: '100', currency: 'USD' }, responseHash: hashOf(body), status: 'success',
    });
    expect(receipt.id).toMatch(/^rcp_/);
    expect(await verifiesWithPlatformKey(t, receipt)).toBe(true);
    expect(await verifiesWithPlatformKey(t, { ...receipt, amount: { amountMinor: '1', currency: 'USD' } })).toBe(false);

    expect(await t.workspace.wallets.balance(buyer.walletId)).toEqual({ balanceMinor: '900', availableMinor: '900', currency: 'USD' });
    expect(await s.client.wallets.balance(s.walletId)).toEqual({ balanceMinor: '97', availableMinor: '97', currency: 'USD' });
    expect((await t.operator.wallets.balance(PLATFORM_REVENUE_WALLET_ID)).balanceMinor).toBe(String(platformBefore + 3n));
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 900n, held: 0n });
    expect(ledgerBalance(t, s.walletId)).toEqual({ balance: 97n, held: 0n });
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((e) => [e.type, e.amount_minor, e.hold_minor])).toEqual([
      ['hold', 0n, 100n], ['capture', -100n, -100n], ['sale', 97n, 0n], ['fee', 3n, 0n],
    ]);
    expect(transactionRow(t, auth.transactionId)).toMatchObject({ status: 'succeeded', fee_minor: 3n });
    expectLedgerConsistent(t);
  });

  it('accepts the proof as the x-payment header value', async () => {
    const s = await seller('10');
    const buyer = await newBuyer(t, t.workspace, '10');
    const challenge = await s.client.payments.challenge(s.capabilityId);
    const auth = await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: encodeProof(signProof(challenge, buyer)) });
    expect(auth.amountMinor).toBe('10');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 10n, held: 10n });
    expectLedgerConsistent(t);
  });

  it('returns the same receipt when the same complete is repeated, and 409 for another hash', async () => {
    const s = await seller('50');
    const buyer = await newBuyer(t, t.workspace, '100');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    const first = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('a') });
    const second = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('a') });
    expect(second).toEqual(first);
    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('b') }), 409, 'CONFLICT');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 50n, held: 0n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(49n);
    expect(await t.workspace.receipts.forTransaction(auth.transactionId)).toHaveLength(1);
    expectLedgerConsistent(t);
  });

  it('charges the quoted price when the capability is repriced between challenge and proof', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const challenge = await s.client.payments.challenge(s.capabilityId);
    await setPrice(t, s.capabilityId, '500');
    const auth = await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: signProof(challenge, buyer) });
    expect(auth.amountMinor).toBe('100');
    const { receipt } = await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') });
    expect(receipt.amount.amountMinor).toBe('100');
    expect(ledgerBalance(t, buyer.walletId).balance).toBe(900n);
    expect((await s.client.payments.challenge(s.capabilityId)).amountMinor).toBe('500');
    expectLedgerConsistent(t);
  });

  it('does not let another seller complete or fail the transaction (404)', async () => {
    const s = await seller('5');
    const other = await seller('5');
    const buyer = await newBuyer(t, t.workspace, '5');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    await refused(other.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') }), 404, 'NOT_FOUND');
    await refused(other.client.payments.fail({ transactionId: auth.transactionId, reason: 'client_error' }), 404, 'NOT_FOUND');
    expect(transactionRow(t, auth.transactionId).status).toBe('authorized');
    expectLedgerConsistent(t);
  });
});

describe('POST /v1/x402/fail', () => {
  it('refunds a client_error with a new refund entry and a failed receipt, without counting toward the breaker', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '300');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    const { receipt } = await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'client_error', responseHash: hashOf('bad request'), statusCode: 400 });
    expect(receipt).toMatchObject({ status: 'failed', transactionId: auth.transactionId, responseHash: hashOf('bad request'), amount: { amountMinor: '100', currency: 'USD' } });
    expect(await verifiesWithPlatformKey(t, receipt)).toBe(true);
    expect(ledgerRows(t, { transactionId: auth.transactionId }).map((e) => [e.type, e.amount_minor, e.hold_minor])).toEqual([
      ['hold', 0n, 100n], ['refund', 0n, -100n],
    ]);
    expect(await t.workspace.wallets.balance(buyer.walletId)).toEqual({ balanceMinor: '300', availableMinor: '300', currency: 'USD' });
    expect(ledgerBalance(t, s.walletId).balance).toBe(0n);
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toEqual({ walletId: buyer.walletId, providerId: s.id, paused: false, consecutiveFailures: 0 });
    expect(transactionRow(t, auth.transactionId)).toMatchObject({ status: 'failed', failure_reason: 'client_error' });
    // a retried report answers the same; the other resolutions are refused
    expect((await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'client_error' })).receipt).toEqual(receipt);
    await refused(s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' }), 409, 'CONFLICT');
    await refused(s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('x') }), 409, 'CONFLICT');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 300n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('pauses the seller for the wallet after three provider_errors in a row, until the owner resumes it', async () => {
    const s = await seller('10');
    const buyer = await newBuyer(t, t.workspace, '100');
    const otherBuyer = await newBuyer(t, t.workspace, '100');
    for (let i = 1; i <= 3; i++) {
      const auth = await authorizeCall(s.client, s.capabilityId, buyer);
      await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error', statusCode: 503 });
      expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toMatchObject({ consecutiveFailures: i, paused: i >= 3 });
    }
    const before = snapshotDb(t.dataDir);
    await refused(authorizeCall(s.client, s.capabilityId, buyer), 429, 'WALLET_PROVIDER_PAUSED');
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    // only this wallet and this seller are paused
    await authorizeCall(s.client, s.capabilityId, otherBuyer);
    const elsewhere = await seller('10');
    await authorizeCall(elsewhere.client, elsewhere.capabilityId, buyer);

    expect(await t.workspace.wallets.resumeProvider(buyer.walletId, s.id)).toEqual({ ok: true, paused: false });
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toEqual({ walletId: buyer.walletId, providerId: s.id, paused: false, consecutiveFailures: 0 });
    const receipt = await paidCall(s.client, s.capabilityId, buyer);
    expect(receipt.status).toBe('success');
    // the buyer paid only for the successful call; each failure was refunded
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 90n, held: 10n });
    expectLedgerConsistent(t);
  });

  it('resets the failure count on a success', async () => {
    const s = await seller('10');
    const buyer = await newBuyer(t, t.workspace, '100');
    for (let i = 0; i < 2; i++) {
      const auth = await authorizeCall(s.client, s.capabilityId, buyer);
      await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' });
    }
    expect((await t.workspace.wallets.breaker(buyer.walletId, s.id)).consecutiveFailures).toBe(2);
    await paidCall(s.client, s.capabilityId, buyer);
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toMatchObject({ consecutiveFailures: 0, paused: false });
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);
    await s.client.payments.fail({ transactionId: auth.transactionId, reason: 'provider_error' });
    expect(await t.workspace.wallets.breaker(buyer.walletId, s.id)).toMatchObject({ consecutiveFailures: 1, paused: false });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 90n, held: 0n });
    expectLedgerConsistent(t);
  });
});

describe('POST /v1/x402/authorize refusals (no refusal moves money)', () => {
  async function setup(price = '100', fund = '1000') {
    const s = await seller(price);
    const buyer = await newBuyer(t, t.workspace, fund);
    const challenge = await s.client.payments.challenge(s.capabilityId);
    return { s, buyer, challenge, proof: signProof(challenge, buyer) };
  }

  /** Runs a refused call and proves that the database did not change at all. */
  async function refusedUnchanged(p: () => Promise<unknown>, status: number, code: string) {
    const before = snapshotDb(t.dataDir);
    const e = await refused(p(), status, code);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    return e;
  }

  it('refuses a proof for capability A used on capability B (403)', async () => {
    const { s, proof } = await setup();
    const b = await createCapability(t, s.id, { priceMinor: '1' });
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: b, payment: proof }), 403, 'FORBIDDEN');
  });

  it('refuses a proof presented by another seller (403)', async () => {
    const { s, proof } = await setup();
    const other = await seller();
    await refusedUnchanged(() => other.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 403, 'FORBIDDEN');
  });

  it('refuses a proof signed by a key other than the wallet\'s (403)', async () => {
    const { s, buyer, challenge } = await setup();
    const stranger = await newBuyer(t, t.workspace);
    const forged = signProof(challenge, { walletId: buyer.walletId, privateKeyPem: stranger.privateKeyPem });
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: forged }), 403, 'FORBIDDEN');
  });

  it('refuses a challenge whose amount was altered (400 naming payment.challenge.signature)', async () => {
    const { s, buyer, challenge } = await setup();
    const tampered = signProof({ ...challenge, amountMinor: '1' }, buyer);
    const e = await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: tampered }), 400, 'VALIDATION_FAILED');
    expect(e.details).toMatchObject({ field: 'payment.challenge.signature' });
  });

  it('refuses malformed proofs with 400 naming the field', async () => {
    const { s, proof } = await setup();
    const cases: [unknown, string][] = [
      [{ ...proof, version: 2 }, 'payment.version'],
      [{ ...proof, challenge: { ...proof.challenge, amountMinor: 100 } }, 'payment.challenge.amountMinor'],
      [{ ...proof, walletId: undefined }, 'payment.walletId'],
      [{ ...proof, signature: 'nope' }, 'payment.signature'],
      ['%%%not-base64url%%%', 'payment'],
      [Buffer.from('[1,2]').toString('base64url'), 'payment'],
    ];
    for (const [payment, field] of cases) {
      const e = await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: payment as never }), 400, 'VALIDATION_FAILED');
      expect(e.details, JSON.stringify(payment).slice(0, 80)).toMatchObject({ field });
    }
  });

  it('refuses a proof naming an unknown wallet (404 WALLET_NOT_FOUND)', async () => {
    const { s, buyer, challenge } = await setup();
    const proof = signProof(challenge, { ...buyer, walletId: 'wal_missing' });
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 404, 'WALLET_NOT_FOUND');
  });

  it('refuses a frozen wallet (403 WALLET_FROZEN) and pays once it is unfrozen', async () => {
    const { s, buyer, proof } = await setup();
    await t.workspace.wallets.freeze(buyer.walletId);
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 403, 'WALLET_FROZEN');
    await t.workspace.wallets.unfreeze(buyer.walletId);
    // the refusal did not use the nonce up
    await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });
    expectLedgerConsistent(t);
  });

  it('refuses a quote of a seller suspended after it was issued (403), and pays on it again once unsuspended', async () => {
    const { s, buyer, proof } = await setup();
    await t.operator.providers.suspend(s.id);
    const e = await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 403, 'FORBIDDEN');
    expect(e.details).toMatchObject({ providerId: s.id, status: 'suspended' });
    await t.operator.providers.unsuspend(s.id);
    await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });
    expectLedgerConsistent(t);
  });

  it('refuses a price above the available balance (402 INSUFFICIENT_FUNDS)', async () => {
    const { s, buyer, proof } = await setup('100', '99');
    const e = await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 402, 'INSUFFICIENT_FUNDS');
    expect(e.details).toMatchObject({ availableMinor: '99', amountMinor: '100' });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 99n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('refuses a replayed proof (409 REPLAY_DETECTED) and charges once', async () => {
    const { s, buyer, proof } = await setup();
    await s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof });
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: proof }), 409, 'REPLAY_DETECTED');
    await refusedUnchanged(() => s.client.payments.authorize({ capabilityId: s.capabilityId, payment: encodeProof(proof) }), 409, 'REPLAY_DETECTED');
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 100n });
    expectLedgerConsistent(t);
  });

  it('refuses amounts sent as JSON numbers and unknown fail reasons at the schema', async () => {
    const s = await seller();
    await refused(s.client.payments.fail({ transactionId: 'txn_x', reason: 'timeout' as never }), 400, 'VALIDATION_FAILED');
    await refused(s.client.payments.complete({ transactionId: 'txn_x', responseHash: 'md5:abc' }), 400, 'VALIDATION_FAILED');
  });
});
