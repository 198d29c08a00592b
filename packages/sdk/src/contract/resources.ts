/**
 * The API's resources as answered. Closed objects list every field: a response that adds one
 * fails the gateway's response checks in tests (GatewayConfig.validateResponses), so the
 * documentation cannot drift from what is sent.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, Nullable, SignedAmount, StringEnum, Timestamp } from './schemas.js';
import { CapabilityAddressSchema } from './address.js';

const Currency = Type.String({ description: 'ISO 4217 code, e.g. USD', examples: ['USD'] });

export const Wallet = Closed({
  id: Id('wal'),
  ownerType: StringEnum(['agent', 'workspace', 'settlement', 'platform'] as const, { description: "an agent's, a workspace's, a provider's settlement wallet, or the platform's" }),
  ownerId: Type.String(),
  publicKeyPem: Nullable(Type.String({ description: "the agent's ed25519 public key (SPKI PEM) that signs its payments" })),
  status: StringEnum(['active', 'closed'] as const),
  frozen: Type.Boolean(),
  currency: Currency,
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
export type Wallet = Static<typeof Wallet>;

export const Balance = Closed({
  balanceMinor: Amount({ description: 'everything in the wallet, held amounts included' }),
  availableMinor: Amount({ description: 'what can be spent: the balance less amounts held for calls under way' }),
  currency: Currency,
});
export type Balance = Static<typeof Balance>;

export const WalletWithBalance = Closed({ ...Wallet.properties, balance: Balance });
export type WalletWithBalance = Static<typeof WalletWithBalance>;

export const LedgerEntry = Closed({
  id: Id('led'),
  walletId: Id('wal'),
  seq: Type.Integer({ minimum: 1, description: "the entry's place in its wallet's ledger, from 1" }),
  type: Type.String(),
  amountMinor: SignedAmount({ description: 'the change to the balance, negative for a debit' }),
  holdMinor: SignedAmount({ description: 'the change to the held amount' }),
  balanceAfterMinor: SignedAmount(),
  heldAfterMinor: SignedAmount(),
  currency: Currency,
  transactionId: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  memo: Nullable(Type.String()),
  createdAt: Timestamp(),
});
export type LedgerEntry = Static<typeof LedgerEntry>;

export const ApiKeyView = Closed({
  id: Id('key'),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, to recognise it; the key itself is shown once, when made' }),
  scopes: Type.Array(Type.String()),
  createdAt: Timestamp(),
  expiresAt: Nullable(Timestamp()),
  revokedAt: Nullable(Timestamp()),
  lastUsedAt: Nullable(Timestamp()),
  parentKeyId: Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'key_…: the key that made this one with POST /v1/auth/keys (revoking it revokes this one); null for a key from signup or login' })),
});
export type ApiKeyView = Static<typeof ApiKeyView>;
/** Returned once, at creation: the only time `key` is shown. */
export const NewApiKey = Closed({ ...ApiKeyView.properties, key: Type.String({ description: 'the API key: shown this once, stored only hashed' }) });
export type NewApiKey = Static<typeof NewApiKey>;

export const TenantView = Closed({
  id: Type.String(),
  kind: StringEnum(['workspace', 'provider', 'operator'] as const),
  name: Type.String(),
  status: Type.String(),
  verified: Type.Boolean(),
  walletId: Type.Optional(Id('wal')),
});
export type TenantView = Static<typeof TenantView>;

export const Policy = Closed({
  id: Id('pol'),
  policyType: StringEnum(['approval', 'deny', 'allow', 'budget'] as const),
  name: Type.Optional(Type.String({ description: 'the quoted name after the type in the section header' })),
  enabled: Type.Boolean(),
  source: Type.String({ description: 'the section of the policy document this policy was made from' }),
  rules: Type.Array(Type.String(), { description: "each rule's text" }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
export type Policy = Static<typeof Policy>;

export const Approval = Closed({
  id: Id('apr'),
  agentId: Type.String(),
  walletId: Id('wal'),
  capabilityId: Id('cap'),
  amountMinor: Amount(),
  currency: Currency,
  rule: Type.String({ description: 'the approval rule that held the purchase' }),
  policyId: Type.String(),
  status: StringEnum(['pending', 'approved', 'denied'] as const),
  createdAt: Timestamp(),
  resolvedBy: Type.Optional(Type.String()),
  resolvedAt: Type.Optional(Timestamp()),
  usedAt: Type.Optional(Timestamp({ description: 'when the one purchase it paid for was authorized (approved approvals only)' })),
  standsUntil: Type.Optional(Timestamp({ description: 'a denied approval: until when the same purchase, at this amount or more, is refused (POLICY_DENIED)' })),
});
export type Approval = Static<typeof Approval>;

/** The largest count of units one call may use (a metered capability's `maxUnits`, a complete's `units`). */
export const MAX_METERED_UNITS = 1_000_000_000_000n;

/** A count of units: a non-negative integer as a string (a metered call's usage). */
export const UnitCount = (opts: { description?: string } = {}) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,12})$', description: opts.description ?? 'a count of units, a non-negative integer as a string, e.g. "1200"' });

/**
 * A metered price (docs/protocol.md § Metered prices): the call costs what it used, `units` ×
 * `unitPriceMinor`, up to `maxUnits` units. The capability's `priceMinor` is then the most one call
 * can cost, `unitPriceMinor` × `maxUnits`: the amount the buyer authorizes (and that every check on
 * the buyer's side reads); the seller charges the actual usage at complete, the rest goes back.
 */
export const Metering = Closed({
  unit: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z][a-z0-9_-]*$', description: 'what is counted, e.g. "token", "row", "second" (lowercase letters, digits, "_" and "-")' }),
  unitPriceMinor: Amount({ description: 'the price of one unit, integer minor units as a string (more than zero)' }),
  maxUnits: UnitCount({ description: 'the most units one call may use (more than zero): the call is authorized for unitPriceMinor × maxUnits' }),
}, { description: 'a metered price: charged per unit used, up to a maximum per call' });
export type Metering = Static<typeof Metering>;

/** The usage a metered call's receipt signs: what was counted, how many, at what price, and what was authorized. */
export const Usage = Closed({
  unit: Metering.properties.unit,
  units: UnitCount({ description: 'the units the call used, as the seller reported them at complete' }),
  unitPriceMinor: Amount({ description: 'the unit price the call was authorized at' }),
  authorizedMinor: Amount({ description: 'what the buyer authorized (held): the maximum; amount.amountMinor (units × unitPriceMinor) was charged and the rest released' }),
}, { description: 'a metered call: the receipt\'s amount is units × unitPriceMinor' });
export type Usage = Static<typeof Usage>;

export const Capability = Closed({
  id: Id('cap'),
  providerId: Id('prv'),
  name: Type.String(),
  description: Type.String(),
  protocol: StringEnum(['rest', 'mcp'] as const),
  priceMinor: Amount(),
  currency: Currency,
  category: Type.String(),
  tags: Type.Array(Type.String()),
  schema: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the call input, when published' })),
  latencyP50Ms: Nullable(Type.Number()),
  toolName: Type.Optional(Type.String({ description: 'MCP capabilities only' })),
  metering: Type.Optional(Metering),
  status: StringEnum(['active', 'deprecated'] as const),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
export type Capability = Static<typeof Capability>;

export const CapabilityVersion = Closed({
  id: Id('ver'),
  endpoint: Nullable(Type.String({ description: 'the URL of a url address; null for a package address' })),
  address: CapabilityAddressSchema,
  version: Type.String({ description: 'the version label, "1" at first' }),
  hash: Type.String({ description: 'sha256: and the hex SHA-256 of the canonical JSON of {address, schema}' }),
});

/** A link of a wallet's ledger hash chain (docs/ledger.md): the entry at `seq` hashes to `hash`. */
export const ChainLink = Closed({
  walletId: Id('wal'),
  seq: Type.Integer({ minimum: 1, description: "the entry's place in its wallet's ledger, from 1" }),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: "the entry's chain hash: lowercase hex SHA-256 (docs/ledger.md)" }),
});
export type ChainLink = Static<typeof ChainLink>;

export const Receipt = Closed({
  id: Id('rcp'),
  transactionId: Id('txn'),
  providerId: Id('prv'),
  consumerId: Type.String(),
  capabilityId: Id('cap'),
  amount: Closed({ amountMinor: Amount(), currency: Currency }),
  responseHash: Nullable(Type.String({ description: '`sha256:<hex>` of the exact response bytes; null on a failed receipt without a response' })),
  status: StringEnum(['success', 'failed'] as const),
  timestamp: Timestamp(),
  usage: Type.Optional(Usage),
  ledger: Type.Optional(Type.Array(ChainLink, { description: 'the ledger entries this resolution appended (the capture, sale and fee; or the refund): the heads of those wallets\' chains then, signed with the receipt; absent on receipts from before the chain' })),
  signature: Type.String({ description: "ed25519 signature (base64url) of the receipt's canonical JSON without signature and signingKeyId" }),
  signingKeyId: Type.String(),
});
export type Receipt = Static<typeof Receipt>;

export const Verification = Closed({
  id: Type.String(),
  status: StringEnum(['requested', 'approved', 'denied'] as const),
  note: Nullable(Type.String()),
  contact: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  requestedAt: Timestamp(),
  updatedAt: Timestamp(),
  decidedAt: Nullable(Timestamp()),
});
export type Verification = Static<typeof Verification>;
export type CapabilityVersion = Static<typeof CapabilityVersion>;

export const Provider = Closed({
  id: Id('prv'),
  name: Type.String(),
  verified: Type.Boolean(),
  status: StringEnum(['pending_verification', 'active', 'suspended'] as const),
  reputation: Type.Number(),
  website: Nullable(Type.String()),
  verification: Type.Optional(Nullable(Verification)),
});
export type Provider = Static<typeof Provider>;

export const Rating = Closed({
  id: Id('rtg'),
  providerId: Id('prv'),
  transactionId: Id('txn'),
  rating: Type.Integer(),
  raterWalletId: Id('wal'),
  raterAgentId: Nullable(Type.String()),
  createdAt: Timestamp(),
});
export type Rating = Static<typeof Rating>;

/** A webhook endpoint (docs/api/webhooks.md); its secret is shown once, on creation and rotation. */
export const WebhookEndpoint = Closed({
  id: Id('whe'),
  url: Type.String({ description: 'where deliveries are POSTed' }),
  description: Nullable(Type.String()),
  eventTypes: Nullable(Type.Array(Type.String(), { description: 'the event types it receives; null: every type' })),
  previousSecretExpiresAt: Nullable(Timestamp({ description: 'after a rotation, until when the previous secret still signs too' })),
  createdAt: Timestamp(),
});

export const WebhookEndpointWithSecret = Closed({
  endpoint: WebhookEndpoint,
  secret: Type.String({ description: 'the signing secret (whsec_…), shown only in this answer' }),
});
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

/** One delivery of an event to an endpoint, with its attempts. */
export const WebhookDelivery = Closed({
  id: Id('whd'),
  endpointId: Id('whe'),
  eventId: Type.String(),
  eventType: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  nextAttemptAt: Nullable(Timestamp({ description: 'when the next attempt is due; null once delivered or given up' })),
  attempts: Type.Array(Closed({
    at: Timestamp(),
    status: Nullable(Type.Integer({ description: "the endpoint's HTTP status; null when none came" })),
    error: Nullable(Type.String()),
    durationMs: Type.Number(),
  })),
  lastStatus: Nullable(Type.Integer()),
  replayOf: Nullable(Type.String({ description: 'the delivery this one replays' })),
  createdAt: Timestamp(),
  finishedAt: Nullable(Timestamp()),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

/** The heads of every wallet's ledger chain at one time, signed by the platform (GET /v1/platform/ledger-checkpoints). */
export const LedgerCheckpoint = Closed({
  id: Id('lck'),
  createdAt: Timestamp(),
  heads: Type.Array(ChainLink, { description: "each wallet's last entry then, by wallet id" }),
  signature: Type.String({ description: "ed25519 signature of the checkpoint's canonical JSON without signature and signingKeyId, by the platform key signingKeyId (as receipts are)" }),
  signingKeyId: Type.String(),
});
export type LedgerCheckpoint = Static<typeof LedgerCheckpoint>;
