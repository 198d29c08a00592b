/**
 * The figures the dashboard computes from the API's lists (dashboard/src/aggregate.ts): exact
 * bigint sums per day and per capability, failures, and transactions from ledger entries.
 */
import { describe, expect, it } from 'vitest';
import { activityCurrencies, activitySeries, activityTick, callsPerDay, capabilityStats, currenciesOf, feesPerDay, lastDays, ledgerCurrencies, percent, spendPerCapability, spendPerDay, transactionsOf } from '../../dashboard/src/aggregate.js';
import type { LedgerEntry, Receipt } from '../../packages/sdk/src/types.js';

const receipt = (over: Partial<Receipt> & { amountMinor?: string; currency?: string }): Receipt => ({
  id: `rcp_${Math.random().toString(36).slice(2)}`,
  transactionId: 'txn_1',
  providerId: 'prv_1',
  consumerId: 'wal_1',
  capabilityId: 'cap_a',
  amount: { amountMinor: over.amountMinor ?? '100', currency: over.currency ?? 'USD' },
  responseHash: null,
  status: 'success',
  timestamp: '2026-11-27T10:00:00.000Z',
  signature: '',
  signingKeyId: 'sk_1',
  ...over,
});

describe('spend', () => {
  const receipts = [
    receipt({ amountMinor: '999999999999999' }),
    receipt({ amountMinor: '1', capabilityId: 'cap_b' }),
    receipt({ amountMinor: '50', timestamp: '2026-11-26T23:59:59.999Z' }),
    receipt({ amountMinor: '7', status: 'failed' }),
    receipt({ amountMinor: '5', currency: 'USDC' }),
    receipt({ amountMinor: '3', timestamp: '2026-11-01T00:00:00.000Z' }),
  ];

  it('sums successful receipts per UTC day over the days asked, exactly', () => {
    const days = lastDays('2026-11-27T18:00:00.000Z', 3);
    expect(days).toEqual(['2026-11-25', '2026-11-26', '2026-11-27']);
    expect(spendPerDay(receipts, days, 'USD')).toEqual([
      { label: '2026-11-25', value: 0n },
      { label: '2026-11-26', value: 50n },
      { label: '2026-11-27', value: 1_000_000_000_000_000n },
    ]);
    expect(spendPerDay(receipts, days, 'USDC').map((b) => b.value)).toEqual([0n, 0n, 5n]);
  });

  it('sums per capability, largest first, failed receipts left out', () => {
    expect(spendPerCapability(receipts, 'USD')).toEqual([
      { label: 'cap_a', value: 999_999_999_999_999n + 50n + 3n },
      { label: 'cap_b', value: 1n },
    ]);
    expect(currenciesOf(receipts)).toEqual(['USD', 'USDC']);
    expect(currenciesOf([])).toEqual(['USD']);
  });
});

describe('a provider\'s figures', () => {
  it('counts calls, failures and gross revenue per capability and per day', () => {
    const rs = [receipt({}), receipt({ status: 'failed' }), receipt({ capabilityId: 'cap_b', amountMinor: '1' }), receipt({ status: 'failed', timestamp: '2026-11-26T01:00:00.000Z' })];
    const stats = capabilityStats(rs);
    expect(stats.get('cap_a')).toEqual({ capabilityId: 'cap_a', calls: 3, failures: 2, revenue: new Map([['USD', 100n]]) });
    expect(stats.get('cap_b')?.revenue.get('USD')).toBe(1n);
    expect(callsPerDay(rs, ['2026-11-26', '2026-11-27'])).toEqual([
      { day: '2026-11-26', calls: 1, failures: 1 },
      { day: '2026-11-27', calls: 3, failures: 1 },
    ]);
    expect([percent(2, 3), percent(0, 5), percent(1, 1), percent(0, 0), percent(1, 8)]).toEqual(['66.7%', '0.0%', '100.0%', '-', '12.5%']);
  });
});

describe('transactions', () => {
  const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
    id: `led_${Math.random().toString(36).slice(2)}`, walletId: 'wal_1', seq: 1, type: 'hold', amountMinor: '0', holdMinor: '100',
    balanceAfterMinor: '1000', heldAfterMinor: '100', currency: 'USD', transactionId: 'txn_1', reference: null, memo: null,
    createdAt: '2026-11-27T10:00:00.000Z', ...over,
  });

  it('groups ledger entries by transaction, newest first, and leaves out entries of none', () => {
    const list = transactionsOf([
      entry({ seq: 3, type: 'capture', transactionId: 'txn_1', createdAt: '2026-11-27T10:00:01.000Z' }),
      entry({ seq: 2, transactionId: 'txn_1' }),
      entry({ seq: 1, type: 'fund', transactionId: null }),
      entry({ seq: 4, transactionId: 'txn_2', createdAt: '2026-11-27T11:00:00.000Z' }),
    ]);
    expect(list.map((t) => t.id)).toEqual(['txn_2', 'txn_1']);
    expect(list[1]!.entries.map((e) => e.seq)).toEqual([2, 3]);
    expect(list[1]!.at).toBe('2026-11-27T10:00:01.000Z');
  });

  it("sums the platform's fee entries per UTC day, exactly, and counts the paid calls that left one", () => {
    const fees = feesPerDay(
      [
        entry({ type: 'fee', amountMinor: '999999999999999', walletId: 'wal_platform_revenue', createdAt: '2026-11-27T00:00:00.000Z' }),
        entry({ type: 'fee', amountMinor: '3', walletId: 'wal_platform_revenue', createdAt: '2026-11-27T23:59:59.999Z' }),
        entry({ type: 'fee', amountMinor: '2', currency: 'EUR', createdAt: '2026-11-26T12:00:00.000Z' }),
        entry({ type: 'payout', amountMinor: '-500', createdAt: '2026-11-27T12:00:00.000Z' }),
        entry({ type: 'fee', amountMinor: '7', createdAt: '2026-11-20T12:00:00.000Z' }),
      ],
      ['2026-11-26', '2026-11-27'],
    );
    expect(fees.map((d) => [d.day, d.payments, Object.fromEntries(d.fees)])).toEqual([
      ['2026-11-26', 1, { EUR: 2n }],
      ['2026-11-27', 2, { USD: 1000000000000002n }],
    ]);
    expect(ledgerCurrencies([entry({ currency: 'USD' }), entry({ currency: 'EUR' })])).toEqual(['EUR', 'USD']);
    expect(ledgerCurrencies([])).toEqual(['USD']);
  });

  it("picks the operator's activity series from the gateway's counts: paid, failed with expired, volume and fees per currency, exact", () => {
    const bucket = (start: string, over: Record<string, unknown> = {}) => ({ start, end: start, paid: 0, failed: 0, expired: 0, amounts: [], ...over });
    const a = {
      bucket: 'hour' as const, from: '2026-11-27T09:00:00.000Z', to: '2026-11-27T11:00:00.000Z',
      buckets: [
        bucket('2026-11-27T09:00:00.000Z', { paid: 3, failed: 1, expired: 2, amounts: [
          { currency: 'EUR', paid: 1, volumeMinor: '5', feesMinor: '0' },
          { currency: 'USD', paid: 2, volumeMinor: '9007199254740993', feesMinor: '270215977642229' },
        ] }),
        bucket('2026-11-27T10:00:00.000Z'),
      ],
    };
    const s = activitySeries(a);
    expect(s.paid).toEqual([{ label: '2026-11-27 09:00', value: 3n }, { label: '2026-11-27 10:00', value: 0n }]);
    expect(s.failed.map((b) => b.value)).toEqual([3n, 0n]);
    expect(s.volume('USD').map((b) => b.value)).toEqual([9007199254740993n, 0n]);
    expect(s.fees('USD').map((b) => b.value)).toEqual([270215977642229n, 0n]);
    expect(s.volume('EUR').map((b) => b.value)).toEqual([5n, 0n]);
    expect(activityCurrencies(a)).toEqual(['EUR', 'USD']);
    expect(activityCurrencies({ ...a, buckets: [bucket('2026-11-27T09:00:00.000Z')] })).toEqual(['USD']);
    expect(activityTick('2026-11-27 09:00', 'hour')).toBe('09:00');
    expect(activitySeries({ ...a, bucket: 'day' }).paid[0]!.label).toBe('2026-11-27');
    expect(activityTick('2026-11-27', 'day')).toBe('11-27');
  });
});
