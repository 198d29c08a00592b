/**
 * The payment protocol's own shapes (docs/protocol.md): the platform-signed price challenge, the
 * buyer's payment proof that embeds it, and the authorization (the hold) the gateway answers. The
 * gateway issues and checks them, the SDK signs and reads them, the CLI shows them: one definition.
 * The receipt is in resources.ts (it is also an API resource).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, IgnoredTenantIds, Open, StringEnum, Timestamp } from './schemas.js';
import { Metering, Receipt, UnitCount } from './resources.js';

/** A challenge before the platform signs it. */
export const UnsignedPriceChallenge = Closed({
  capabilityId: Id('cap'),
  providerId: Type.String({ minLength: 1, maxLength: 200, description: 'the seller (its tenant id)' }),
  amountMinor: Amount(),
  currency: Type.String({ description: 'ISO 4217 code, e.g. USD', examples: ['USD'] }),
  nonce: Type.String({ minLength: 1, maxLength: 100, description: '32 random bytes, base64url: a challenge pays for one call' }),
  expiresAt: Timestamp({ description: 'when the challenge stops being accepted' }),
  payTo: Type.String({ minLength: 1, maxLength: 200, description: "the seller's settlement wallet" }),
  metering: Type.Optional(Metering),
}, { description: 'a price challenge before the platform signs it; a metered capability\'s carries its metering, and amountMinor is then the most the call can cost (docs/protocol.md § Metered prices)' });
export type UnsignedPriceChallenge = Static<typeof UnsignedPriceChallenge>;

/** A platform-signed price quote; verify it against GET /v1/platform/receipt-keys/:signingKeyId. */
export const PriceChallenge = Closed({
  ...UnsignedPriceChallenge.properties,
  signature: Type.String({ description: "ed25519 signature (base64) of the challenge's canonical JSON without signature and signingKeyId" }),
  signingKeyId: Type.String({ minLength: 1, maxLength: 200, description: 'the platform signing key that signed it' }),
}, { description: 'a signed price challenge: what the buyer signs to pay (docs/api/payments.md)' });
export type PriceChallenge = Static<typeof PriceChallenge>;

/** Signed by the agent's key over the canonical proof without `signature`; embeds the whole challenge. */
export const PaymentProof = Open({
  version: Type.Literal(1),
  challenge: PriceChallenge,
  walletId: Id('wal'),
  signedAt: Timestamp(),
  signature: Type.String({ description: "ed25519 signature (base64) by the agent's key of the proof's canonical JSON without signature" }),
}, { description: 'the x-payment header value, decoded (base64url of this JSON)' });
export type PaymentProof = Static<typeof PaymentProof>;

/** The hold placed for a paid call; `expiresAt` is when the sweeper refunds it if nothing resolves it. */
export const Authorization = Closed({
  transactionId: Id('txn'),
  status: StringEnum(['authorized'] as const),
  walletId: Id('wal'),
  capabilityId: Id('cap'),
  amountMinor: Amount(),
  currency: Type.String({ description: 'ISO 4217 code, e.g. USD', examples: ['USD'] }),
  expiresAt: Timestamp({ description: 'when the hold is refunded unless completed or failed first' }),
}, { description: 'the authorized transaction: the amount is held until complete or fail (docs/api/payments.md)' });
export type Authorization = Static<typeof Authorization>;

/**
 * What authorize answers, instead of an Authorization, for a retry with an idempotency key whose
 * first call succeeded: nothing held or charged; the first receipt and the first answer (body in
 * base64), or null when the seller did not keep it (docs/protocol.md § Idempotent retries).
 */
export const Replay = Closed({
  transactionId: Id('txn'),
  status: StringEnum(['replayed'] as const),
  walletId: Id('wal'),
  capabilityId: Id('cap'),
  amountMinor: Amount(),
  currency: Type.String(),
  receipt: Receipt,
  response: Type.Union([Closed({ status: Type.Integer({ minimum: 100, maximum: 599 }), contentType: Type.Union([Type.String(), Type.Null()]), body: Type.String({ description: 'base64' }) }), Type.Null()]),
}, { description: 'a retry with an idempotency key whose first call succeeded: its receipt and answer, nothing held (docs/protocol.md § Idempotent retries)' });
export type Replay = Static<typeof Replay>;

// ---- the seller's requests (docs/api/payments.md) ----

/** "sha256:" and 64 lowercase hex digits: what a receipt says the seller answered. */
export const ResponseHash = (opts: { description?: string } = {}) => Type.String({
  pattern: '^sha256:[0-9a-f]{64}$',
  description: opts.description ?? '"sha256:" and the lowercase hex SHA-256 of the exact response body bytes',
  examples: [`sha256:${'0'.repeat(64)}`],
});

export const ChallengeBody = Type.Object({ capabilityId: Id('cap'), ...IgnoredTenantIds }, { additionalProperties: false });
export type ChallengeBody = Static<typeof ChallengeBody>;

/** The longest x-payment header value authorize takes. */
export const MAX_PAYMENT_HEADER_CHARS = 16_384;

export const AuthorizeBody = Type.Object({
  capabilityId: Id('cap'),
  payment: Type.Union([
    Type.String({ minLength: 1, maxLength: MAX_PAYMENT_HEADER_CHARS, description: 'the x-payment header value as received' }),
    Type.Object({}, { additionalProperties: true, description: 'the payment proof object' }),
  ]),
  idempotencyKey: Type.Optional(Type.String({
    minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$',
    description: "optional: the buyer's idempotency key (its Idempotency-Key header, or the x402 payment-identifier id); with requestHash. A retry of a call that succeeded answers status \"replayed\" with the first receipt and answer, and charges nothing (docs/protocol.md § Idempotent retries)",
  })),
  requestHash: Type.Optional(ResponseHash({
    description: "optional, with idempotencyKey: the seller's fingerprint of the request (method, path and query, body; never the proof), \"sha256:\" and 64 lowercase hex digits",
  })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type AuthorizeBody = Static<typeof AuthorizeBody>;

export const KeptResponse = Type.Object({
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  contentType: Type.Optional(Type.String({ maxLength: 256 })),
  body: Type.String({ maxLength: 349_528, description: 'the exact response bytes (at most 256 KiB), base64 (standard, padded); they must hash to responseHash' }),
}, { additionalProperties: false, description: 'optional: the answer, kept for replays when the call was authorized with an idempotency key (up to 256 KiB of body; ignored otherwise)' });

export const CompleteBody = Type.Object({
  transactionId: Id('txn'),
  responseHash: ResponseHash(),
  response: Type.Optional(KeptResponse),
  units: Type.Optional(UnitCount({
    description: 'a metered capability only: the units the call used; the gateway charges units × unitPriceMinor (at most what was authorized, else USAGE_ABOVE_MAXIMUM) and releases the rest to the buyer. Left out: the whole authorized amount is charged (docs/protocol.md § Metered prices)',
  })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type CompleteBody = Static<typeof CompleteBody>;

export const FailReason = StringEnum(['client_error', 'provider_error'] as const);

export const FailBody = Type.Object({
  transactionId: Id('txn'),
  reason: FailReason,
  responseHash: Type.Optional(ResponseHash()),
  statusCode: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type FailBody = Static<typeof FailBody>;

/** The most operations one batch carries. */
export const MAX_BATCH_OPERATIONS = 100;

export const BatchBody = Type.Object({
  operations: Type.Array(Type.Object({ op: StringEnum(['challenge', 'authorize', 'complete', 'fail'] as const) }, { additionalProperties: true }), {
    minItems: 1,
    maxItems: MAX_BATCH_OPERATIONS,
    description: 'independent operations, each the body of its own route plus `op`; each is validated and answered on its own',
  }),
}, { additionalProperties: false });
export type BatchBody = Static<typeof BatchBody>;

/** What the SDK's `payments.authorize` takes: the body, with the proof typed. */
export type AuthorizeInput = Omit<AuthorizeBody, 'payment' | keyof typeof IgnoredTenantIds> & { payment: PaymentProof | string };
export type CompleteInput = Omit<CompleteBody, keyof typeof IgnoredTenantIds>;
export type FailInput = Omit<FailBody, keyof typeof IgnoredTenantIds>;
