/**
 * The storage boundary. Domain code sees only these async types (each repository's is derived from
 * its class in ./sql/, written once for both databases), so a PostgreSQL adapter can stand in for
 * SQLite without touching the domain.
 *
 * Rules for callers:
 * - `tx` is one database transaction: everything a money movement writes goes in one.
 * - Do slow non-database work (password hashing, network) outside `tx`/`read`: the
 *   SQLite adapter serialises all access, so time spent inside holds everyone up.
 * - Never call `tx`/`read` from inside another; compose by passing `Repos` down.
 * - A `tx` resolves only once it is durable, and a `read` only once every commit it could
 *   have seen is. `{ unsynced: true }` skips that wait for a read whose result nobody is
 *   shown and that only decides whether to go on (authentication; the wallet key a proof
 *   is checked with): a change still being synced has not been acknowledged to anyone
 *   who could rely on it, and a transaction that follows cannot become durable before
 *   the commits it read from.
 */
import type { Tenants, Signups, Accounts, PasswordResets, ApiKeys, AuthThrottles } from './sql/tenancy.js';
import type { Wallets, Ledger, LedgerCheckpoints } from './sql/wallets.js';
import type { SigningKeys } from './sql/platform.js';
import type { Capabilities, CapabilityVersions, CapabilitySearch, VerificationRequests, Ratings } from './sql/market.js';
import type { Discovery } from './sql/discovery.js';
import type { Transactions, Receipts, Breakers, PaymentIdempotencies, PurchaseFacts } from './sql/payments.js';
import type { Policies, Approvals, Spend } from './sql/policies.js';
import type { WebhookEndpoints, WebhookDeliveries } from './sql/webhooks.js';
import type { AlertMails } from './sql/alerts.js';
import type { X402Authorizations } from './sql/x402.js';
import type { Sessions } from './sql/sessions.js';
import type { RailTransactions, DepositAddresses, PayoutDestinations, RailEvents, Reconciliations, SandboxObjects } from './sql/rails.js';

/**
 * A repository as its callers see it: the public methods of its class in ./sql/ (one class each,
 * for both databases), where their signatures and doc comments are written. Private members are
 * not keys of a class type; fields are left out too.
 */
export type Public<T> = { [K in keyof T as T[K] extends (...args: never) => unknown ? K : never]: T[K] };

export type TenantRepo = Public<Tenants>;
export type SignupRepo = Public<Signups>;
export type AccountRepo = Public<Accounts>;
export type PasswordResetRepo = Public<PasswordResets>;
export type ApiKeyRepo = Public<ApiKeys>;
export type AuthThrottleRepo = Public<AuthThrottles>;
export type WalletRepo = Public<Wallets>;
export type LedgerRepo = Public<Ledger>;
export type LedgerCheckpointRepo = Public<LedgerCheckpoints>;
export type SigningKeyRepo = Public<SigningKeys>;
export type CapabilityRepo = Public<Capabilities>;
export type CapabilityVersionRepo = Public<CapabilityVersions>;
export type CapabilitySearchRepo = Public<CapabilitySearch>;
export type DiscoveryRepo = Public<Discovery>;
export type VerificationRequestRepo = Public<VerificationRequests>;
export type RatingRepo = Public<Ratings>;
export type TransactionRepo = Public<Transactions>;
export type ReceiptRepo = Public<Receipts>;
export type BreakerRepo = Public<Breakers>;
export type PaymentIdempotencyRepo = Public<PaymentIdempotencies>;
export type PurchaseFactsRepo = Public<PurchaseFacts>;
export type PolicyRepo = Public<Policies>;
export type ApprovalRepo = Public<Approvals>;
export type SpendRepo = Public<Spend>;
export type RailTransactionRepo = Public<RailTransactions>;
export type DepositAddressRepo = Public<DepositAddresses>;
export type PayoutDestinationRepo = Public<PayoutDestinations>;
export type RailEventRepo = Public<RailEvents>;
export type ReconciliationRepo = Public<Reconciliations>;
export type SandboxObjectRepo = Public<SandboxObjects>;
export type WebhookEndpointRepo = Public<WebhookEndpoints>;
export type WebhookDeliveryRepo = Public<WebhookDeliveries>;
export type AlertMailRepo = Public<AlertMails>;
export type X402AuthorizationRepo = Public<X402Authorizations>;
export type SessionRepo = Public<Sessions>;

export interface Repos {
  tenants: TenantRepo;
  signups: SignupRepo;
  accounts: AccountRepo;
  passwordResets: PasswordResetRepo;
  apiKeys: ApiKeyRepo;
  authThrottles: AuthThrottleRepo;
  wallets: WalletRepo;
  ledger: LedgerRepo;
  ledgerCheckpoints: LedgerCheckpointRepo;
  signingKeys: SigningKeyRepo;
  capabilities: CapabilityRepo;
  capabilityVersions: CapabilityVersionRepo;
  capabilitySearch: CapabilitySearchRepo;
  discovery: DiscoveryRepo;
  verificationRequests: VerificationRequestRepo;
  ratings: RatingRepo;
  transactions: TransactionRepo;
  receipts: ReceiptRepo;
  breakers: BreakerRepo;
  paymentIdempotency: PaymentIdempotencyRepo;
  purchaseFacts: PurchaseFactsRepo;
  policies: PolicyRepo;
  approvals: ApprovalRepo;
  spend: SpendRepo;
  railTransactions: RailTransactionRepo;
  depositAddresses: DepositAddressRepo;
  payoutDestinations: PayoutDestinationRepo;
  railEvents: RailEventRepo;
  reconciliations: ReconciliationRepo;
  sandboxObjects: SandboxObjectRepo;
  webhookEndpoints: WebhookEndpointRepo;
  webhookDeliveries: WebhookDeliveryRepo;
  alertMails: AlertMailRepo;
  x402Authorizations: X402AuthorizationRepo;
  sessions: SessionRepo;
}

export interface ReadOptions {
  /** do not wait for the sync of commits this read may see (see the rules above) */
  unsynced?: boolean;
  /**
   * false: the reads need not see one snapshot (each sees what was committed when it ran), as
   * when they are independent lookups checked again by a later transaction. PostgreSQL then runs
   * them on one connection without BEGIN and COMMIT; SQLite's reads see one snapshot anyway.
   */
  snapshot?: boolean;
}

export interface Store {
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  read<T>(fn: (r: Repos) => Promise<T>, opts?: ReadOptions): Promise<T>;
  /**
   * Whether this process runs the fleet duty `name` (the expiry sweeper, the rail job) now. On
   * SQLite always (one process per database file); on PostgreSQL one instance of the fleet
   * holds each duty (an advisory lock) until it stops or dies, then another takes it.
   */
  claimDuty(name: string): Promise<boolean>;
  /**
   * Whether the database answers now: one cheap statement (`SELECT 1`), for the readiness check
   * (`GET /health/ready`); throws when it does not.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}
