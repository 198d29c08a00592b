/**
 * Payment sessions (docs/protocol.md § Payment sessions): one gateway trip opens a session with
 * a cap held on the buyer's wallet; every later call carries a voucher the seller checks by
 * itself; the seller claims the highest voucher per session in batches and closes it, and the
 * unused rest goes back to the buyer. One definition for the gateway, the SDK and the CLI.
 *
 *   SessionOpen    signed by the buyer's wallet key: seller, capability (or null: all of the
 *                  seller's), cap, currency, expiry and the session's public key
 *   SessionGrant   signed by the platform: the session as opened, with the seller's receipt key
 *   Voucher        signed by the session key: session id, cumulative amount, sequence, request hash
 *   SessionReceipt signed by the seller's key named in the grant: what one call charged
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, IgnoredTenantIds, MultilineString, Nullable, StringEnum, Timestamp } from './schemas.js';
import { ResponseHash } from './payment.js';

/** The longest a session may last from its open (30 days). */
export const MAX_SESSION_MS = 30 * 24 * 60 * 60 * 1000;

const PublicKeyPem = (description: string) => MultilineString({ minLength: 1, maxLength: 1000, description });
const Sequence = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
const Currency = () => Type.String({ minLength: 3, maxLength: 3, description: 'ISO 4217 code, e.g. USD', examples: ['USD'] });

/** An open request before the buyer's wallet key signs it. */
export const UnsignedSessionOpen = Closed({
  version: Type.Literal(1),
  type: Type.Literal('session.open'),
  walletId: Id('wal'),
  providerId: Type.String({ minLength: 1, maxLength: 100, description: 'the seller (its tenant id)' }),
  capabilityId: Nullable(Id('cap')),
  capMinor: Amount({ description: 'the most the session can pay, held on the wallet while it is open' }),
  currency: Currency(),
  expiresAt: Timestamp({ description: 'vouchers are accepted strictly before it; at most 30 days after the open' }),
  sessionPublicKey: PublicKeyPem('SPKI PEM of the ephemeral ed25519 key that signs the vouchers'),
  nonce: Type.String({ minLength: 16, maxLength: 100, description: 'random, at least 16 characters: an open request opens one session' }),
  signedAt: Timestamp(),
}, { description: 'a payment session open request before the wallet key signs it' });
export type UnsignedSessionOpen = Static<typeof UnsignedSessionOpen>;

export const SessionOpen = Closed({
  ...UnsignedSessionOpen.properties,
  signature: Type.String({ minLength: 1, maxLength: 200, description: "ed25519 signature (base64) by the wallet's registered key of the canonical open request without signature" }),
}, { description: "a payment session open request, signed by the buyer's wallet key" });
export type SessionOpen = Static<typeof SessionOpen>;

/** The grant before the platform signs it. */
export const UnsignedSessionGrant = Closed({
  version: Type.Literal(1),
  sessionId: Id('ses'),
  walletId: Id('wal'),
  providerId: Type.String(),
  capabilityId: Nullable(Id('cap')),
  payTo: Type.String({ description: "the seller's settlement wallet" }),
  capMinor: Amount(),
  currency: Type.String(),
  expiresAt: Timestamp({ description: 'vouchers are accepted strictly before it' }),
  claimWindowEndsAt: Timestamp({ description: 'claims are taken until then; the rest is released to the buyer at this time' }),
  sessionPublicKey: Type.String({ description: 'SPKI PEM of the key that signs vouchers' }),
  sellerPublicKey: Type.String({ description: "SPKI PEM of the seller's key that signs per-call session receipts" }),
  issuedAt: Timestamp(),
}, { description: 'a session grant before the platform signs it' });
export type UnsignedSessionGrant = Static<typeof UnsignedSessionGrant>;

export const SessionGrant = Closed({
  ...UnsignedSessionGrant.properties,
  signature: Type.String({ description: 'ed25519 signature (base64) of the canonical grant without signature and signingKeyId' }),
  signingKeyId: Type.String({ description: 'the platform signing key (GET /v1/platform/receipt-keys/:keyId)' }),
}, { description: 'the platform-signed grant of an open session: what the seller checks vouchers against' });
export type SessionGrant = Static<typeof SessionGrant>;

export const UnsignedVoucher = Closed({
  sessionId: Id('ses'),
  cumulativeMinor: Amount({ description: 'everything the session has paid so far, this call included' }),
  sequence: Sequence('1, 2, 3, …: one per call, increasing'),
  requestHash: ResponseHash({ description: 'the fingerprint of the request it pays (docs/protocol.md § Idempotent retries: method, path and query, body)' }),
});
export type UnsignedVoucher = Static<typeof UnsignedVoucher>;

export const Voucher = Closed({
  ...UnsignedVoucher.properties,
  signature: Type.String({ minLength: 1, maxLength: 200, description: 'ed25519 signature (base64) by the session key of the canonical voucher without signature' }),
}, { description: 'a cumulative voucher, signed by the session key' });
export type Voucher = Static<typeof Voucher>;

/** What one call of a session charged, signed by the seller's key named in the grant. */
export const UnsignedSessionReceipt = Closed({
  version: Type.Literal(1),
  type: Type.Literal('session.receipt'),
  sessionId: Id('ses'),
  sequence: Sequence('the voucher that paid the call'),
  cumulativeMinor: Amount(),
  chargedMinor: Amount({ description: 'what this call cost' }),
  requestHash: ResponseHash(),
  responseHash: ResponseHash(),
  timestamp: Timestamp(),
});
export type UnsignedSessionReceipt = Static<typeof UnsignedSessionReceipt>;

export const SessionReceipt = Closed({
  ...UnsignedSessionReceipt.properties,
  signature: Type.String({ description: "ed25519 signature (base64) by the grant's sellerPublicKey of the canonical receipt without signature" }),
}, { description: "a per-call session receipt, signed by the seller's key that the grant names" });
export type SessionReceipt = Static<typeof SessionReceipt>;

/** Where the seller stands with a session: what a corrective 402 tells the buyer to resync from. */
export const SessionState = Closed({
  sessionId: Id('ses'),
  sequence: Type.Integer({ minimum: 0, description: 'the highest voucher sequence accepted (0: none)' }),
  cumulativeMinor: Amount({ description: 'the cumulative amount of that voucher' }),
  spentMinor: Amount({ description: 'what the calls served so far cost; the next voucher must bring cumulative to at least this plus the call' }),
});
export type SessionState = Static<typeof SessionState>;

export const SessionStatus = StringEnum(['open', 'closed', 'expired'] as const, { description: 'open; closed (by the seller); expired (the claim window ran out): the rest was released' });

/** A session as the API shows it. */
export const Session = Closed({
  id: Id('ses'),
  status: SessionStatus,
  walletId: Id('wal'),
  workspaceId: Type.String(),
  providerId: Type.String(),
  capabilityId: Nullable(Id('cap')),
  payTo: Type.String(),
  capMinor: Amount(),
  claimedMinor: Amount({ description: 'the cumulative amount of the highest voucher claimed' }),
  feeMinor: Amount({ description: "the platform's fees on the claims" }),
  heldMinor: Amount({ description: 'still held on the buyer\'s wallet: cap less claimed while open, 0 after' }),
  currency: Type.String(),
  lastSequence: Type.Integer({ minimum: 0 }),
  expiresAt: Timestamp(),
  claimWindowEndsAt: Timestamp(),
  createdAt: Timestamp(),
  closedAt: Nullable(Timestamp()),
}, { description: 'a payment session' });
export type Session = Static<typeof Session>;

// ---- requests ----

export const OpenSessionBody = Type.Object({
  open: SessionOpen,
  sellerPublicKey: PublicKeyPem("SPKI PEM of the seller's ed25519 key that signs its per-call session receipts; the grant names it"),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type OpenSessionBody = Static<typeof OpenSessionBody>;

export const OpenedSession = Closed({ session: Session, grant: SessionGrant });
export type OpenedSession = Static<typeof OpenedSession>;

/** A top-up before the buyer's wallet key signs it: raises the cap of an open session from one amount to another. */
export const UnsignedSessionTopUp = Closed({
  version: Type.Literal(1),
  type: Type.Literal('session.topup'),
  sessionId: Id('ses'),
  walletId: Id('wal'),
  fromCapMinor: Amount({ description: 'the cap it raises: applied only while the cap is this (a replay changes nothing)' }),
  toCapMinor: Amount({ description: 'the new cap; the difference is held on the wallet' }),
  signedAt: Timestamp(),
}, { description: 'a session top-up before the wallet key signs it' });
export type UnsignedSessionTopUp = Static<typeof UnsignedSessionTopUp>;

export const SessionTopUp = Closed({
  ...UnsignedSessionTopUp.properties,
  signature: Type.String({ minLength: 1, maxLength: 200, description: "ed25519 signature (base64) by the wallet's registered key of the canonical top-up without signature" }),
}, { description: "a session top-up, signed by the buyer's wallet key" });
export type SessionTopUp = Static<typeof SessionTopUp>;

export const TopUpSessionBody = Type.Object({ topUp: SessionTopUp, ...IgnoredTenantIds }, { additionalProperties: false });
export type TopUpSessionBody = Static<typeof TopUpSessionBody>;

/** The most sessions one claim request carries. */
export const MAX_SESSION_CLAIMS = 100;

export const SessionClaimItem = Type.Object({
  sessionId: Id('ses'),
  voucher: Voucher,
  amountMinor: Type.Optional(Amount({ description: "claim up to this amount, at most the voucher's cumulative (default: the cumulative): what the calls served cost when the last voucher paid ahead for a call that failed or is still running" })),
}, { additionalProperties: false });

export const ClaimSessionsBody = Type.Object({
  claims: Type.Array(SessionClaimItem, { minItems: 1, maxItems: MAX_SESSION_CLAIMS, description: 'the highest voucher of each session; each claim is taken on its own' }),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type ClaimSessionsBody = Static<typeof ClaimSessionsBody>;

export const SessionClaimResult = Closed({
  sessionId: Id('ses'),
  status: StringEnum(['claimed', 'unchanged'] as const, { description: 'claimed: money moved; unchanged: this cumulative amount was claimed already (a replay), nothing moved' }),
  cumulativeMinor: Amount({ description: 'what the session has paid the seller so far: the amount claimed up to' }),
  amountMinor: Amount({ description: 'what this claim moved from the hold (0 when unchanged)' }),
  feeMinor: Amount({ description: "the platform's fee on it (0 when unchanged)" }),
  session: Session,
});
export type SessionClaimResult = Static<typeof SessionClaimResult>;

/** No fields: the seller claims its highest voucher first (POST /v1/sessions/claims), then closes. */
export const CloseSessionBody = Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false });
export type CloseSessionBody = Static<typeof CloseSessionBody>;

export const SESSION_PAGE_MAX = 100;

export const SessionPage = Closed({ sessions: Type.Array(Session), nextCursor: Nullable(Type.String()) });
export type SessionPage = Static<typeof SessionPage>;

// ---- sessions on the seller's wire (our dialect; docs/protocol.md § Sessions on the wire) ----

/** Request: the buyer's signed open request (base64url JSON of SessionOpen); the seller opens the session and answers its grant. */
export const SESSION_OPEN_HEADER = 'x-agentpay-session-open';
/** Response to an open: the platform-signed grant (base64url JSON of SessionGrant). */
export const SESSION_GRANT_HEADER = 'x-agentpay-session-grant';
/** Request: the voucher that pays this call (base64url JSON of Voucher). */
export const VOUCHER_HEADER = 'x-agentpay-voucher';
/** Response to a call paid with a voucher: the seller-signed per-call receipt (base64url JSON of SessionReceipt). */
export const SESSION_RECEIPT_HEADER = 'x-agentpay-session-receipt';
/** Request: the buyer's top-up of an open session, signed by the wallet key (base64url JSON of SessionTopUp); the seller forwards it and answers the raised grant in SESSION_GRANT_HEADER. */
export const SESSION_TOPUP_HEADER = 'x-agentpay-session-topup';
/** Request: the buyer's close, signed by the session key (base64url JSON of SessionCloseRequest). */
export const SESSION_CLOSE_HEADER = 'x-agentpay-session-close';

/**
 * What a seller that takes sessions adds to its 402 beside the price challenge (`session`). The
 * price, currency, seller and capability a buyer opens for are the signed challenge's; these
 * repeat them for a reader without the challenge.
 */
export const SessionOffer = Closed({
  version: Type.Literal(1),
  providerId: Type.String(),
  capabilityId: Id('cap'),
  priceMinor: Amount({ description: 'what one call costs, as in the challenge' }),
  currency: Type.String(),
  openHeader: Type.Literal(SESSION_OPEN_HEADER),
  voucherHeader: Type.Literal(VOUCHER_HEADER),
}, { description: "a seller's offer of a payment session, beside per-call payment, in its 402" });
export type SessionOffer = Static<typeof SessionOffer>;

/** The buyer's close of a session before the session key signs it. */
export const UnsignedSessionCloseRequest = Closed({
  version: Type.Literal(1),
  type: Type.Literal('session.close'),
  sessionId: Id('ses'),
  signedAt: Timestamp(),
}, { description: "a buyer's close of a session before the session key signs it" });
export type UnsignedSessionCloseRequest = Static<typeof UnsignedSessionCloseRequest>;

export const SessionCloseRequest = Closed({
  ...UnsignedSessionCloseRequest.properties,
  signature: Type.String({ minLength: 1, maxLength: 200, description: 'ed25519 signature (base64) by the session key of the canonical close without signature' }),
}, { description: "a buyer's close of a session, signed by the session key: the seller claims what was served and closes it at the gateway" });
export type SessionCloseRequest = Static<typeof SessionCloseRequest>;

/** The corrective 402 of a refused voucher: the error, and where the seller stands with the session (null: it does not know it). */
export const VoucherRefusal = Closed({
  error: Closed({ code: Type.String(), message: Type.String(), details: Type.Record(Type.String(), Type.Unknown()) }),
  state: Nullable(SessionState),
}, { description: "a seller's refusal of a voucher (402)" });
export type VoucherRefusal = Static<typeof VoucherRefusal>;

/** One claim that moved money: the increase of a voucher's cumulative amount over the claims before it. */
export const SessionClaim = Closed({
  cumulativeMinor: Amount({ description: 'the cumulative amount of the voucher claimed' }),
  sequence: Type.Integer({ minimum: 1 }),
  amountMinor: Amount({ description: "what it moved from the buyer's hold: the seller's sale plus the fee" }),
  feeMinor: Amount({ description: "the platform's fee on it" }),
  createdAt: Timestamp(),
}, { description: 'a claim of a payment session' });
export type SessionClaim = Static<typeof SessionClaim>;

/** GET /v1/sessions/:id/claims: every claim of a session, oldest first. */
export const SessionClaimList = Closed({ sessionId: Id('ses'), claims: Type.Array(SessionClaim) });
export type SessionClaimList = Static<typeof SessionClaimList>;

/** No fields: the buyer's workspace ends the session early (POST /v1/sessions/:id/end). */
export const EndSessionBody = Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false });
export type EndSessionBody = Static<typeof EndSessionBody>;

/**
 * The session events (docs/api/webhooks.md § Session events), recorded for the seller and for the
 * buyer's workspace in the transaction that changes the session: `session.opened` (the cap held),
 * `session.claimed` (a claim moved money from the hold to the seller and the fee), `session.closed`
 * (the seller closed it: the rest released), `session.expired` (its claim window ended: the rest
 * released).
 */
export const SESSION_EVENT_TYPES = ['session.opened', 'session.claimed', 'session.closed', 'session.expired'] as const;
export const SessionEventData = Closed({
  sessionId: Id('ses'),
  walletId: Type.String({ description: "the buyer's wallet (wal_…)" }),
  workspaceId: Type.String({ description: "the buyer's workspace" }),
  providerId: Type.String({ description: 'the seller' }),
  capabilityId: Nullable(Id('cap')),
  currency: Type.String(),
  capMinor: Amount({ description: "the session's cap" }),
  claimedMinor: Amount({ description: 'everything claimed so far (after this claim, for session.claimed)' }),
  cumulativeMinor: Type.Optional(Amount({ description: "session.claimed: the claimed voucher's cumulative amount" })),
  sequence: Type.Optional(Type.Integer({ minimum: 1, description: "session.claimed: the claimed voucher's sequence" })),
  amountMinor: Type.Optional(Amount({ description: "session.claimed: what this claim moved from the buyer's hold" })),
  feeMinor: Type.Optional(Amount({ description: "session.claimed: the platform's fee on it" })),
  saleMinor: Type.Optional(Amount({ description: "session.claimed: what the seller's settlement wallet got, amountMinor less feeMinor" })),
  releasedMinor: Type.Optional(Amount({ description: "session.closed and session.expired: the rest of the cap, released to the buyer's wallet" })),
  session: Session,
}, { description: 'the data of a session event' });
export type SessionEventData = Static<typeof SessionEventData>;
