/**
 * POST /v1/x402/batch: several protocol operations in one request, each answered with the
 * status and body its own route gives, each its own database transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_REVENUE_WALLET_ID } from '../../src/domain/tenancy/tenants.js';
import type { Challenge } from '../../packages/sdk/src/client/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  authorizeCall, expectLedgerConsistent, hashOf, ledgerBalance, ledgerRows, newBuyer, refused, signProof,
  transactionRow, verifiesWithPlatformKey, newSeller,
} from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const seller = (priceMinor?: string) => newSeller(t, priceMinor);

describe('POST /v1/x402/batch', () => {
  it('runs challenge, authorize, complete and fail together and moves money as the single routes do', async () => {
    const s = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '1000');
    const toComplete = await authorizeCall(s.client, s.capabilityId, buyer);
    const toFail = await authorizeCall(s.client, s.capabilityId, buyer);
    const quote = await s.client.payments.challenge(s.capabilityId);
    const platformBefore = ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance;

    const results = await s.client.payments.batch([
      { op: 'challenge', capabilityId: s.capabilityId },
      { op: 'authorize', capabilityId: s.capabilityId, payment: signProof(quote, buyer) },
      { op: 'complete', transactionId: toComplete.transactionId, responseHash: hashOf('{"ok":true}') },
      { op: 'fail', transactionId: toFail.transactionId, reason: 'client_error', statusCode: 404 },
    ]);

    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const challenge = (results[0]!.body as { challenge: Challenge }).challenge;
    expect(challenge).toMatchObject({ capabilityId: s.capabilityId, providerId: s.id, amountMinor: '100', payTo: s.walletId });
    expect(await verifiesWithPlatformKey(t, challenge)).toBe(true);
    const authorized = results[1]!.body as { transactionId: string; status: string; amountMinor: string };
    expect(authorized).toMatchObject({ status: 'authorized', amountMinor: '100', walletId: buyer.walletId });
    const { receipt: success } = results[2]!.body as { receipt: Parameters<typeof verifiesWithPlatformKey>[1] & { status: string } };
    expect(success).toMatchObject({ status: 'success', transactionId: toComplete.transactionId, responseHash: hashOf('{"ok":true}') });
    expect(await verifiesWithPlatformKey(t, success)).toBe(true);
    expect((results[3]!.body as { receipt: { status: string } }).receipt).toMatchObject({ status: 'failed', transactionId: toFail.transactionId });

    // 1000 funded: 100 paid, 100 refunded, 100 held by the batch's own authorization
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 900n, held: 100n });
    expect(ledgerBalance(t, s.walletId).balance).toBe(97n);
    expect(ledgerBalance(t, PLATFORM_REVENUE_WALLET_ID).balance - platformBefore).toBe(3n);
    expect(transactionRow(t, toFail.transactionId).status).toBe('failed');
    expect(transactionRow(t, authorized.transactionId).status).toBe('authorized');
    expectLedgerConsistent(t);
  });

  it('answers each operation on its own: a refusal or a malformed operation does not stop the others', async () => {
    const s = await seller('100');
    const other = await seller('100');
    const buyer = await newBuyer(t, t.workspace, '100');
    const auth = await authorizeCall(s.client, s.capabilityId, buyer);

    const results = await s.client.payments.batch([
      { op: 'complete', transactionId: auth.transactionId, responseHash: 'md5:nope' },
      { op: 'challenge', capabilityId: other.capabilityId },
      { op: 'challenge', capabilityId: 'cap_unknown' },
      { op: 'complete', transactionId: 'txn_unknown', responseHash: hashOf('x') },
      { op: 'challenge', capabilityId: s.capabilityId, extra: 1 } as never,
      { op: 'complete', transactionId: auth.transactionId, responseHash: hashOf('body') },
    ]);

    expect(results.map((r) => r.status)).toEqual([400, 403, 404, 404, 400, 200]);
    expect(results[0]!.body).toMatchObject({ error: { code: 'VALIDATION_FAILED', details: { field: 'responseHash' } } });
    expect(results[1]!.body).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(results[2]!.body).toMatchObject({ error: { code: 'CAPABILITY_NOT_FOUND' } });
    expect(results[3]!.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect(results[4]!.body).toMatchObject({ error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^extra: is not a field of this request/), details: expect.objectContaining({ field: 'extra' }) } });
    expect(results[5]!.body).toMatchObject({ receipt: { status: 'success' } });
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 0n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('charges one proof once when a batch carries it twice, and refuses what the wallet cannot afford', async () => {
    const s = await seller('60');
    // a batch's operations run at once (docs/api/payments.md), in no set order: on PostgreSQL the
    // third proof can win the wallet, then both copies of the first are refused for funds
    const codes = (results: Array<{ status: number; body: unknown }>) => results.map((r) => (r.status === 200 ? 'ok' : (r.body as { error: { code: string } }).error.code));

    // one proof twice, money for both: one charge, the copy refused as a replay
    const rich = await newBuyer(t, t.workspace, '200');
    const [quote] = await Promise.all([s.client.payments.challenge(s.capabilityId)]);
    const twice = signProof(quote!, rich);
    const dup = codes(await s.client.payments.batch([
      { op: 'authorize', capabilityId: s.capabilityId, payment: twice },
      { op: 'authorize', capabilityId: s.capabilityId, payment: twice },
    ]));
    expect(dup.sort()).toEqual(['REPLAY_DETECTED', 'ok']);
    expect(ledgerRows(t, { walletId: rich.walletId }).filter((e) => e.type === 'hold')).toHaveLength(1);
    expect(ledgerBalance(t, rich.walletId)).toEqual({ balance: 200n, held: 60n });

    // and beside a proof the wallet can no longer afford after the first charge
    const buyer = await newBuyer(t, t.workspace, '100');
    const quotes = await Promise.all([0, 1].map(() => s.client.payments.challenge(s.capabilityId)));
    const proof = signProof(quotes[0]!, buyer);
    const mixed = codes(await s.client.payments.batch([
      { op: 'authorize', capabilityId: s.capabilityId, payment: proof },
      { op: 'authorize', capabilityId: s.capabilityId, payment: proof },
      { op: 'authorize', capabilityId: s.capabilityId, payment: signProof(quotes[1]!, buyer) },
    ]));
    expect(mixed.filter((c) => c === 'ok')).toHaveLength(1);
    expect(mixed.filter((c) => c !== 'ok').every((c) => c === 'REPLAY_DETECTED' || c === 'INSUFFICIENT_FUNDS')).toBe(true);
    expect(mixed).toContain('INSUFFICIENT_FUNDS');
    expect(ledgerRows(t, { walletId: buyer.walletId }).filter((e) => e.type === 'hold')).toHaveLength(1);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 100n, held: 60n });
    expectLedgerConsistent(t);
  });

  it('refuses the whole batch when it is empty, too long, has an unknown op, or comes with a workspace key', async () => {
    const s = await seller();
    const op = { op: 'challenge' as const, capabilityId: s.capabilityId };
    const empty = await refused(s.client.payments.batch([]), 400, 'VALIDATION_FAILED');
    expect(empty.message).toContain('operations');
    await refused(s.client.payments.batch(Array.from({ length: 101 }, () => op)), 400, 'VALIDATION_FAILED');
    await refused(s.client.payments.batch([{ op: 'refund', transactionId: 'txn_x' } as never]), 400, 'VALIDATION_FAILED');
    await refused(t.workspace.payments.batch([op]), 403, 'FORBIDDEN');
    const full = await s.client.payments.batch(Array.from({ length: 100 }, () => op));
    expect(full.every((r) => r.status === 200)).toBe(true);
    expect(new Set(full.map((r) => (r.body as { challenge: Challenge }).challenge.nonce)).size).toBe(100);
  });
});
