/**
 * The storage boundary. Domain code sees only these async interfaces, so a
 * PostgreSQL adapter can stand in for SQLite without touching the domain.
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
import type { TenantRepo, SignupRepo, AccountRepo, PasswordResetRepo, ApiKeyRepo, AuthThrottleRepo } from './repos/tenancy.js';
import type { WalletRepo, LedgerRepo, LedgerCheckpointRepo } from './repos/wallets.js';
import type { SigningKeyRepo } from './repos/platform.js';
import type { CapabilityRepo, CapabilityVersionRepo, CapabilitySearchRepo, VerificationRequestRepo, RatingRepo } from './repos/market.js';
import type { DiscoveryRepo } from './repos/discovery.js';
import type { TransactionRepo, ReceiptRepo, BreakerRepo, PaymentIdempotencyRepo, PurchaseFactsRepo } from './repos/payments.js';
import type { PolicyRepo, ApprovalRepo, SpendRepo } from './repos/policies.js';
import type { WebhookEndpointRepo, WebhookDeliveryRepo } from './repos/webhooks.js';
import type { AlertMailRepo } from './repos/alerts.js';
import type { X402AuthorizationRepo } from './repos/x402.js';
import type { SessionRepo } from './repos/sessions.js';
import type { RailTransactionRepo, DepositAddressRepo, PayoutDestinationRepo, RailEventRepo, ReconciliationRepo, SandboxObjectRepo } from './repos/rails.js';

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
