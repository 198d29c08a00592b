/**
 * The platform's public answers (docs/api/platform.md): liveness and the receipt-signing keys,
 * the breaker of a wallet for a seller (docs/api/payments.md), and the operator's activity over time.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, IgnoredTenantIds, Nullable, StringEnum, Timestamp } from './schemas.js';
import { Receipt } from './resources.js';

export const Health = Closed({
  status: Type.Literal('ok'),
  instance: Type.String({ description: 'the signing key id this instance uses (the same on every instance of a fleet; the contract fixes this field)' }),
  instanceId: Type.String({ description: 'this gateway process, new at each start (`ins_…`): which instance of a fleet answered' }),
  time: Timestamp(),
});
export type Health = Static<typeof Health>;

/** GET /health/ready: the instance can serve (its database answers); 503 SERVICE_UNAVAILABLE when not. */
export const HealthReady = Closed({
  status: Type.Literal('ready'),
  instanceId: Type.String({ description: 'this gateway process (as in GET /health)' }),
  database: Type.Literal('ok', { description: 'the database answered a SELECT 1' }),
  time: Timestamp(),
});
export type HealthReady = Static<typeof HealthReady>;

export const PlatformPublicKey = Closed({ publicKeyPem: Type.String(), signingKeyId: Type.String() });
export type PlatformPublicKey = Static<typeof PlatformPublicKey>;

export const ReceiptKey = Closed({
  keyId: Type.String(),
  publicKeyPem: Type.String(),
  status: StringEnum(['current', 'retired'] as const),
  createdAt: Timestamp(),
  retiredAt: Nullable(Timestamp()),
});
export type ReceiptKey = Static<typeof ReceiptKey>;

/** `nextCursor` is present only when the page came back full. */
export const ReceiptPage = Closed({
  receipts: Type.Array(Receipt),
  nextCursor: Type.Optional(Type.String({ description: 'pass as after= for the next page' })),
});
export type ReceiptPage = Static<typeof ReceiptPage>;

export const RateBody = Closed({
  transactionId: Id('txn'),
  rating: Type.Integer({ minimum: 1, maximum: 5 }),
  raterWalletId: Id('wal'),
  raterAgentId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  ...IgnoredTenantIds,
});
export type RateInput = Omit<Static<typeof RateBody>, keyof typeof IgnoredTenantIds>;

/** The seller-for-wallet breaker: consecutive provider errors pause the seller for the wallet. */
export const BreakerState = Closed({ walletId: Id('wal'), providerId: Id('prv'), paused: Type.Boolean(), consecutiveFailures: Type.Integer({ minimum: 0 }) });
export type BreakerState = Static<typeof BreakerState>;

/** providerId is this route's own field (the seller to resume); workspaceId is the key's and ignored. */
export const ResumeProviderBody = Closed({ providerId: Id('prv'), workspaceId: IgnoredTenantIds.workspaceId });
/** What resume answers: the seller is no longer paused for the wallet. */
export const BreakerResumed = Closed({ ok: Type.Literal(true), paused: Type.Literal(false) });

// ---- the operator's activity over time (GET /v1/platform/activity) ----

/** The sizes of a bucket of GET /v1/platform/activity, in milliseconds (UTC hours and days). */
export const ACTIVITY_BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;
export type ActivityBucketSize = keyof typeof ACTIVITY_BUCKET_MS;
/** The most buckets one answer holds: 31 days of hours, or about two years of days. */
export const ACTIVITY_MAX_BUCKETS = 744;
/** Buckets answered when `from` is not given: the last 24 hours, or the last 14 days. */
export const ACTIVITY_DEFAULT_BUCKETS: Record<ActivityBucketSize, number> = { hour: 24, day: 14 };

export const ActivityQuery = Closed({
  bucket: Type.Optional(StringEnum(['hour', 'day'] as const, { description: 'the size of a bucket (UTC): hour or day (default day)' })),
  from: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 time: the first bucket is the one holding it (default: 24 hours or 14 days before `to`)' })),
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `ISO 8601 time, exclusive: the last bucket ends at it or just after it (default: the end of the current bucket); at most ${ACTIVITY_MAX_BUCKETS} buckets` })),
  ...IgnoredTenantIds,
});

/** The money of one currency in a bucket: paid calls' amounts (what buyers paid) and the platform's fees on them. */
export const ActivityAmount = Closed({
  currency: Type.String(),
  paid: Type.Integer({ minimum: 0, description: 'paid calls in this currency' }),
  volumeMinor: Amount({ description: 'the amounts of the paid calls (gross)' }),
  feesMinor: Amount({ description: 'the platform fees taken on them' }),
});
export type ActivityAmount = Static<typeof ActivityAmount>;

/** One bucket: the paid calls resolved in [start, end), by outcome, and their money per currency. */
export const ActivityBucket = Closed({
  start: Timestamp(),
  end: Timestamp({ description: 'exclusive' }),
  paid: Type.Integer({ minimum: 0, description: 'calls that succeeded: the buyer charged, the seller paid' }),
  failed: Type.Integer({ minimum: 0, description: 'calls the seller reported failed: the buyer refunded' }),
  expired: Type.Integer({ minimum: 0, description: 'calls resolved by neither side in time: the hold expired and was refunded' }),
  amounts: Type.Array(ActivityAmount, { description: 'per currency with a paid call in the bucket, by currency code' }),
});
export type ActivityBucket = Static<typeof ActivityBucket>;

/** GET /v1/platform/activity: every bucket of the range, oldest first, empty ones included. */
export const Activity = Closed({
  bucket: StringEnum(['hour', 'day'] as const),
  from: Timestamp({ description: 'the start of the first bucket' }),
  to: Timestamp({ description: 'the end of the last bucket (exclusive)' }),
  buckets: Type.Array(ActivityBucket),
});
export type Activity = Static<typeof Activity>;
