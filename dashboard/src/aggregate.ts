/**
 * What the page computes from the API's lists, since the API has no aggregate endpoints:
 * spend per day and per capability from a workspace's receipts, calls, revenue and failure
 * rate from a provider's, and transactions from wallet ledgers. Sums are bigint minor units.
 */
import type { Activity, ActivityBucketSize, LedgerEntry, Receipt } from './types.js';

export interface Bucket {
  label: string;
  value: bigint;
}

/** The UTC day of an ISO time, `YYYY-MM-DD`. */
export const dayOf = (iso: string): string => iso.slice(0, 10);

/** The `days` UTC days ending with the day of `nowIso`, oldest first. */
export function lastDays(nowIso: string, days: number): string[] {
  const end = Date.parse(dayOf(nowIso) + 'T00:00:00Z');
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** Only successful receipts are spend: a failed paid call is not charged (docs/protocol.md). */
const charged = (r: Receipt) => r.status === 'success';

/** Spend per UTC day over the given days, in one currency. */
export function spendPerDay(receipts: readonly Receipt[], days: readonly string[], currency: string): Bucket[] {
  const sums = new Map(days.map((d) => [d, 0n]));
  for (const r of receipts) {
    if (!charged(r) || r.amount.currency !== currency) continue;
    const d = dayOf(r.timestamp);
    if (sums.has(d)) sums.set(d, sums.get(d)! + BigInt(r.amount.amountMinor));
  }
  return days.map((d) => ({ label: d, value: sums.get(d)! }));
}

/** Spend per capability, largest first, in one currency. */
export function spendPerCapability(receipts: readonly Receipt[], currency: string): Bucket[] {
  const sums = new Map<string, bigint>();
  for (const r of receipts) {
    if (!charged(r) || r.amount.currency !== currency) continue;
    sums.set(r.capabilityId, (sums.get(r.capabilityId) ?? 0n) + BigInt(r.amount.amountMinor));
  }
  return [...sums].map(([label, value]) => ({ label, value })).sort((a, b) => (b.value > a.value ? 1 : b.value < a.value ? -1 : a.label.localeCompare(b.label)));
}

/** The currencies the receipts are in, most used first (USD if none). */
export function currenciesOf(receipts: readonly Receipt[]): string[] {
  const counts = new Map<string, number>();
  for (const r of receipts) counts.set(r.amount.currency, (counts.get(r.amount.currency) ?? 0) + 1);
  const list = [...counts].sort((a, b) => b[1] - a[1]).map(([c]) => c);
  return list.length ? list : ['USD'];
}

export interface CapabilityStats {
  capabilityId: string;
  calls: number;
  failures: number;
  /** successful calls' amounts, per currency */
  revenue: Map<string, bigint>;
}

/** Calls, failures and gross revenue (the amounts buyers paid) per capability, from a provider's receipts. */
export function capabilityStats(receipts: readonly Receipt[]): Map<string, CapabilityStats> {
  const out = new Map<string, CapabilityStats>();
  for (const r of receipts) {
    let s = out.get(r.capabilityId);
    if (!s) out.set(r.capabilityId, (s = { capabilityId: r.capabilityId, calls: 0, failures: 0, revenue: new Map() }));
    s.calls += 1;
    if (r.status === 'failed') s.failures += 1;
    else s.revenue.set(r.amount.currency, (s.revenue.get(r.amount.currency) ?? 0n) + BigInt(r.amount.amountMinor));
  }
  return out;
}

/** Calls and failures per UTC day over the given days. */
export function callsPerDay(receipts: readonly Receipt[], days: readonly string[]): { day: string; calls: number; failures: number }[] {
  const m = new Map(days.map((d) => [d, { day: d, calls: 0, failures: 0 }]));
  for (const r of receipts) {
    const b = m.get(dayOf(r.timestamp));
    if (!b) continue;
    b.calls += 1;
    if (r.status === 'failed') b.failures += 1;
  }
  return days.map((d) => m.get(d)!);
}

/** A failure rate as a percentage with one decimal, by integer arithmetic. */
export function percent(part: number, whole: number): string {
  if (whole === 0) return '-';
  const tenths = Math.round((part * 1000) / whole);
  return `${Math.floor(tenths / 10)}.${tenths % 10}%`;
}

export interface Transaction {
  id: string;
  /** the newest entry's time */
  at: string;
  entries: LedgerEntry[];
}

/** Ledger entries grouped by the transaction they belong to, newest first; entries of no transaction are left out. */
export function transactionsOf(entries: readonly LedgerEntry[]): Transaction[] {
  const m = new Map<string, LedgerEntry[]>();
  for (const e of entries) {
    if (!e.transactionId) continue;
    const list = m.get(e.transactionId) ?? [];
    list.push(e);
    m.set(e.transactionId, list);
  }
  return [...m]
    .map(([id, list]) => {
      const sorted = [...list].sort((a, b) => (a.walletId === b.walletId ? a.seq - b.seq : a.createdAt.localeCompare(b.createdAt)));
      return { id, at: sorted.reduce((t, e) => (e.createdAt > t ? e.createdAt : t), ''), entries: sorted };
    })
    .sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));
}

export interface FeeDay {
  day: string;
  /** fee entries that day: paid calls (and session claims) that left the platform a fee */
  payments: number;
  /** the fees, per currency */
  fees: Map<string, bigint>;
}

/**
 * The platform's fee income per UTC day over the given days, from the platform revenue
 * wallet's ledger (`wal_platform_revenue`, which the operator key reads): its `fee` entries,
 * one per paid call or session claim that left a fee (a fee of 0 writes no entry).
 */
export function feesPerDay(entries: readonly LedgerEntry[], days: readonly string[]): FeeDay[] {
  const m = new Map(days.map((d) => [d, { day: d, payments: 0, fees: new Map<string, bigint>() }]));
  for (const e of entries) {
    if (e.type !== 'fee') continue;
    const b = m.get(dayOf(e.createdAt));
    if (!b) continue;
    b.payments += 1;
    b.fees.set(e.currency, (b.fees.get(e.currency) ?? 0n) + BigInt(e.amountMinor));
  }
  return days.map((d) => m.get(d)!);
}

/** The currencies of a ledger's entries (USD if none). */
export function ledgerCurrencies(entries: readonly LedgerEntry[]): string[] {
  const set = new Set(entries.map((e) => e.currency));
  return set.size ? [...set].sort() : ['USD'];
}

/** The label of a bucket of GET /v1/platform/activity: its UTC day, or its day and hour. */
export const activityLabel = (start: string, bucket: ActivityBucketSize): string => (bucket === 'day' ? start.slice(0, 10) : `${start.slice(0, 10)} ${start.slice(11, 13)}:00`);

/** A bucket label as it reads under its bar: `MM-DD`, or `HH:00` by the hour. */
export const activityTick = (label: string, bucket: ActivityBucketSize): string => (bucket === 'day' ? label.slice(5) : label.slice(11));

/** The currencies of an activity's paid calls (USD if none), sorted. */
export function activityCurrencies(a: Activity): string[] {
  const set = new Set(a.buckets.flatMap((b) => b.amounts.map((x) => x.currency)));
  return set.size ? [...set].sort() : ['USD'];
}

/**
 * What the operator's plots show, from the gateway's counts (the API sums, the page only picks):
 * paid and failed calls per bucket (failed counts the seller's failures and the expired holds),
 * and per currency the volume and fees.
 */
export function activitySeries(a: Activity): {
  paid: Bucket[];
  failed: Bucket[];
  volume: (currency: string) => Bucket[];
  fees: (currency: string) => Bucket[];
} {
  const label = (start: string) => activityLabel(start, a.bucket);
  const amount = (currency: string, field: 'volumeMinor' | 'feesMinor') =>
    a.buckets.map((b) => ({ label: label(b.start), value: BigInt(b.amounts.find((x) => x.currency === currency)?.[field] ?? '0') }));
  return {
    paid: a.buckets.map((b) => ({ label: label(b.start), value: BigInt(b.paid) })),
    failed: a.buckets.map((b) => ({ label: label(b.start), value: BigInt(b.failed + b.expired) })),
    volume: (c) => amount(c, 'volumeMinor'),
    fees: (c) => amount(c, 'feesMinor'),
  };
}
