/**
 * The payment protocol's own shapes (docs/protocol.md): the platform-signed price challenge, the
 * buyer's payment proof that embeds it, and the authorization (the hold) the gateway answers. The
 * gateway issues and checks them, the SDK signs and reads them, the CLI shows them: one definition.
 * The receipt is in resources.ts (it is also an API resource).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, Open, StringEnum, Timestamp } from './schemas.js';
import { Receipt } from './resources.js';

/** A challenge before the platform signs it. */
export const UnsignedPriceChallenge = Closed({
  capabilityId: Id('cap'),
  providerId: Type.String({ description: 'the seller (its tenant id)' }),
  amountMinor: Amount(),
  currency: Type.String({ description: 'ISO 4217 code, e.g. USD', examples: ['USD'] }),
  nonce: Type.String({ description: '32 random bytes, base64url: a challenge pays for one call' }),
  expiresAt: Timestamp({ description: 'when the challenge stops being accepted' }),
  payTo: Type.String({ description: "the seller's settlement wallet" }),
}, { description: 'a price challenge before the platform signs it' });
export type UnsignedPriceChallenge = Static<typeof UnsignedPriceChallenge>;

/** A platform-signed price quote; verify it against GET /v1/platform/receipt-keys/:signingKeyId. */
export const PriceChallenge = Closed({
  ...UnsignedPriceChallenge.properties,
  signature: Type.String({ description: "ed25519 signature (base64) of the challenge's canonical JSON without signature and signingKeyId" }),
  signingKeyId: Type.String({ description: 'the platform signing key that signed it' }),
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
