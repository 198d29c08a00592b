/**
 * The SDK's session parts without a gateway: the seller's voucher checker on a file voucher store
 * (the accepted voucher is on disk before the call is served, and a restarted checker goes on from
 * it), and the buyer's session signing, refusing and resyncing.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { SessionChecker, MemoryVoucherStore } from '../../packages/sdk/src/seller/sessions.js';
import { FileVoucherStore } from 'agentpay-sdk/seller/voucher-file-store';
import { openRequest } from '../../packages/sdk/src/buyer/session.js';
import type { SessionGrant, UnsignedSessionGrant } from '../../packages/sdk/src/contract/sessions.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const platform = generateEd25519();
const seller = generateEd25519();
const wallet = generateEd25519();
const NOW = Date.UTC(2026, 10, 21, 10);
const hash = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;

/** A buyer's open and a grant for it, signed by a stand-in platform key. */
async function session(capMinor = '100', now = () => NOW) {
  const { open, session: pending } = await openRequest({
    walletId: 'wal_1', privateKeyPem: wallet.privateKeyPem, providerId: 'prv_1', capabilityId: 'cap_1', capMinor, currency: 'USD',
    expiresAt: new Date(NOW + 3_600_000).toISOString(), now,
  });
  const unsigned: UnsignedSessionGrant = {
    version: 1, sessionId: `ses_${Math.random().toString(36).slice(2, 10)}`, walletId: 'wal_1', providerId: 'prv_1', capabilityId: 'cap_1', payTo: 'wal_pay',
    capMinor, currency: 'USD', expiresAt: open.expiresAt, claimWindowEndsAt: new Date(NOW + 7_200_000).toISOString(),
    sessionPublicKey: open.sessionPublicKey, sellerPublicKey: seller.publicKeyPem, issuedAt: new Date(NOW).toISOString(),
  };
  const grant: SessionGrant = { ...unsigned, signingKeyId: 'sk_1', signature: signObject(platform.privateKeyPem, { ...unsigned, signingKeyId: 'sk_1' }) };
  return { grant, paying: await pending.start(grant, platform.publicKeyPem) };
}

const checkerOn = (store: MemoryVoucherStore | FileVoucherStore, now = () => NOW) =>
  new SessionChecker({ providerId: 'prv_1', sellerPrivateKeyPem: seller.privateKeyPem, platformKey: (id) => (id === 'sk_1' ? platform.publicKeyPem : undefined), store, now });

describe('the seller checker on a file store', () => {
  it('persists the accepted voucher before serving, and a restarted checker goes on from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpay-vouchers-'));
    dirs.push(dir);
    const { grant, paying } = await session();
    const firstStore = new FileVoucherStore(dir);
    const first = checkerOn(firstStore);
    await first.acceptGrant(grant);
    const v1 = await paying.voucher('10', hash(1));
    const v2 = await paying.voucher('10', hash(2));
    expect(await first.check(v1, { priceMinor: '10', requestHash: hash(1) })).toMatchObject({ kind: 'accept' });
    expect(await first.check(v2, { priceMinor: '10', requestHash: hash(2) })).toMatchObject({ kind: 'accept', state: { sequence: 2, cumulativeMinor: '20', spentMinor: '20' } });
    expect(readdirSync(dir)).toEqual(['vouchers.log']);

    // a new process on the same directory: an equal voucher is a retry, an older one is stale
    await firstStore.close();
    const againStore = new FileVoucherStore(dir);
    const again = checkerOn(againStore);
    expect(await again.check(v2, { priceMinor: '10', requestHash: hash(2) })).toMatchObject({ kind: 'retry', chargedMinor: '0' });
    expect(await again.check(v1, { priceMinor: '10', requestHash: hash(1) })).toMatchObject({ kind: 'refuse', code: 'VOUCHER_STALE' });
    expect(await again.claims()).toEqual([{ sessionId: grant.sessionId, voucher: v2 }]);
    await again.claimed(grant.sessionId, '20');
    expect(await again.claims()).toEqual([]);
    await again.forget(grant.sessionId);
    await againStore.close();
    const reopened = new FileVoucherStore(dir);
    expect(await reopened.all()).toEqual([]);
    await reopened.close();
  });

  it('refuses a grant the platform did not sign, or one naming another receipt key', async () => {
    const { grant } = await session();
    const c = checkerOn(new MemoryVoucherStore());
    await expect(c.acceptGrant({ ...grant, capMinor: '1000' })).rejects.toMatchObject({ code: 'VOUCHER_INVALID' });
    const other = generateEd25519();
    const forged = { ...grant, sellerPublicKey: other.publicKeyPem };
    const { signature: _s, ...rest } = forged;
    await expect(c.acceptGrant({ ...rest, signature: signObject(platform.privateKeyPem, rest) })).rejects.toMatchObject({ code: 'VOUCHER_INVALID' });
  });

  it('refuses a voucher of another key, for another request, above the cap, short of the price, or after expiry; nothing is stored', async () => {
    let now = NOW;
    const { grant, paying } = await session('30', () => now);
    const store = new MemoryVoucherStore();
    const c = checkerOn(store, () => now);
    await c.acceptGrant(grant);
    const v = await paying.voucher('10', hash(1));
    const forged = { ...v, signature: signObject(generateEd25519().privateKeyPem, { sessionId: v.sessionId, cumulativeMinor: v.cumulativeMinor, sequence: v.sequence, requestHash: v.requestHash }) };
    expect(await c.check(forged, { priceMinor: '10', requestHash: hash(1) })).toMatchObject({ kind: 'refuse', code: 'VOUCHER_INVALID' });
    expect(await c.check(v, { priceMinor: '10', requestHash: hash(9) })).toMatchObject({ kind: 'refuse', code: 'VOUCHER_INVALID' });
    expect(await c.check(v, { priceMinor: '11', requestHash: hash(1) })).toMatchObject({ kind: 'refuse', code: 'VOUCHER_STALE' });
    expect(await c.check(v, { priceMinor: '10', requestHash: hash(1), capabilityId: 'cap_2' })).toMatchObject({ kind: 'refuse', code: 'VOUCHER_INVALID' });
    expect((await store.get(grant.sessionId))?.voucher).toBeNull();
    await expect(paying.voucher('21', hash(2))).rejects.toMatchObject({ code: 'VOUCHER_ABOVE_CAP' });
    now = Date.parse(grant.expiresAt);
    expect(await c.check(v, { priceMinor: '10', requestHash: hash(1) })).toMatchObject({ kind: 'refuse', code: 'SESSION_EXPIRED' });
    await expect(paying.voucher('1', hash(3))).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
  });

  it('signs per-call receipts the buyer checks with the key the grant names', async () => {
    const { grant, paying } = await session();
    const c = checkerOn(new MemoryVoucherStore());
    await c.acceptGrant(grant);
    const d = await c.check(await paying.voucher('10', hash(1)), { priceMinor: '10', requestHash: hash(1) });
    if (d.kind === 'refuse') throw new Error(d.message);
    const receipt = (await c.settle(d, { ok: true, responseHash: hash(100) }))!;
    expect(receipt).toMatchObject({ type: 'session.receipt', sessionId: grant.sessionId, sequence: 1, cumulativeMinor: '10', chargedMinor: '10', responseHash: hash(100) });
    expect(await paying.verifyReceipt(receipt, hash(100))).toBe(true);
    expect(await paying.verifyReceipt(receipt, hash(101))).toBe(false);
    expect(await paying.verifyReceipt({ ...receipt, chargedMinor: '1' }, hash(100))).toBe(false);
    paying.settled(receipt);
    // a metered call: the voucher pays the most a call may cost (50), the seller charges what it used (12)
    const metered = await c.check(await paying.voucher('50', hash(2)), { priceMinor: '50', requestHash: hash(2) });
    if (metered.kind === 'refuse') throw new Error(metered.message);
    const used = (await c.settle(metered, { ok: true, responseHash: hash(102), chargedMinor: '12' }))!;
    expect(used).toMatchObject({ sequence: 2, cumulativeMinor: '60', chargedMinor: '12' });
    await expect(c.settle(metered, { ok: true, responseHash: hash(102), chargedMinor: '51' })).rejects.toMatchObject({ code: 'VOUCHER_ABOVE_CAP' });
    paying.settled(used);
    // the 38 not used are credit: the next call of 10 is covered without raising the cumulative amount
    const next = await paying.voucher('10', hash(3));
    expect(next).toMatchObject({ sequence: 3, cumulativeMinor: '60' });
    expect(await c.check(next, { priceMinor: '10', requestHash: hash(3) })).toMatchObject({ kind: 'accept', state: { cumulativeMinor: '60', spentMinor: '32' } });
    expect(paying.close()?.sequence).toBe(3);
    await expect(paying.voucher('10', hash(2))).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
  });
});
