/**
 * Top-ups: an intent at the sandbox processor, credited only by its signed webhook,
 * once; declines credit nothing; forged and stale webhooks are refused. Every case checks
 * the ledger afterwards.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { expectLedger } from '../wallets/ledger-checks.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { MINUTE, deliver, expectConserved, railGateway, redeliver, refusedWith, signed, webhookSecret } from './helpers.js';

const t = await railGateway();
afterAll(() => t.close());

async function intent(amountMinor = '2500') {
  const { walletId } = await t.newAgentWallet(t.workspace, `topup-${Math.random().toString(36).slice(2, 7)}`);
  return { walletId, intent: await t.workspace.rail.topUp(walletId, { amountMinor }) };
}

describe('POST /v1/wallets/:id/topup', () => {
  it('returns a pending intent from the sandbox processor and credits nothing yet', async () => {
    const { walletId, intent: i } = await intent('2500');
    expect(i).toMatchObject({ status: 'pending', amountMinor: '2500', currency: 'USD', walletId, treasuryProviderId: 'sandbox-processor' });
    expect(i.externalRef).toMatch(/^sbx_/);
    expect(i.transactionId).toMatch(/^top_/);
    expect(i.hostedUrl).toContain(i.externalRef);
    expect(i.clientSecret).toBeTruthy();
    expect(i.declineReason).toBeUndefined();
    await expectLedger(t.workspace, walletId, []);
    const { transactions } = await t.workspace.rail.transactions({ walletId });
    expect(transactions).toEqual([expect.objectContaining({ id: i.transactionId, kind: 'topup', state: 'pending', railAmountMinor: '2500', creditedMinor: '0' })]);
  });

  it('declines at once above the processor limit, with declineReason, and credits nothing', async () => {
    const { walletId, intent: i } = await intent('10000001');
    expect(i).toMatchObject({ status: 'declined', declineReason: 'amount_over_limit' });
    expect(i.hostedUrl).toBeUndefined();
    await expectLedger(t.workspace, walletId, []);
  });
});

describe('the sandbox processor confirming a top-up', () => {
  it('credits the wallet once even when the webhook is delivered twice', async () => {
    const { walletId, intent: i } = await intent('2500');
    const first = await t.workspace.sandbox.confirmTopUp(i.transactionId);
    expect(first.transaction).toMatchObject({ state: 'confirmed', creditedMinor: '2500' });
    await expectLedger(t.workspace, walletId, ['2500']);

    // the processor delivers the same signed webhook again: refused as a duplicate, nothing credited
    const before = snapshotDb(t.dataDir);
    const again = await redeliver(t, first.webhook);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DUPLICATE_EXTERNAL_REF');
    expect(again.body.error.details).toMatchObject({ externalRef: i.externalRef, transactionId: i.transactionId });
    // and the sandbox control asked twice is the same duplicate
    await refusedWith(t.workspace.sandbox.confirmTopUp(i.transactionId), 409, 'DUPLICATE_EXTERNAL_REF');
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);

    const entries = await expectLedger(t.workspace, walletId, ['2500']);
    expect(entries[0]).toMatchObject({ type: 'topup', reference: `topup:${i.externalRef}` });
    expectConserved(t);
  });

  it('credits once when two deliveries of the confirmation race', async () => {
    const { walletId, intent: i } = await intent('700');
    const { webhook } = await t.workspace.sandbox.confirmTopUp(i.transactionId);
    const results = await Promise.all([redeliver(t, webhook), redeliver(t, webhook), redeliver(t, webhook)]);
    expect(results.map((r) => r.status)).toEqual([409, 409, 409]);
    await expectLedger(t.workspace, walletId, ['700']);
  });

  it('a webhook delivered by the processor itself (not the control) credits the wallet', async () => {
    const { walletId, intent: i } = await intent('300');
    // sign the processor's event with the data directory's secret, as the processor holds it
    const event = { id: 'sbx_evt_manual', type: 'topup.succeeded', created: Math.floor(t.clock.now() / 1000), data: { externalRef: i.externalRef, amountMinor: '300', currency: 'USD' } };
    const w = signed(webhookSecret(t), event, t.clock.now());
    const res = await deliver(t, w.body, w.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, transaction: { id: i.transactionId, state: 'confirmed' } });
    await expectLedger(t.workspace, walletId, ['300']);
  });
});

describe('a declined top-up', () => {
  it('credits nothing and carries declineReason', async () => {
    const { walletId, intent: i } = await intent('900');
    const res = await t.workspace.sandbox.declineTopUp(i.transactionId, 'insufficient_funds');
    expect(res.transaction).toMatchObject({ state: 'declined', reason: 'insufficient_funds', creditedMinor: '0' });
    // a later confirmation of the declined intent is refused, and credits nothing
    await refusedWith(t.workspace.sandbox.confirmTopUp(i.transactionId), 409, 'CONFLICT');
    await refusedWith(t.workspace.sandbox.declineTopUp(i.transactionId), 409, 'DUPLICATE_EXTERNAL_REF');
    await expectLedger(t.workspace, walletId, []);
    const [tx] = (await t.workspace.rail.transactions({ walletId })).transactions;
    expect(tx).toMatchObject({ state: 'declined', reason: 'insufficient_funds' });
  });
});

describe('POST /v1/rail/webhooks/sandbox-processor refuses', () => {
  const eventFor = (externalRef: string, amountMinor: string, atMs: number) => ({
    id: `sbx_evt_${Math.random().toString(36).slice(2)}`, type: 'topup.succeeded', created: Math.floor(atMs / 1000), data: { externalRef, amountMinor, currency: 'USD' },
  });

  async function expectRefused(walletId: string, res: { status: number; body: Record<string, any> }, problem: RegExp) {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.message).toMatch(/^sandbox-signature: /);
    expect(res.body.error.message).toMatch(problem);
    await expectLedger(t.workspace, walletId, []);
  }

  it('a forged webhook: signed with another secret, or its body changed after signing, or unsigned', async () => {
    const { walletId, intent: i } = await intent('5000');
    const before = snapshotDb(t.dataDir);
    const forged = signed('whsec_not_the_processor', eventFor(i.externalRef, '5000', t.clock.now()), t.clock.now());
    await expectRefused(walletId, await deliver(t, forged.body, forged.headers), /does not match/);

    const genuine = signed(webhookSecret(t), eventFor(i.externalRef, '50', t.clock.now()), t.clock.now());
    const tampered = genuine.body.replace('"50"', '"5000"');
    await expectRefused(walletId, await deliver(t, tampered, genuine.headers), /does not match/);

    await expectRefused(walletId, await deliver(t, genuine.body, {}), /is required/);
    await expectRefused(walletId, await deliver(t, genuine.body, { 'sandbox-signature': 'v1=abc' }), /malformed/);
    expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
  });

  it('a stale webhook: genuinely signed, but more than 5 minutes from the gateway clock', async () => {
    const { walletId, intent: i } = await intent('5000');
    const signedAt = t.clock.now();
    const old = signed(webhookSecret(t), eventFor(i.externalRef, '5000', signedAt), signedAt);
    t.clock.advance(5 * MINUTE + 1000);
    await expectRefused(walletId, await deliver(t, old.body, old.headers), /is stale/);
    // one signed in the future beyond the tolerance is as suspect
    const future = signed(webhookSecret(t), eventFor(i.externalRef, '5000', t.clock.now()), t.clock.now() + 6 * MINUTE);
    await expectRefused(walletId, await deliver(t, future.body, future.headers), /is stale/);
    // within the tolerance the same processor's webhook is accepted
    const fresh = signed(webhookSecret(t), eventFor(i.externalRef, '5000', t.clock.now()), t.clock.now() - 4 * MINUTE);
    expect((await deliver(t, fresh.body, fresh.headers)).status).toBe(200);
    await expectLedger(t.workspace, walletId, ['5000']);
  });

  it('a genuine webhook for an amount other than the intent', async () => {
    const { walletId, intent: i } = await intent('100');
    const w = signed(webhookSecret(t), eventFor(i.externalRef, '100000', t.clock.now()), t.clock.now());
    const res = await deliver(t, w.body, w.headers);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    await expectLedger(t.workspace, walletId, []);
  });

  it('a genuine webhook for an unknown intent', async () => {
    const w = signed(webhookSecret(t), eventFor('sbx_nosuchintent', '100', t.clock.now()), t.clock.now());
    const res = await deliver(t, w.body, w.headers);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe("another tenant's top-up", () => {
  it('cannot be confirmed through the sandbox control (404) and is not credited', async () => {
    const { walletId, intent: i } = await intent('400');
    const other = await t.newWorkspace();
    await refusedWith(other.client.sandbox.confirmTopUp(i.transactionId), 404, 'NOT_FOUND');
    await expectLedger(t.workspace, walletId, []);
  });
});
