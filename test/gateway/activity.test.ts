/**
 * GET /v1/platform/activity: the operator's paid, failed and expired calls per hour or day, with
 * the paid calls' amounts and fees, from real paid calls on a gateway whose clock the test moves;
 * the fees answered are the platform revenue wallet's fee entries, to the unit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/matrix.js';
import { authorizeCall, expectLedgerConsistent, hashOf, ledgerRows, newBuyer, newSeller, paidCall } from '../payments/helpers.js';

const H = 3_600_000;
const DAY = 24 * H;
const start = Date.UTC(2026, 10, 20, 9, 30, 0);
const clock = new ManualClock(start);
let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ clock });
});
afterAll(async () => {
  await t?.close();
});

const activity = async (query: string, apiKey = t.creds.operatorKey) => call(t, 'GET', `/v1/platform/activity${query}`, { apiKey });

describe('GET /v1/platform/activity', () => {
  it('counts paid, failed and expired calls per hour and day with exact amounts and the fees the platform wallet took', async () => {
    const cheap = await newSeller(t, '100');
    const dear = await newSeller(t, '2500');
    const buyer = await newBuyer(t, t.workspace, '100000');
    // 09:30: two paid calls and a failed one
    await paidCall(cheap.client, cheap.capabilityId, buyer);
    await paidCall(dear.client, dear.capabilityId, buyer);
    const failed = await authorizeCall(cheap.client, cheap.capabilityId, buyer);
    await cheap.client.payments.fail({ transactionId: failed.transactionId, reason: 'provider_error', responseHash: hashOf('{}') });
    // 11:10: one paid call; an authorized one left to expire
    clock.advance(100 * 60_000);
    await paidCall(cheap.client, cheap.capabilityId, buyer);
    await authorizeCall(dear.client, dear.capabilityId, buyer);
    // 11:30: the sweeper refunds it
    clock.advance(20 * 60_000);
    await t.gw.services.sweeper.sweepOnce();

    const hourly = await activity('?bucket=hour&from=2026-11-20T09:00:00Z&to=2026-11-20T11:59:00Z');
    expect(hourly.status, JSON.stringify(hourly.body)).toBe(200);
    const fee = (minor: bigint) => (minor * 300n) / 10_000n; // the default 300 bps
    expect(hourly.body).toEqual({
      bucket: 'hour', from: '2026-11-20T09:00:00.000Z', to: '2026-11-20T12:00:00.000Z',
      buckets: [
        { start: '2026-11-20T09:00:00.000Z', end: '2026-11-20T10:00:00.000Z', paid: 2, failed: 1, expired: 0,
          amounts: [{ currency: 'USD', paid: 2, volumeMinor: '2600', feesMinor: String(fee(100n) + fee(2500n)) }] },
        { start: '2026-11-20T10:00:00.000Z', end: '2026-11-20T11:00:00.000Z', paid: 0, failed: 0, expired: 0, amounts: [] },
        { start: '2026-11-20T11:00:00.000Z', end: '2026-11-20T12:00:00.000Z', paid: 1, failed: 0, expired: 1,
          amounts: [{ currency: 'USD', paid: 1, volumeMinor: '100', feesMinor: String(fee(100n)) }] },
      ],
    });
    // the fees answered are what the platform revenue wallet's ledger holds
    const platformFees = ledgerRows(t).filter((e) => e.type === 'fee' && e.wallet_id === 'wal_platform_revenue').reduce((s, e) => s + e.amount_minor, 0n);
    const answered = (hourly.body.buckets as { amounts: { feesMinor: string }[] }[]).flatMap((b) => b.amounts).reduce((s, a) => s + BigInt(a.feesMinor), 0n);
    expect(answered).toBe(platformFees);
    await expectLedgerConsistent(t);

    // by day (the default), the last 14 days ending with today: everything in the last bucket (through the SDK's client)
    const daily = await t.operator.platform.activity();
    const days = daily.buckets;
    expect(days).toHaveLength(14);
    expect(daily).toMatchObject({ bucket: 'day', from: '2026-11-07T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' });
    expect(days.at(-1)).toMatchObject({ start: '2026-11-20T00:00:00.000Z', paid: 3, failed: 1, expired: 1 });
    expect(days.slice(0, -1).every((d) => d.paid + d.failed + d.expired === 0)).toBe(true);

    // a day later: hourly by default is the last 24 hours, from 12:00 the day before, after every call of this test
    clock.advance(DAY);
    const lastDay = await t.operator.platform.activity({ bucket: 'hour' });
    expect(lastDay).toMatchObject({ from: '2026-11-20T12:00:00.000Z', to: '2026-11-21T12:00:00.000Z' });
    expect(lastDay.buckets).toHaveLength(24);
    expect(lastDay.buckets.reduce((s, b) => s + b.paid, 0)).toBe(0);
  });

  it('refuses a range that is empty, too long or not a time with 400 VALIDATION_FAILED naming the field', async () => {
    const cases: [string, string][] = [
      ['?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z', 'from'],
      ['?bucket=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
      ['?from=2026-02-30T00:00:00Z', 'from'],
      ['?to=yesterday', 'to'],
      ['?bucket=week', 'bucket'],
    ];
    for (const [query, field] of cases) {
      const res = await activity(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_FAILED');
      expect(res.body.error?.message, query).toContain(field);
    }
    // 744 hours is the most an answer holds
    expect((await activity('?bucket=hour&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z')).status).toBe(200);
  });

  it("is the operator's: a workspace or provider key is refused with 403 FORBIDDEN naming the scope", async () => {
    for (const apiKey of [t.creds.workspace.apiKey, t.creds.provider.apiKey]) {
      const res = await activity('', apiKey);
      expect(res.status).toBe(403);
      expect(res.body.error?.message).toContain('operator');
    }
  });
});
