/**
 * Wire shapes of the API, as the SDK and the CLI see them: the contract's types (contract/,
 * `agentpay-sdk/contract`), derived from the same TypeBox schemas the gateway's routes declare.
 * Nothing is written here twice; a few names read as the SDK has always called them. Amounts are strings.
 */
import type { Approval, Balance, WalletWithBalance } from './contract/index.js';

export type {
  // wallets (docs/api/wallets.md)
  Balance, LedgerEntry,
  // the platform and its keys (docs/api/platform.md)
  Health, PlatformPublicKey, ReceiptKey,
  // tenancy: signup, accounts, identity and keys (docs/api/tenancy.md)
  TenantKind, TenantRef, SignupRecord, SignupInput, SignupStarted, SignupVerified, LoginResult,
  ApiKeyView, NewApiKey as CreatedApiKey, CreateKeyInput, RevokedKeys, Whoami, AuthSelf, AuthScopes,
  // the market: capabilities, providers, discovery (docs/api/market.md)
  CapabilityProtocol, CapabilityAddress, Capability, CapabilityVersion, PublishCapabilityInput, CapabilityPatch,
  PublishedCapability, CapabilityEdit, ProviderSummary, CapabilityDetail, Verification as VerificationRequest, Provider,
  DiscoveryFilters, ScoreBreakdown, DiscoveryResult,
  // payments, receipts, ratings and the breaker (docs/protocol.md, docs/api/payments.md)
  PriceChallenge as Challenge, PaymentProof, Authorization, Receipt, Replay, ReceiptPage, RateInput, Rating, BreakerState,
  // spending policies and approvals (docs/api/policies.md, docs/policy-language.md)
  PolicyType, Policy, MatchedRule, PolicyStep, PolicyEvaluateInput, PolicyEvaluation, Approval,
} from './contract/index.js';

/** A wallet; `balance` where the answer carries it (GET /v1/wallets/:id). */
export type Wallet = Omit<WalletWithBalance, 'balance'> & { balance?: Balance };

export type ApprovalStatus = Approval['status'];
