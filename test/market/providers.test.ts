import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { reputationOf } from '../../src/domain/market/reputation.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addRatings, expectRefused, restInput } from './helpers.js';

let t: TestGateway;
const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t.close();
});

const discoverable = async (query: string) => (await t.workspace.discovery.search({ query })).map((x) => x.capability.id);

describe('GET /v1/providers', () => {
  it('shows a provider key only itself, with its verification request', async () => {
    const me = await t.newProvider({ name: 'Self Seller', verified: false });
    const list = await me.client.providers.list();
    expect(list).toEqual([{ id: me.id, name: 'Self Seller', verified: false, status: 'pending_verification', reputation: 0.5, website: null, verification: null }]);
  });

  it('shows a workspace key verified, active sellers only, without verification requests', async () => {
    const verified = await t.newProvider({ name: 'Listed Seller' });
    const pending = await t.newProvider({ verified: false });
    const suspended = await t.newProvider();
    await t.operator.providers.suspend(suspended.id);
    const list = await t.workspace.providers.list();
    const ids = list.map((p) => p.id);
    expect(ids).toContain(verified.id);
    expect(ids).toContain(t.creds.provider.id);
    expect(ids).not.toContain(pending.id);
    expect(ids).not.toContain(suspended.id);
    expect(list.every((p) => p.verified && p.status === 'active' && !('verification' in p))).toBe(true);
  });

  it('shows the operator every provider with its verification request', async () => {
    const pending = await t.newProvider({ verified: false });
    const list = await t.operator.providers.list();
    const found = list.find((p) => p.id === pending.id);
    expect(found).toMatchObject({ status: 'pending_verification', verification: null });
    expect(list.map((p) => p.id)).toContain(t.creds.provider.id);
  });

  it("gives the operator its queue: providers whose latest request is 'requested', oldest request first", async () => {
    const first = await t.newProvider({ verified: false });
    const second = await t.newProvider({ verified: false });
    await second.client.providers.requestVerification(second.id);
    clock.advance(1000);
    await first.client.providers.requestVerification(first.id);
    const queue = (await t.operator.providers.list({ verification: 'requested' })).map((p) => p.id);
    expect(queue.indexOf(second.id)).toBeGreaterThanOrEqual(0);
    expect(queue.indexOf(second.id)).toBeLessThan(queue.indexOf(first.id));
    await expectRefused(t.workspace.providers.list({ verification: 'requested' }), 403, 'FORBIDDEN');
    await expectRefused(t.operator.providers.list({ verification: 'maybe' as never }), 400, 'VALIDATION_FAILED', 'verification');
  });
});

describe('GET /v1/providers/:id', () => {
  it('shows a verified seller to a workspace and to itself, and hides an unverified one from others with 404', async () => {
    const verified = await t.newProvider({ name: 'Visible' });
    expect(await t.workspace.providers.get(verified.id)).toEqual({ id: verified.id, name: 'Visible', verified: true, status: 'active', reputation: 0.5, website: null });
    expect((await verified.client.providers.get(verified.id)).verification).toBeNull();

    const pending = await t.newProvider({ verified: false });
    await expectRefused(t.workspace.providers.get(pending.id), 404, 'PROVIDER_NOT_FOUND');
    expect((await pending.client.providers.get(pending.id)).status).toBe('pending_verification');
    expect((await t.operator.providers.get(pending.id)).id).toBe(pending.id);
  });

  it('hides other providers from a provider key, and non-providers and unknown ids from everyone, with 404', async () => {
    const other = await t.newProvider();
    await expectRefused(t.provider.providers.get(other.id), 404, 'PROVIDER_NOT_FOUND');
    await expectRefused(t.operator.providers.get(t.creds.workspace.id), 404, 'PROVIDER_NOT_FOUND');
    await expectRefused(t.workspace.providers.get('prv_nope'), 404, 'PROVIDER_NOT_FOUND');
  });

  it('reports reputation as a Bayesian mean of the ratings with a 0.5 prior worth 3 ratings', async () => {
    const rated = await t.newProvider();
    await addRatings(t, rated.id, [5, 5, 4]);
    // ((3 × 0.5) + (1 + 1 + 0.75)) / (3 + 3) = 4.25 / 6
    expect((await t.workspace.providers.get(rated.id)).reputation).toBe(0.7083);
    const { capability } = await rated.client.capabilities.publish(restInput());
    expect((await t.workspace.capabilities.get(capability.id)).provider.reputation).toBe(0.7083);
  });
});

describe('reputationOf', () => {
  it('is 0.5 with no ratings and moves towards the ratings as they accumulate', () => {
    expect(reputationOf(undefined)).toBe(0.5);
    expect(reputationOf({ count: 1, sum: 5 })).toBe(0.625);
    expect(reputationOf({ count: 1, sum: 1 })).toBe(0.375);
    expect(reputationOf({ count: 1000, sum: 5000 })).toBeGreaterThan(0.998);
    expect(reputationOf({ count: 1000, sum: 1000 })).toBeLessThan(0.002);
  });
});

describe('POST /v1/providers/:id/verification-request', () => {
  it('opens a request, updates it when asked again keeping its queue place, and the operator approves it', async () => {
    const seller = await t.newProvider({ verified: false });
    const { capability } = await seller.client.capabilities.publish(restInput({ description: 'verifyflowword' }));
    expect(await discoverable('verifyflowword')).toEqual([]);

    const opened = await seller.client.providers.requestVerification(seller.id, { note: 'we sell summaries', contact: 'ops@seller.example' });
    expect(opened.verification).toMatchObject({ id: expect.stringMatching(/^vrq_/), status: 'requested', note: 'we sell summaries', contact: 'ops@seller.example', reason: null, decidedAt: null });
    const requestedAt = opened.verification!.requestedAt;

    clock.advance(60_000);
    const again = await seller.client.providers.requestVerification(seller.id, { note: 'now with a website' });
    expect(again.verification).toMatchObject({ id: opened.verification!.id, status: 'requested', note: 'now with a website', contact: 'ops@seller.example', requestedAt });
    expect(again.verification!.updatedAt).not.toBe(requestedAt);

    clock.advance(60_000);
    const approved = await t.operator.providers.verify(seller.id, { decision: 'approved', reason: 'checked' });
    expect(approved).toMatchObject({ verified: true, status: 'active', verification: { id: opened.verification!.id, status: 'approved', reason: 'checked', requestedAt } });
    expect(approved.verification!.decidedAt).not.toBeNull();
    expect(await discoverable('verifyflowword')).toEqual([capability.id]);

    await expectRefused(seller.client.providers.requestVerification(seller.id), 409, 'CONFLICT');
  });

  it('accepts no body at all', async () => {
    const seller = await t.newProvider({ verified: false });
    const res = await seller.client.http.raw<{ provider: { verification: { status: string; note: null } } }>('POST', `/v1/providers/${seller.id}/verification-request`);
    expect(res.status).toBe(200);
    expect(res.body.provider.verification).toMatchObject({ status: 'requested', note: null });
  });

  it('after a denial shows the reason, keeps the seller unverified, and takes a new request', async () => {
    const seller = await t.newProvider({ verified: false });
    const first = await seller.client.providers.requestVerification(seller.id);
    const denied = await t.operator.providers.verify(seller.id, { decision: 'denied', reason: 'no website' });
    expect(denied).toMatchObject({ verified: false, status: 'pending_verification', verification: { status: 'denied', reason: 'no website' } });
    expect((await seller.client.providers.get(seller.id)).verification).toMatchObject({ status: 'denied', reason: 'no website' });

    clock.advance(1000);
    const second = await seller.client.providers.requestVerification(seller.id, { note: 'website added' });
    expect(second.verification).toMatchObject({ status: 'requested', note: 'website added', reason: null });
    expect(second.verification!.id).not.toBe(first.verification!.id);
    expect(second.verification!.requestedAt > first.verification!.requestedAt).toBe(true);
  });

  it('refuses a verified provider with 409 CONFLICT', async () => {
    await expectRefused(t.provider.providers.requestVerification(t.creds.provider.id), 409, 'CONFLICT');
  });

  it('refuses anyone but the provider itself with 403 FORBIDDEN and changes nothing', async () => {
    const seller = await t.newProvider({ verified: false });
    await expectRefused(t.provider.providers.requestVerification(seller.id), 403, 'FORBIDDEN');
    await expectRefused(t.workspace.providers.requestVerification(seller.id), 403, 'FORBIDDEN');
    await expectRefused(t.workspace.providers.requestVerification(t.creds.workspace.id), 403, 'FORBIDDEN');
    expect((await seller.client.providers.get(seller.id)).verification).toBeNull();
  });

  it('refuses unknown fields and over-long notes with 400 VALIDATION_FAILED', async () => {
    const seller = await t.newProvider({ verified: false });
    await expectRefused(seller.client.providers.requestVerification(seller.id, { notes: 'x' } as never), 400, 'VALIDATION_FAILED');
    await expectRefused(seller.client.providers.requestVerification(seller.id, { note: 'x'.repeat(2001) }), 400, 'VALIDATION_FAILED', 'note');
  });
});

describe('POST /v1/providers/:id/verify', () => {
  it('lets the operator approve a seller that never asked, recording the decision', async () => {
    const seller = await t.newProvider({ verified: false });
    const p = await t.operator.providers.verify(seller.id, { decision: 'approved' });
    expect(p).toMatchObject({ verified: true, status: 'active', verification: { status: 'approved', reason: null } });
    // approving again changes nothing
    expect(await t.operator.providers.verify(seller.id, { decision: 'approved' })).toEqual(p);
  });

  it('refuses to deny a verified seller with 409 CONFLICT (suspend it instead)', async () => {
    const seller = await t.newProvider();
    await expectRefused(t.operator.providers.verify(seller.id, { decision: 'denied' }), 409, 'CONFLICT');
    expect((await t.operator.providers.get(seller.id)).verified).toBe(true);
  });

  it('refuses non-operator keys with 403, unknown providers with 404, and unknown decisions with 400', async () => {
    const seller = await t.newProvider({ verified: false });
    await expectRefused(seller.client.providers.verify(seller.id, { decision: 'approved' }), 403, 'FORBIDDEN');
    await expectRefused(t.workspace.providers.verify(seller.id, { decision: 'approved' }), 403, 'FORBIDDEN');
    await expectRefused(t.operator.providers.verify('prv_nope', { decision: 'approved' }), 404, 'PROVIDER_NOT_FOUND');
    await expectRefused(t.operator.providers.verify(t.creds.workspace.id, { decision: 'approved' }), 404, 'PROVIDER_NOT_FOUND');
    await expectRefused(t.operator.providers.verify(seller.id, { decision: 'maybe' as never }), 400, 'VALIDATION_FAILED', 'decision');
    expect((await t.operator.providers.get(seller.id)).verified).toBe(false);
  });
});

describe('POST /v1/providers/:id/suspend and /unsuspend', () => {
  it("takes a seller's capabilities out of discovery and out of buyers' sight at once, and back on unsuspend", async () => {
    const seller = await t.newProvider();
    const { capability } = await seller.client.capabilities.publish(restInput({ description: 'suspendflowword' }));
    expect(await discoverable('suspendflowword')).toEqual([capability.id]);

    expect(await t.operator.providers.suspend(seller.id)).toMatchObject({ status: 'suspended', verified: true });
    expect(await discoverable('suspendflowword')).toEqual([]);
    await expectRefused(t.workspace.providers.get(seller.id), 404, 'PROVIDER_NOT_FOUND');
    const d = await t.workspace.capabilities.get(capability.id);
    expect(d.discoverable).toBe(false);
    expect(d).not.toHaveProperty('version');
    expect((await seller.client.providers.get(seller.id)).status).toBe('suspended');
    // suspending again changes nothing
    expect((await t.operator.providers.suspend(seller.id)).status).toBe('suspended');

    expect(await t.operator.providers.unsuspend(seller.id)).toMatchObject({ status: 'active', verified: true });
    expect(await discoverable('suspendflowword')).toEqual([capability.id]);
    expect((await t.workspace.providers.get(seller.id)).status).toBe('active');
  });

  it('returns an unverified seller to pending_verification, and an approval while suspended keeps it suspended', async () => {
    const seller = await t.newProvider({ verified: false });
    await t.operator.providers.suspend(seller.id);
    expect((await t.operator.providers.unsuspend(seller.id)).status).toBe('pending_verification');

    await t.operator.providers.suspend(seller.id);
    expect(await t.operator.providers.verify(seller.id, { decision: 'approved' })).toMatchObject({ verified: true, status: 'suspended' });
    expect((await t.operator.providers.unsuspend(seller.id)).status).toBe('active');
  });

  it('refuses non-operator keys with 403 and unknown providers with 404', async () => {
    await expectRefused(t.provider.providers.suspend(t.creds.provider.id), 403, 'FORBIDDEN');
    await expectRefused(t.workspace.providers.unsuspend(t.creds.provider.id), 403, 'FORBIDDEN');
    await expectRefused(t.operator.providers.suspend('prv_nope'), 404, 'PROVIDER_NOT_FOUND');
    expect((await t.workspace.providers.get(t.creds.provider.id)).status).toBe('active');
  });
});
