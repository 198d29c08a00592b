/**
 * The Redis voucher store (packages/sdk/src/seller/voucher-redis-store.ts) against the real Redis of
 * AGENTPAY_TEST_REDIS_URL, each test under a key prefix of its own: what is put is read back by
 * another connection (another seller instance), the compare-and-set refuses a record that changed,
 * and two voucher checkers on two connections (two instances) racing one session never both accept
 * a sequence: each round of vouchers sent to both at once is accepted once and charged once.
 * Skipped without AGENTPAY_TEST_REDIS_URL (except under CI), as test/helpers/redis.ts says.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { SessionChecker, type VoucherRecord } from '../../packages/sdk/src/seller/sessions.js';
import { RedisVoucherStore } from 'agentpay-sdk/seller/voucher-redis-store';
import { openRequest, type BuyerSession } from '../../packages/sdk/src/buyer/session.js';
import type { SessionGrant, UnsignedSessionGrant, UnsignedVoucher, Voucher } from '../../packages/sdk/src/contract/sessions.js';
import { redisEnabled, TEST_REDIS_URL } from '../helpers/redis.js';

const platform = generateEd25519();
const seller = generateEd25519();
const wallet = generateEd25519();
const NOW = Date.UTC(2026, 10, 21, 10);
const hash = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;

const clients: Redis[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  if (clients.length === 0) return;
  const admin = clients[0]!;
  for (const p of prefixes) {
    const keys = await admin.keys(`${p}*`);
    if (keys.length > 0) await admin.del(...keys);
  }
  await Promise.all(clients.map((c) => c.quit()));
});
const client = () => { const c = new Redis(TEST_REDIS_URL); clients.push(c); return c; };
const newPrefix = () => { const p = `agentpay-test:vouchers:${randomUUID()}:`; prefixes.push(p); return p; };

const record = (sessionId: string, cumulative: number): VoucherRecord => ({
  grant: { sessionId, capMinor: '1000' } as SessionGrant,
  voucher: { sessionId, sequence: cumulative, cumulativeMinor: String(cumulative), requestHash: hash(cumulative), signature: 'sig' },
  spentMinor: String(cumulative),
  claimedMinor: '0',
});

/** A buyer's session and a grant for it, signed by a stand-in platform key. */
async function session(capMinor = '100000') {
  const { open, session: pending } = await openRequest({
    walletId: 'wal_1', privateKeyPem: wallet.privateKeyPem, providerId: 'prv_1', capabilityId: 'cap_1', capMinor, currency: 'USD',
    expiresAt: new Date(NOW + 3_600_000).toISOString(), now: () => NOW,
  });
  const unsigned: UnsignedSessionGrant = {
    version: 1, sessionId: `ses_${randomUUID().replace(/-/g, '').slice(0, 12)}`, walletId: 'wal_1', providerId: 'prv_1', capabilityId: 'cap_1', payTo: 'wal_pay',
    capMinor, currency: 'USD', expiresAt: open.expiresAt, claimWindowEndsAt: new Date(NOW + 7_200_000).toISOString(),
    sessionPublicKey: open.sessionPublicKey, sellerPublicKey: seller.publicKeyPem, issuedAt: new Date(NOW).toISOString(),
  };
  const grant: SessionGrant = { ...unsigned, signingKeyId: 'sk_1', signature: signObject(platform.privateKeyPem, { ...unsigned, signingKeyId: 'sk_1' }) };
  const paying = await pending.start(grant, platform.publicKeyPem);
  // the session key, to sign two different vouchers of one sequence (what two racing calls may carry)
  const key = (paying as unknown as { sessionPrivateKeyPem: string }).sessionPrivateKeyPem;
  const voucher = (sequence: number, cumulativeMinor: string, requestHash: string): Voucher => {
    const unsignedVoucher: UnsignedVoucher = { sessionId: grant.sessionId, sequence, cumulativeMinor, requestHash };
    return { ...unsignedVoucher, signature: signObject(key, unsignedVoucher as unknown as Record<string, unknown>) };
  };
  return { grant, paying: paying as BuyerSession, voucher };
}

const checkerOn = (store: RedisVoucherStore) =>
  new SessionChecker({ providerId: 'prv_1', sellerPrivateKeyPem: seller.privateKeyPem, platformKey: (id) => (id === 'sk_1' ? platform.publicKeyPem : undefined), store, now: () => NOW });

describe.skipIf(!redisEnabled())('RedisVoucherStore', () => {
  it('keeps what was put for another connection to read, removes what was deleted, and lists every session', async () => {
    const prefix = newPrefix();
    const a = new RedisVoucherStore({ client: client(), prefix });
    const b = new RedisVoucherStore({ url: TEST_REDIS_URL, prefix }); // its own ioredis client, made from the url
    try {
      await a.put('ses_1', record('ses_1', 10));
      await a.put('ses_2', record('ses_2', 20));
      await a.put('ses_1', record('ses_1', 30));
      expect(await b.get('ses_1')).toEqual(record('ses_1', 30));
      await b.delete('ses_2');
      expect(await a.get('ses_2')).toBeUndefined();
      expect(await a.all()).toEqual([record('ses_1', 30)]);
      // another prefix (another seller on the same Redis) sees none of it
      expect(await new RedisVoucherStore({ client: clients[0]!, prefix: newPrefix() }).all()).toEqual([]);
      await expect(a.get('../etc')).rejects.toThrow(/not a session id/);
    } finally {
      await b.close();
    }
  });

  it('replaces a record only while it is the one read: a change by another instance in between is refused', async () => {
    const prefix = newPrefix();
    const a = new RedisVoucherStore({ client: client(), prefix });
    const b = new RedisVoucherStore({ client: client(), prefix });
    expect(await a.replace('ses_1', undefined, record('ses_1', 10))).toBe(true);
    expect(await b.replace('ses_1', undefined, record('ses_1', 11))).toBe(false); // a record is there now
    const readByA = await a.get('ses_1');
    const readByB = await b.get('ses_1');
    expect(await b.replace('ses_1', readByB, record('ses_1', 20))).toBe(true);
    expect(await a.replace('ses_1', readByA, record('ses_1', 21))).toBe(false); // a read 10, b wrote 20 since
    expect((await a.get('ses_1'))!.spentMinor).toBe('20');
    expect(await a.all()).toHaveLength(1);
  });

  it('lets two checkers (two seller instances) racing one session accept each sequence once', async () => {
    const prefix = newPrefix();
    const [a, b] = [checkerOn(new RedisVoucherStore({ client: client(), prefix })), checkerOn(new RedisVoucherStore({ client: client(), prefix }))];
    const { grant, voucher } = await session();
    await Promise.all([a.acceptGrant(grant), b.acceptGrant(grant)]);
    const ROUNDS = 40;
    let charged = 0n;
    for (let i = 1; i <= ROUNDS; i++) {
      // two different vouchers of one sequence and amount, one at each instance at once
      const [va, vb] = [voucher(i, String(i * 10), hash(2 * i)), voucher(i, String(i * 10), hash(2 * i + 1))];
      const [da, db] = await Promise.all([a.check(va, { priceMinor: '10', requestHash: va.requestHash }), b.check(vb, { priceMinor: '10', requestHash: vb.requestHash })]);
      const kinds = [da.kind, db.kind].sort();
      expect(kinds, `round ${i}`).toEqual(['accept', 'refuse']);
      const refused = [da, db].find((d) => d.kind === 'refuse')!;
      expect(refused).toMatchObject({ code: 'VOUCHER_STALE', state: { sequence: i, cumulativeMinor: String(i * 10), spentMinor: String(i * 10) } });
      for (const d of [da, db]) if (d.kind === 'accept') charged += BigInt(d.chargedMinor);
    }
    // the same voucher at both at once: one accepts and charges, the other serves it as a retry, charging nothing
    const again = voucher(ROUNDS + 1, String((ROUNDS + 1) * 10), hash(999));
    const both = await Promise.all([a, b].map((c) => c.check(again, { priceMinor: '10', requestHash: again.requestHash })));
    expect(both.map((d) => d.kind).sort()).toEqual(['accept', 'retry']);
    for (const d of both) if (d.kind !== 'refuse') charged += BigInt(d.chargedMinor);

    expect(charged).toBe(BigInt((ROUNDS + 1) * 10));
    expect(await a.claims()).toEqual([{ sessionId: grant.sessionId, voucher: again }]);
    // a claim recorded by one instance is seen by the other; a lower one recorded later changes nothing
    await Promise.all([a.claimed(grant.sessionId, '410'), b.claimed(grant.sessionId, '200')]);
    expect(await b.claims()).toEqual([]);
  });

  it('keeps the spent amount exact under parallel settlements of failed calls at two instances', async () => {
    const prefix = newPrefix();
    const [a, b] = [checkerOn(new RedisVoucherStore({ client: client(), prefix })), checkerOn(new RedisVoucherStore({ client: client(), prefix }))];
    const { grant, paying } = await session();
    await a.acceptGrant(grant);
    const decisions = [];
    for (let i = 1; i <= 20; i++) {
      const v = await paying.voucher('10', hash(i));
      const d = await (i % 2 ? a : b).check(v, { priceMinor: '10', requestHash: v.requestHash });
      expect(d.kind).toBe('accept');
      decisions.push(d as Extract<typeof d, { kind: 'accept' }>);
    }
    // every other call failed: each instance gives its price back at once, none lost to the other's write
    await Promise.all(decisions.map((d, i) => (i % 2 ? a : b).settle(d, { ok: i % 2 === 0, responseHash: hash(0) })));
    expect(await new RedisVoucherStore({ client: clients.at(-1)!, prefix }).get(grant.sessionId)).toMatchObject({ spentMinor: '100', inFlightMinor: '0', voucher: { sequence: 20, cumulativeMinor: '200' } });
  });
});
