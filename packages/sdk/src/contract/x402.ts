/**
 * The other dialects' payment shapes, as they travel (docs/protocol.md, "Other dialects"): x402 v2
 * (`PAYMENT-REQUIRED`, `PAYMENT-SIGNATURE`, `PAYMENT-RESPONSE`, decoded), x402's `exact` scheme on
 * EVM (an EIP-3009 USDC authorization) with the gateway's routes for it, and the credential of the
 * HTTP `Payment` scheme (MPP). The seller core, the buyer plug-ins and the gateway check what they
 * receive against these schemas (Value.Check) instead of trusting a cast, and type what they send
 * with them: one definition for the SDK and the gateway.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Closed, Id, IgnoredTenantIds, Open } from './schemas.js';
import { ResponseHash } from './payment.js';
import { Receipt } from './resources.js';

// ---- x402 v2 ----

export const X402ResourceInfo = Open({ url: Type.String(), description: Type.Optional(Type.String()), mimeType: Type.Optional(Type.String()) });
export type X402ResourceInfo = Static<typeof X402ResourceInfo>;

/** One entry of `accepts`: what the buyer may pay with. */
export const X402PaymentRequirements = Open({
  scheme: Type.String({ minLength: 1 }),
  network: Type.String({ description: 'CAIP-2 network, e.g. eip155:8453, or agentpay:sandbox' }),
  amount: Type.String({ description: 'atomic units: our amountMinor for the agentpay scheme, token base units for exact' }),
  asset: Type.String(),
  payTo: Type.String(),
  maxTimeoutSeconds: Type.Number(),
  extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type X402PaymentRequirements = Static<typeof X402PaymentRequirements>;

/** `PAYMENT-REQUIRED`, decoded. */
export const X402PaymentRequired = Open({
  x402Version: Type.Literal(2),
  error: Type.Optional(Type.String()),
  resource: X402ResourceInfo,
  accepts: Type.Array(X402PaymentRequirements),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type X402PaymentRequired = Static<typeof X402PaymentRequired>;

/** `PAYMENT-SIGNATURE`, decoded: the requirement the buyer chose and its scheme's payload. */
export const X402PaymentPayload = Open({
  x402Version: Type.Number(),
  resource: Type.Optional(X402ResourceInfo),
  accepted: Open({ scheme: Type.String(), network: Type.Optional(Type.String()) }, { description: 'the entry of accepts the buyer pays (all its fields echoed)' }),
  payload: Type.Record(Type.String(), Type.Unknown()),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type X402PaymentPayload = Static<typeof X402PaymentPayload> & { accepted: Partial<X402PaymentRequirements> & { scheme: string } };

/** `PAYMENT-RESPONSE`, decoded. */
export const X402SettlementResponse = Open({
  success: Type.Boolean(),
  errorReason: Type.Optional(Type.String()),
  payer: Type.Optional(Type.String()),
  transaction: Type.String(),
  network: Type.String(),
  amount: Type.Optional(Type.String()),
  extra: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'agentpay: { receipt }, the platform-signed receipt of the call' })),
});
export type X402SettlementResponse = Static<typeof X402SettlementResponse>;

// ---- x402 `exact` on EVM ----

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'an EVM address' });
const Uint = Type.String({ pattern: '^[0-9]{1,78}$', description: 'a decimal integer string' });

/** EIP-3009's `transferWithAuthorization` as x402's `exact` payload carries it (a field more is ignored). */
export const ExactAuthorization = Open({
  from: Address,
  to: Address,
  value: Uint,
  validAfter: Uint,
  validBefore: Uint,
  nonce: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'a 32-byte hex nonce' }),
});
export type ExactAuthorization = Static<typeof ExactAuthorization>;

/** The payer's EIP-712 signature of the authorization (65 bytes, or longer for a smart wallet's). */
export const ExactSignature = Type.String({ pattern: '^0x[0-9a-fA-F]{130,}$' });

/** An x402 PaymentPayload of scheme `exact`: what POST /v1/x402/exact/verify checks. */
export const ExactPaymentPayload = Open({
  x402Version: Type.Number(),
  accepted: Open({ scheme: Type.Literal('exact'), network: Type.String() }),
  payload: Open({ authorization: ExactAuthorization, signature: ExactSignature }),
});
export type ExactPaymentPayload = Static<typeof ExactPaymentPayload>;

/** What a seller offers for x402's `exact` scheme (GET /v1/x402/exact); null there: no chain. */
export const ExactOffer = Closed({
  scheme: Type.Literal('exact'),
  network: Type.String({ description: 'CAIP-2 network, e.g. eip155:8453 (Base)' }),
  asset: Type.String({ description: "the token's address (USDC)" }),
  payTo: Type.String({ description: "the platform's receiving address" }),
  decimals: Type.Integer(),
  currency: Type.Literal('USD', { description: 'the price currency whose minor units convert to the token' }),
  unitsPerMinor: Type.String({ description: 'token base units per cent (USDC: 10000)' }),
  extra: Closed({ name: Type.String(), version: Type.String() }, { description: "the token's EIP-712 domain name and version, as x402 puts them in `extra`" }),
});
export type ExactOffer = Static<typeof ExactOffer>;

export const ExactVerifyBody = Type.Object({
  capabilityId: Id('cap'),
  payload: Type.Object({}, { additionalProperties: true, description: "the x402 PaymentPayload (PAYMENT-SIGNATURE, decoded) of scheme 'exact'" }),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type ExactVerifyInput = { capabilityId: string; payload: Record<string, unknown> };

export const ExactVerified = Closed({
  authorizationId: Id('xau'), capabilityId: Id('cap'), payer: Type.String(), amountMinor: Type.String(), currency: Type.String(), network: Type.String(),
});
export type ExactVerified = Static<typeof ExactVerified>;

export const ExactSettleBody = Type.Object({
  authorizationId: Id('xau'),
  responseHash: ResponseHash(),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type ExactSettleInput = Omit<Static<typeof ExactSettleBody>, keyof typeof IgnoredTenantIds>;

export const ExactSettled = Closed({
  authorizationId: Id('xau'), receipt: Receipt, transaction: Type.String({ description: 'the chain transaction hash' }), payer: Type.String(), network: Type.String(),
  amount: Type.String({ description: 'token base units moved' }),
});
export type ExactSettled = Static<typeof ExactSettled>;

export const ExactReleaseBody = Type.Object({ authorizationId: Id('xau'), ...IgnoredTenantIds }, { additionalProperties: false });
export type ExactReleaseInput = Omit<Static<typeof ExactReleaseBody>, keyof typeof IgnoredTenantIds>;
export const ExactReleased = Closed({ authorizationId: Id('xau'), state: Type.String() });
export type ExactReleased = Static<typeof ExactReleased>;

// ---- the HTTP Payment scheme (MPP drafts) ----

/** An `Authorization: Payment` credential, decoded: the challenge echoed, the method's payload. */
export const PaymentCredential = Open({
  challenge: Open({
    id: Type.String(),
    realm: Type.Optional(Type.String()),
    method: Type.String(),
    intent: Type.Optional(Type.String()),
    request: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())])),
    expires: Type.Optional(Type.String()),
  }),
  payload: Type.Record(Type.String(), Type.Unknown()),
  source: Type.Optional(Type.String()),
});

/**
 * The alert of an x402 `exact` settlement that failed after the seller's handler ran (docs/api/rails.md §
 * Events): `x402.settlement_failed`, for the seller and for the operator, written with the row's change.
 * stage `settle`: the seller's settle call gave up after its tries (the settlement duty keeps trying while
 * the authorization is valid, `retryUntil`; a `payment.succeeded` follows if it settles); `retry`: the duty
 * gave up for good (the authorization expired unused, or its nonce was used without a transfer: the seller
 * delivered and is not paid); `reconcile`: a settled authorization's transaction is no longer on chain as
 * recorded (operator only: the sale is in the ledger, the chain does not show the money).
 */
export const X402_EVENT_TYPES = ['x402.settlement_failed'] as const;
export const X402SettlementFailedData = Closed({
  authorizationId: Id('xau'),
  stage: Type.Union([Type.Literal('settle'), Type.Literal('retry'), Type.Literal('reconcile')]),
  capabilityId: Id('cap'),
  providerId: Type.String({ description: 'the seller' }),
  payer: Type.String({ description: "the buyer's address (the authorization's from)" }),
  network: Type.String({ description: 'CAIP-2, e.g. eip155:8453' }),
  asset: Type.String({ description: "the token's address" }),
  value: Type.String({ description: 'token base units authorized' }),
  amountMinor: Type.String({ description: 'the price of the call' }),
  currency: Type.String(),
  attempts: Type.Integer({ description: 'settlements tried so far' }),
  error: Type.String({ description: 'what the chain (or the check) said' }),
  txHash: Type.Union([Type.String(), Type.Null()], { description: 'the last transaction sent for it, if any' }),
  retryUntil: Type.Union([Type.String(), Type.Null()], { description: 'stage settle: the authorization\'s validBefore (ISO 8601), until which the settlement duty retries; null when it will not' }),
});
export type X402SettlementFailedData = Static<typeof X402SettlementFailedData>;
