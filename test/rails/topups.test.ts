/**
 * Top-ups: an intent at the processor, credited only by its signed webhook, once; declines
 * credit nothing; forged and stale webhooks are refused. Every case checks the ledger
 * afterwards. Each scenario runs on both rail drivers (./drivers.ts): a sandbox gateway with
 * the sandbox processor, and a production gateway with Stripe (the local fake Stripe,
 * webhooks signed by the stripe SDK's test-header helper).
 */
import { describe, expect, it } from 'vitest';
import { expectLedger } from '../wallets/ledger-checks.js';
import { changedTables, snapshotDb } from '../helpers/matrix.js';
import { MINUTE, expectConserved, refusedWith } from './helpers.js';
import { DRIVERS, useDriver, type Delivery, type RailDriver } from './drivers.js';

async function intent(d: RailDriver, amountMinor = '2500') {
  const { t } = d;
  const { walletId } = await t.newAgentWallet(t.workspace, `topup-${Math.random().toString(36).slice(2, 7)}`);
  return { walletId, intent: await t.workspace.rail.topUp(walletId, { amountMinor }) };
}

describe.each(DRIVERS)('top-ups on a %s gateway', (kind) => {
  const d = useDriver(kind);

  describe('POST /v1/wallets/:id/topup', () => {
    it('returns a pending intent from the processor and credits nothing yet', async () => {
      const { t } = d;
      const { walletId, intent: i } = await intent(d, '2500');
      expect(i).toMatchObject({ status: 'pending', amountMinor: '2500', currency: 'USD', walletId, treasuryProviderId: d.ids.processor });
      expect(i.externalRef).toMatch(kind === 'sandbox' ? /^sbx_/ : /^pi_/);
      expect(i.transactionId).toMatch(/^top_/);
      if (kind === 'sandbox') expect(i.hostedUrl).toContain(i.externalRef); // a PaymentIntent has no hosted page, only its client secret
      expect(i.clientSecret).toBeTruthy();
      expect(i.declineReason).toBeUndefined();
      await expectLedger(t.workspace, walletId, []);
      const { transactions } = await t.workspace.rail.transactions({ walletId });
      expect(transactions).toEqual([expect.objectContaining({ id: i.transactionId, kind: 'topup', state: 'pending', railAmountMinor: '2500', creditedMinor: '0' })]);
    });

    it('declines at once above the processor limit, with declineReason, and credits nothing', async () => {
      const { walletId, intent: i } = await intent(d, d.overLimit.amountMinor);
      expect(i).toMatchObject({ status: 'declined', declineReason: d.overLimit.reason });
      expect(i.hostedUrl).toBeUndefined();
      await expectLedger(d.t.workspace, walletId, []);
    });
  });

  describe('the processor confirming a top-up', () => {
    it('credits the wallet once even when the webhook is delivered twice', async () => {
      const { t } = d;
      const { walletId, intent: i } = await intent(d, '2500');
      const first = await d.confirmTopUp(i);
      expect(first.res.status).toBe(200);
      expect(first.res.body.transaction).toMatchObject({ state: 'confirmed', creditedMinor: '2500' });
      await expectLedger(t.workspace, walletId, ['2500']);

      // the processor delivers the same signed webhook again: refused as a duplicate, nothing credited
      const before = snapshotDb(t.dataDir);
      const again = await d.deliver(first.webhook);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('DUPLICATE_EXTERNAL_REF');
      expect(again.body.error.details).toMatchObject({ externalRef: i.externalRef, transactionId: i.transactionId });
      // sandbox only: the sandbox control asked twice is the same duplicate (a production gateway has no such control)
      if (kind === 'sandbox') await refusedWith(t.workspace.sandbox.confirmTopUp(i.transactionId), 409, 'DUPLICATE_EXTERNAL_REF');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);

      const entries = await expectLedger(t.workspace, walletId, ['2500']);
      expect(entries[0]).toMatchObject({ type: 'topup', reference: `topup:${i.externalRef}` });
      expectConserved(t);
    });

    it('credits once when two deliveries of the confirmation race', async () => {
      const { walletId, intent: i } = await intent(d, '700');
      const { webhook } = await d.confirmTopUp(i);
      const results = await Promise.all([d.deliver(webhook), d.deliver(webhook), d.deliver(webhook)]);
      expect(results.map((r) => r.status)).toEqual([409, 409, 409]);
      await expectLedger(d.t.workspace, walletId, ['700']);
      expectConserved(d.t);
    });

    it('a webhook signed and delivered by the processor itself credits the wallet', async () => {
      const { walletId, intent: i } = await intent(d, '300');
      const res = await d.deliver(d.sign(d.succeededEvent(i.externalRef, '300')));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ received: true, transaction: { id: i.transactionId, state: 'confirmed' } });
      await expectLedger(d.t.workspace, walletId, ['300']);
      expectConserved(d.t);
    });
  });

  describe('a declined top-up', () => {
    it('credits nothing and carries declineReason', async () => {
      const { t } = d;
      const { walletId, intent: i } = await intent(d, '900');
      const { res, webhook } = await d.declineTopUp(i, 'insufficient_funds');
      expect(res.status).toBe(200);
      expect(res.body.transaction).toMatchObject({ state: 'declined', reason: 'insufficient_funds', creditedMinor: '0' });
      // a later confirmation of the declined intent is refused, and credits nothing
      const late = await d.deliver(d.sign(d.succeededEvent(i.externalRef, '900')));
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('CONFLICT');
      const again = await d.deliver(webhook);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('DUPLICATE_EXTERNAL_REF');
      await expectLedger(t.workspace, walletId, []);
      const [tx] = (await t.workspace.rail.transactions({ walletId })).transactions;
      expect(tx).toMatchObject({ state: 'declined', reason: 'insufficient_funds' });
      expectConserved(t);
    });
  });

  describe("the processor's webhook route refuses", () => {
    async function expectRefused(walletId: string, res: Delivery, problem: 'mismatch' | 'missing' | 'malformed' | 'stale') {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.message.startsWith(`${d.signatureHeader}: `), res.body.error.message).toBe(true);
      expect(res.body.error.message).toMatch(d.signatureProblems[problem]);
      await expectLedger(d.t.workspace, walletId, []);
    }

    it('a forged webhook: signed with another secret, or its body changed after signing, or unsigned', async () => {
      const { t } = d;
      const { walletId, intent: i } = await intent(d, '5000');
      const before = snapshotDb(t.dataDir);
      const forged = d.sign(d.succeededEvent(i.externalRef, '5000'), { secret: 'whsec_not_the_processor' });
      await expectRefused(walletId, await d.deliver(forged), 'mismatch');

      const genuine = d.sign(d.succeededEvent(i.externalRef, '60'));
      const tampered = genuine.body.replace(/"60"|:60\b/g, (m) => m.replace('60', '5000'));
      expect(tampered).not.toBe(genuine.body);
      await expectRefused(walletId, await d.deliver({ body: tampered, headers: genuine.headers }), 'mismatch');

      await expectRefused(walletId, await d.deliver({ body: genuine.body, headers: {} }), 'missing');
      await expectRefused(walletId, await d.deliver({ body: genuine.body, headers: { [d.signatureHeader]: 'v1=abc' } }), 'malformed');
      expect(changedTables(before, snapshotDb(t.dataDir))).toEqual([]);
    });

    it('a stale webhook: genuinely signed, but more than 5 minutes from the gateway clock', async () => {
      const { t } = d;
      const { walletId, intent: i } = await intent(d, '5000');
      const signedAt = t.clock.now();
      const old = d.sign(d.succeededEvent(i.externalRef, '5000'), { atMs: signedAt });
      t.clock.advance(5 * MINUTE + 1000);
      await expectRefused(walletId, await d.deliver(old), 'stale');
      // one signed in the future beyond the tolerance is as suspect
      const future = d.sign(d.succeededEvent(i.externalRef, '5000'), { atMs: t.clock.now() + 6 * MINUTE });
      await expectRefused(walletId, await d.deliver(future), 'stale');
      // within the tolerance the same processor's webhook is accepted
      const fresh = d.sign(d.succeededEvent(i.externalRef, '5000'), { atMs: t.clock.now() - 4 * MINUTE });
      expect((await d.deliver(fresh)).status).toBe(200);
      await expectLedger(t.workspace, walletId, ['5000']);
      expectConserved(t);
    });

    it('a genuine webhook for an amount other than the intent', async () => {
      const { walletId, intent: i } = await intent(d, '100');
      const res = await d.deliver(d.sign(d.succeededEvent(i.externalRef, '100000')));
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('CONFLICT');
      await expectLedger(d.t.workspace, walletId, []);
    });

    it('a genuine webhook for an unknown intent', async () => {
      const res = await d.deliver(d.sign(d.succeededEvent(kind === 'sandbox' ? 'sbx_nosuchintent' : 'pi_nosuchintent', '100')));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      expectConserved(d.t);
    });
  });
  // sandbox only: the sandbox controls do not exist on a production gateway
  describe.skipIf(kind !== 'sandbox')("another tenant's top-up", () => {
    it('cannot be confirmed through the sandbox control (404) and is not credited', async () => {
      const { walletId, intent: i } = await intent(d, '400');
      const other = await d.t.newWorkspace();
      await refusedWith(other.client.sandbox.confirmTopUp(i.transactionId), 404, 'NOT_FOUND');
      await expectLedger(d.t.workspace, walletId, []);
    });
  });
});
