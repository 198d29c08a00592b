/**
 * The operator's activity over time (GET /v1/platform/activity): the paid calls of the whole
 * platform resolved per UTC hour or day, by outcome (paid, failed, expired), with the money of
 * the paid ones per currency (what buyers paid, the fees taken). The database counts and sums
 * (TransactionRepo.activity); this fills in the range, empty buckets included, oldest first.
 * Paid calls only: session claims (docs/protocol.md § Payment sessions) are not transactions.
 */
import { ACTIVITY_BUCKET_MS, ACTIVITY_DEFAULT_BUCKETS, ACTIVITY_MAX_BUCKETS, type Activity, type ActivityBucket, type ActivityBucketSize } from 'agentpay-sdk/contract';
import { validationError } from '../../core/errors.js';
import { iso, parseIsoTime } from '../../core/clock.js';
import type { DomainContext } from '../platform/context.js';

export interface ActivityInput {
  bucket?: ActivityBucketSize;
  from?: string;
  to?: string;
}

const floorTo = (ms: number, size: number) => Math.floor(ms / size) * size;
const ceilTo = (ms: number, size: number) => Math.ceil(ms / size) * size;

function time(field: 'from' | 'to', text: string): number {
  const ms = parseIsoTime(text);
  if (ms === undefined) throw validationError(field, 'must be an ISO 8601 time that exists, like 2026-11-20T00:00:00Z', { location: 'querystring' });
  return ms;
}

/** The range the query asks for, on bucket boundaries: [from, to) with `to` after `from`, at most ACTIVITY_MAX_BUCKETS buckets. */
export function activityRange(q: ActivityInput, now: number): { bucket: ActivityBucketSize; size: number; from: number; to: number } {
  const bucket = q.bucket ?? 'day';
  const size = ACTIVITY_BUCKET_MS[bucket];
  const to = q.to === undefined ? floorTo(now, size) + size : ceilTo(time('to', q.to), size);
  const from = q.from === undefined ? to - ACTIVITY_DEFAULT_BUCKETS[bucket] * size : floorTo(time('from', q.from), size);
  if (from >= to) throw validationError('from', `must be before to (${iso(to)}, the end of its ${bucket})`, { location: 'querystring' });
  const count = (to - from) / size;
  if (count > ACTIVITY_MAX_BUCKETS) {
    throw validationError('from', `the range holds ${count} ${bucket}s, more than the ${ACTIVITY_MAX_BUCKETS} an answer may hold; narrow it or use bucket=day`, { location: 'querystring', max: ACTIVITY_MAX_BUCKETS });
  }
  return { bucket, size, from, to };
}

export async function paymentActivity(ctx: Pick<DomainContext, 'store' | 'clock'>, q: ActivityInput): Promise<Activity> {
  const { bucket, size, from, to } = activityRange(q, ctx.clock.now());
  const rows = await ctx.store.read((r) => r.transactions.activity({ from, to, bucketMs: size }));
  const buckets: (ActivityBucket & { sums: Map<string, { paid: number; volume: bigint; fees: bigint }> })[] = [];
  for (let start = from; start < to; start += size) {
    buckets.push({ start: iso(start), end: iso(start + size), paid: 0, failed: 0, expired: 0, amounts: [], sums: new Map() });
  }
  for (const row of rows) {
    const b = buckets[row.bucket];
    if (!b) continue;
    if (row.status === 'failed') b.failed += row.count;
    else if (row.status === 'expired') b.expired += row.count;
    else if (row.status === 'succeeded') {
      b.paid += row.count;
      const s = b.sums.get(row.currency) ?? { paid: 0, volume: 0n, fees: 0n };
      s.paid += row.count;
      s.volume += row.amountMinor;
      s.fees += row.feeMinor;
      b.sums.set(row.currency, s);
    }
  }
  return {
    bucket,
    from: iso(from),
    to: iso(to),
    buckets: buckets.map(({ sums, ...b }) => ({
      ...b,
      amounts: [...sums].sort(([a], [c]) => (a < c ? -1 : a > c ? 1 : 0)).map(([currency, s]) => ({ currency, paid: s.paid, volumeMinor: s.volume.toString(), feesMinor: s.fees.toString() })),
    })),
  };
}
