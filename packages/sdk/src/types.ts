/** Wire shapes of the API, as the SDK and the CLI see them. Amounts are strings. */
export interface Balance {
  balanceMinor: string;
  availableMinor: string;
  currency: string;
}

export interface Wallet {
  id: string;
  ownerType: 'agent' | 'workspace' | 'settlement' | 'platform';
  ownerId: string;
  publicKeyPem: string | null;
  status: string;
  frozen: boolean;
  currency: string;
  createdAt: string;
  updatedAt: string;
  balance?: Balance;
}

export interface LedgerEntry {
  id: string;
  walletId: string;
  seq: number;
  type: string;
  amountMinor: string;
  holdMinor: string;
  balanceAfterMinor: string;
  heldAfterMinor: string;
  currency: string;
  transactionId: string | null;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

export interface PlatformPublicKey {
  publicKeyPem: string;
  signingKeyId: string;
}

export interface ReceiptKey {
  keyId: string;
  publicKeyPem: string;
  status: 'current' | 'retired';
  createdAt: string;
  retiredAt: string | null;
}

export interface Health {
  status: string;
  instance: string;
  time: string;
}

// ---- tenancy: signup, accounts, identity and keys (docs/api/tenancy.md) ----

export type TenantKind = 'workspace' | 'provider' | 'operator';

/** How signup and login name a tenant; `walletId` is a provider's settlement wallet. */
export interface TenantRef {
  kind: TenantKind;
  id: string;
  walletId?: string;
}

export interface SignupRecord {
  id: string;
  kind: 'workspace' | 'provider';
  name: string;
  status: 'pending' | 'verified';
  email: string;
  createdAt: string;
  /** when the latest verification token stops working */
  tokenExpiresAt: string;
  verifiedAt: string | null;
  tenantId: string | null;
}

export interface SignupInput {
  kind: 'workspace' | 'provider';
  name: string;
  email: string;
  password: string;
  website?: string;
}

/** `token` only from a gateway started with --dev-echo-tokens. */
export interface SignupStarted {
  signup: SignupRecord;
  token?: string;
}

export interface SignupVerified {
  tenant: TenantRef;
  apiKey: { id: string; key: string; scopes: string[] };
}

export interface LoginResult {
  tenant: TenantRef;
  apiKey: { id: string; key: string; scopes: string[]; expiresAt: string };
}

/** An API key as lists show it: never the key itself. */
export interface ApiKeyView {
  id: string;
  name: string;
  /** the first characters of the key, to recognise it */
  prefix: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** Returned once, at creation: the only time `key` is shown. */
export interface CreatedApiKey extends ApiKeyView {
  key: string;
}

export interface CreateKeyInput {
  name?: string;
  /** a subset of the calling key's scopes; default: the calling key's scopes */
  scopes?: string[];
  /** `agent`: the scopes for a buying agent (no approvals:write) */
  preset?: 'agent';
  /** ISO 8601 time in the future */
  expiresAt?: string;
  expiresInSeconds?: number;
}

export interface Whoami {
  tenant: { id: string; kind: TenantKind; name: string; status: string; verified: boolean; walletId?: string };
  key: ApiKeyView;
}

export interface AuthSelf {
  key: ApiKeyView;
  tenant: { id: string; kind: TenantKind };
}

export interface AuthScopes {
  /** the calling key's scopes */
  scopes: string[];
  /** every scope a key of this tenant kind may hold */
  available: string[];
}

// ---- marketplace: capabilities, providers, discovery (docs/api/market.md) ----

export type CapabilityProtocol = 'rest' | 'mcp';

/** Where buyers call a capability: a URL, or an npm package run with `npx` at one exact version. */
export type CapabilityAddress =
  | { kind: 'url'; url: string }
  | { kind: 'package'; command: 'npx'; args: string[]; version: string };

export interface Capability {
  id: string;
  providerId: string;
  name: string;
  description: string;
  protocol: CapabilityProtocol;
  priceMinor: string;
  currency: string;
  category: string;
  tags: string[];
  schema: Record<string, unknown> | null;
  latencyP50Ms: number | null;
  /** MCP capabilities only */
  toolName?: string;
  status: 'active' | 'deprecated';
  createdAt: string;
  updatedAt: string;
}

export interface CapabilityVersion {
  id: string;
  /** the URL of a url address; null for a package address */
  endpoint: string | null;
  address: CapabilityAddress;
  version: string;
  /** `sha256:` + hex SHA-256 of the canonical JSON of {address, schema} */
  hash: string;
}

/** Exactly one of `endpoint` or `address`; `toolName` for (and only for) `mcp`. */
export interface PublishCapabilityInput {
  name: string;
  description: string;
  protocol: CapabilityProtocol;
  priceMinor: string;
  category: string;
  endpoint?: string;
  address?: CapabilityAddress;
  toolName?: string;
  schema?: Record<string, unknown>;
  tags?: string[];
  latencyP50Ms?: number;
  currency?: 'USD';
  version?: string;
}

/** Only what changes. Address, endpoint, protocol and toolName cannot be edited. */
export interface CapabilityPatch {
  name?: string;
  description?: string;
  category?: string;
  tags?: string[];
  priceMinor?: string;
  currency?: 'USD';
  /** publishes a new version */
  schema?: Record<string, unknown>;
  latencyP50Ms?: number | null;
  /** label of the version a schema edit publishes (default: the next number) */
  version?: string;
}

export interface PublishedCapability {
  capability: Capability;
  version: CapabilityVersion;
}

export interface CapabilityEdit {
  capability: Capability;
  changed: string[];
  /** present when a schema edit published a new version */
  version?: CapabilityVersion;
}

/** A seller as capability and discovery records show it. */
export interface ProviderSummary {
  id: string;
  name: string;
  verified: boolean;
  reputation: number;
}

export interface CapabilityDetail {
  capability: Capability;
  provider: ProviderSummary;
  discoverable: boolean;
  /** only if discoverable, or for its seller and the operator */
  version?: CapabilityVersion;
}

export interface VerificationRequest {
  id: string;
  status: 'requested' | 'approved' | 'denied';
  note: string | null;
  contact: string | null;
  reason: string | null;
  requestedAt: string;
  updatedAt: string;
  decidedAt: string | null;
}

export interface Provider extends ProviderSummary {
  status: 'pending_verification' | 'active' | 'suspended';
  website: string | null;
  /** only for the provider itself and the operator; null if it never asked */
  verification?: VerificationRequest | null;
}

export interface DiscoveryFilters {
  query?: string;
  category?: string;
  protocol?: CapabilityProtocol;
  maxPriceMinor?: string;
  maxLatencyMs?: number;
  /** default 20, at most 100 */
  limit?: number;
}

export interface ScoreBreakdown {
  relevance: number;
  price: number;
  latency: number;
  reputation: number;
  verification: number;
}

export interface DiscoveryResult {
  capability: Pick<Capability, 'id' | 'name' | 'description' | 'protocol' | 'priceMinor' | 'currency' | 'category' | 'tags' | 'schema' | 'latencyP50Ms' | 'toolName' | 'status'>;
  version: Pick<CapabilityVersion, 'endpoint' | 'address' | 'version'>;
  provider: ProviderSummary;
  score: number;
  scoreBreakdown: ScoreBreakdown;
}

// ---- payments, receipts, ratings and the breaker (docs/protocol.md, docs/api/payments.md) ----

/** The payment protocol's shapes are the contract's (contract/payment.ts): one definition for gateway, SDK and CLI. */
export type { PriceChallenge as Challenge, PaymentProof, Authorization, Receipt, Replay } from './contract/index.js';
import type { Receipt } from './contract/index.js';


/** `nextCursor` is present only when the page came back full. */
export interface ReceiptPage {
  receipts: Receipt[];
  nextCursor?: string;
}

export interface RateInput {
  transactionId: string;
  /** integer 1 to 5 */
  rating: number;
  /** the wallet that paid */
  raterWalletId: string;
  raterAgentId?: string;
}

export interface Rating {
  id: string;
  providerId: string;
  transactionId: string;
  rating: number;
  raterWalletId: string;
  raterAgentId: string | null;
  createdAt: string;
}

/** The seller-for-wallet breaker: three provider errors in a row pause the seller for the wallet. */
export interface BreakerState {
  walletId: string;
  providerId: string;
  paused: boolean;
  consecutiveFailures: number;
}

// ---- spending policies and approvals (docs/api/policies.md, docs/policy-language.md) ----

export type PolicyType = 'approval' | 'deny' | 'allow' | 'budget';

export interface Policy {
  id: string;
  policyType: PolicyType;
  /** the quoted name after the type in the section header */
  name?: string;
  enabled: boolean;
  /** the section as written */
  source: string;
  /** each rule's text */
  rules: string[];
  createdAt: string;
  updatedAt: string;
}

export interface MatchedRule {
  policyId: string;
  rule: string;
}

export interface PolicyStep {
  policyId: string;
  policyType: PolicyType;
  /** deny, allow, approval: matched | not_matched; budget: within | exceeded */
  result: 'matched' | 'not_matched' | 'within' | 'exceeded';
  /** the rule that matched or the ceiling that was exceeded */
  rule?: string;
}

export interface PolicyEvaluateInput {
  walletId: string;
  capabilityId: string;
  /** default: the capability's current price */
  priceMinor?: string;
}

export interface PolicyEvaluation {
  decision: 'allow' | 'deny' | 'approval';
  matchedRule?: MatchedRule;
  reason: string;
  /** an approval request that covers, holds or refused this purchase */
  approvalId?: string;
  steps: PolicyStep[];
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface Approval {
  id: string;
  /** the paying wallet's ownerId */
  agentId: string;
  walletId: string;
  capabilityId: string;
  amountMinor: string;
  currency: string;
  /** the approval rule that held the purchase */
  rule: string;
  policyId: string;
  status: ApprovalStatus;
  createdAt: string;
  resolvedBy?: string;
  resolvedAt?: string;
  /** when the one purchase it paid for was authorized (approved approvals only) */
  usedAt?: string;
  /** denied approvals only: until when the same purchase, at this amount or more, is refused */
  standsUntil?: string;
}
