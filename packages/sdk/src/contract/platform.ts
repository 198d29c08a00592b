/**
 * The platform's public answers (docs/api/platform.md): liveness and the receipt-signing keys,
 * and the breaker of a wallet for a seller (docs/api/payments.md).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Closed, Id, IgnoredTenantIds, Nullable, StringEnum, Timestamp } from './schemas.js';
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
