/**
 * The specification's tenancy rule: `providerId` and `workspaceId` sent in a body or a query
 * by a tenant key are ignored (the tenant is the key's), and a query that names another
 * tenant changes nothing. Every route that refuses unknown fields still accepts these two,
 * and the call acts on the key's own tenant. Any other unknown field is refused, named.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/matrix.js';
import { expectLedgerConsistent, hashOf, ledgerBalance, newBuyer, newSeller, signProof } from '../payments/helpers.js';

const t = await startTestGateway();
afterAll(() => t.close());

describe('tenant ids in bodies and queries', () => {
  it('are ignored by the x402 routes and the batch: the sale is the key\'s, the money moves as without them', async () => {
    const seller = await newSeller(t, '100');
    const other = await newSeller(t, '100');
    const foreign = { providerId: other.id, workspaceId: t.creds.workspace.id };
    const buyer = await newBuyer(t, t.workspace, '1000');
    const as = { apiKey: seller.apiKey };

    const challenge = await call(t, 'POST', '/v1/x402/challenge', { ...as, body: { capabilityId: seller.capabilityId, ...foreign } });
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    const c = challenge.body.challenge as Parameters<typeof signProof>[0];
    expect(c.providerId).toBe(seller.id);

    const auth = await call(t, 'POST', '/v1/x402/authorize', { ...as, body: { capabilityId: seller.capabilityId, payment: signProof(c, buyer), ...foreign } });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    const done = await call(t, 'POST', '/v1/x402/complete', { ...as, body: { transactionId: auth.body.transactionId, responseHash: hashOf('{}'), ...foreign } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.receipt).toMatchObject({ providerId: seller.id, consumerId: buyer.walletId, status: 'success' });

    // a failed call through the batch, tenant ids on every operation
    const [batched] = (await call(t, 'POST', '/v1/x402/batch', { ...as, body: { operations: [{ op: 'challenge', capabilityId: seller.capabilityId, ...foreign }] } })).body.results as Array<{ status: number; body: { challenge: Parameters<typeof signProof>[0] } }>;
    expect(batched!.status).toBe(200);
    const auth2 = await call(t, 'POST', '/v1/x402/authorize', { ...as, body: { capabilityId: seller.capabilityId, payment: signProof(batched!.body.challenge, buyer) } });
    const failed = await call(t, 'POST', '/v1/x402/batch', {
      ...as,
      body: { operations: [{ op: 'fail', transactionId: auth2.body.transactionId, reason: 'client_error', statusCode: 400, ...foreign }] },
    });
    expect((failed.body.results as Array<{ status: number }>)[0]!.status).toBe(200);

    // buyer -100 once, seller +97, the other seller untouched, nothing left held
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 900n, held: 0n });
    expect(ledgerBalance(t, seller.walletId)).toEqual({ balance: 97n, held: 0n });
    expect(ledgerBalance(t, other.walletId)).toEqual({ balance: 0n, held: 0n });
    expectLedgerConsistent(t);
  });

  it('are ignored by the provider routes, ratings, breaker, keys, rail and payout lists', async () => {
    const provider = await t.newProvider({ verified: false });
    const ws = await t.newWorkspace();
    const foreign = { providerId: t.creds.provider.id, workspaceId: t.creds.workspace.id };
    const q = `providerId=${t.creds.provider.id}&workspaceId=${t.creds.workspace.id}`;

    const listed = await call(t, 'GET', `/v1/providers?${q}`, { apiKey: provider.apiKey });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.providers as Array<{ id: string }>).map((p) => p.id)).toEqual([provider.id]); // still only itself

    const requested = await call(t, 'POST', `/v1/providers/${provider.id}/verification-request`, { apiKey: provider.apiKey, body: { note: 'hi', ...foreign } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const decided = await call(t, 'POST', `/v1/providers/${provider.id}/verify`, { apiKey: t.creds.operatorKey, body: { decision: 'approved', ...foreign } });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body.provider).toMatchObject({ id: provider.id, verified: true });

    const wallet = await t.newAgentWallet(ws.client);
    const resumed = await call(t, 'POST', `/v1/wallets/${wallet.walletId}/resume-provider`, { apiKey: ws.apiKey, body: { providerId: provider.id, workspaceId: t.creds.workspace.id } });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);

    const key = await call(t, 'POST', '/v1/auth/keys', { apiKey: ws.apiKey, body: { name: 'ci', ...foreign } });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const { keys } = await ws.client.keys.list();
    expect(keys.map((k) => k.name)).toContain('ci'); // made for the calling workspace

    for (const path of ['/v1/rail/transactions', '/v1/events']) {
      const r = await call(t, 'GET', `${path}?${q}`, { apiKey: ws.apiKey });
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
    }
    const payouts = await call(t, 'GET', `/v1/payouts?${q}`, { apiKey: provider.apiKey });
    expect(payouts.status, JSON.stringify(payouts.body)).toBe(200);
  });

  it('a rating with a workspaceId is the key\'s workspace\'s rating', async () => {
    const seller = await newSeller(t, '100');
    const buyer = await newBuyer(t, t.workspace, '100');
    const c = await seller.client.payments.challenge(seller.capabilityId);
    const auth = await seller.client.payments.authorize({ capabilityId: seller.capabilityId, payment: signProof(c, buyer) });
    await seller.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('{}') });
    const other = await t.newWorkspace();
    const rated = await call(t, 'POST', `/v1/providers/${seller.id}/rate`, {
      apiKey: t.creds.workspace.apiKey,
      body: { transactionId: auth.transactionId, rating: 5, raterWalletId: buyer.walletId, workspaceId: other.id, providerId: 'prv_someone_else' },
    });
    expect(rated.status, JSON.stringify(rated.body)).toBe(200);
    expect(rated.body.rating).toMatchObject({ providerId: seller.id, transactionId: auth.transactionId, rating: 5 });
  });

  it('any other unknown field is refused with 400, named in the message and in details.field', async () => {
    const seller = await newSeller(t, '100');
    const r = await call(t, 'POST', '/v1/x402/challenge', { apiKey: seller.apiKey, body: { capabilityId: seller.capabilityId, capabilityID: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'capabilityID' } });
    expect(r.body.error!.message).toMatch(/^capabilityID: is not a field of this request/);
    const q = await call(t, 'GET', '/v1/providers?verificaton=approved', { apiKey: t.creds.operatorKey });
    expect(q.status).toBe(400);
    expect(q.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'verificaton', location: 'querystring' } });
  });
});
