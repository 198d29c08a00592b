import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { authorizeCall, createCapability, newBuyer, paidCall, refused } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

async function purchase() {
  const s = await t.newProvider();
  const capabilityId = await createCapability(t, s.id, { priceMinor: '10' });
  const buyer = await newBuyer(t, t.workspace, '100');
  const receipt = await paidCall(s.client, capabilityId, buyer);
  return { s, capabilityId, buyer, receipt };
}

describe('POST /v1/providers/:id/rate', () => {
  it('stores one rating for a paid transaction by the wallet that paid', async () => {
    const { s, buyer, receipt } = await purchase();
    const rating = await t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 4, raterWalletId: buyer.walletId, raterAgentId: 'researcher' });
    expect(rating).toMatchObject({ providerId: s.id, transactionId: receipt.transactionId, rating: 4, raterWalletId: buyer.walletId, raterAgentId: 'researcher' });
    expect(rating.id).toMatch(/^rtg_/);
    const summary = await t.gw.store.read((r) => r.ratings.summary([s.id]));
    expect(summary.get(s.id)).toEqual({ count: 1, sum: 4 });
  });

  it('refuses a second rating of the same transaction (400)', async () => {
    const { s, buyer, receipt } = await purchase();
    await t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 5, raterWalletId: buyer.walletId });
    await refused(t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 1, raterWalletId: buyer.walletId }), 400, 'VALIDATION_FAILED');
  });

  it('refuses a rating outside 1..5 or not an integer (400 naming rating)', async () => {
    const { s, buyer, receipt } = await purchase();
    for (const rating of [0, 6, 3.5]) {
      const e = await refused(t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating, raterWalletId: buyer.walletId }), 400, 'VALIDATION_FAILED');
      expect(e.details).toMatchObject({ field: 'rating' });
    }
  });

  it('answers 404 for a transaction without a receipt', async () => {
    const s = await t.newProvider();
    const capabilityId = await createCapability(t, s.id, { priceMinor: '10' });
    const buyer = await newBuyer(t, t.workspace, '100');
    const auth = await authorizeCall(s.client, capabilityId, buyer);
    await refused(t.workspace.ratings.rate(s.id, { transactionId: auth.transactionId, rating: 3, raterWalletId: buyer.walletId }), 404, 'NOT_FOUND');
    await refused(t.workspace.ratings.rate(s.id, { transactionId: 'txn_unknown', rating: 3, raterWalletId: buyer.walletId }), 404, 'NOT_FOUND');
  });

  it('answers 403 for another workspace\'s purchase, another wallet, or the wrong provider', async () => {
    const { s, buyer, receipt } = await purchase();
    const other = await t.newWorkspace('Other Rater');
    const otherWallet = await newBuyer(t, other.client);
    await refused(other.client.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 3, raterWalletId: otherWallet.walletId }), 403, 'FORBIDDEN');
    await refused(other.client.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 3, raterWalletId: buyer.walletId }), 403, 'FORBIDDEN');
    const sibling = await newBuyer(t, t.workspace);
    await refused(t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 3, raterWalletId: sibling.walletId }), 403, 'FORBIDDEN');
    const wrong = await t.newProvider();
    await refused(t.workspace.ratings.rate(wrong.id, { transactionId: receipt.transactionId, rating: 3, raterWalletId: buyer.walletId }), 403, 'FORBIDDEN');
    // none of these stored anything: the rightful rating still goes in
    await t.workspace.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 2, raterWalletId: buyer.walletId });
  });

  it('is refused to a provider key, which lacks ratings:write', async () => {
    const { s, buyer, receipt } = await purchase();
    await refused(s.client.ratings.rate(s.id, { transactionId: receipt.transactionId, rating: 5, raterWalletId: buyer.walletId }), 403, 'FORBIDDEN');
  });
});
