/** The domain services one gateway runs, built once from its dependencies. */
import type { DomainContext } from '../domain/platform/context.js';
import { SigningKeys, type KeyStorage, type PrivateKeyFiles } from '../domain/payments/signing-keys.js';
import { WalletService } from '../domain/wallets/wallets.js';
import { AccountService } from '../domain/tenancy/accounts.js';
import { KeyService } from '../domain/tenancy/key-service.js';
import { MemoryMailer, type Mailer } from '../domain/platform/mailer.js';
import { AlertMailer } from '../domain/platform/alert-mail.js';
import { SignupService } from '../domain/tenancy/signup.js';
import { CapabilityService } from '../domain/market/capabilities.js';
import { ProviderService } from '../domain/market/providers.js';
import { DiscoveryService } from '../domain/market/discovery.js';
import { paymentServices, type PaymentService, type ExpirySweeper, type BreakerService, type SessionService } from '../domain/payments/service.js';
import type { ReceiptService } from '../domain/payments/receipts.js';
import { X402ExactService } from '../domain/payments/x402-exact.js';
import type { RatingService } from '../domain/market/ratings.js';
import { PolicyEngine } from '../domain/policies/policy-engine.js';
import { PolicyService } from '../domain/policies/policies.js';
import { ApprovalService } from '../domain/policies/approvals.js';
import { railServices, simulatedCredits, type RailServices } from '../domain/rails/service.js';
import { sandboxAdapters } from '../rails/sandbox/adapters.js';
import { randomBytes } from 'node:crypto';
import { randomId } from '../core/ids.js';
import { RetentionJob } from '../domain/platform/retention.js';
import { LedgerCheckpoints } from '../domain/wallets/checkpoints.js';
import { SecretBox, parseWebhookKey, WebhookService, WebhookDeliverer, httpSender, EgressPolicy } from '../domain/platform/webhooks/index.js';
import { accountLimitsOf, type GatewayConfig } from './config.js';

export interface Services {
  ctx: DomainContext;
  config: GatewayConfig;
  /** this process's id (`ins_…`), new at each start: which instance of a fleet answered (GET /health) */
  instanceId: string;
  signingKeys: SigningKeys;
  wallets: WalletService;
  mailer: Mailer;
  signup: SignupService;
  accounts: AccountService;
  keys: KeyService;
  capabilities: CapabilityService;
  providers: ProviderService;
  discovery: DiscoveryService;
  payments: PaymentService;
  /** payment sessions (docs/protocol.md § Payment sessions) */
  sessions: SessionService;
  /** x402 `exact` payments verified and settled for sellers (none without a chain: rails.adapters.exact) */
  x402Exact: X402ExactService;
  sweeper: ExpirySweeper;
  receipts: ReceiptService;
  ratings: RatingService;
  breakers: BreakerService;
  policies: PolicyService;
  approvals: ApprovalService;
  rails: RailServices;
  webhooks: WebhookService;
  /** the delivery duty; `webhookDeliverer.onDeliveryFailed` is where a failure is counted */
  webhookDeliverer: WebhookDeliverer;
  /** the alert-mail duty (src/domain/platform/alert-mail.ts) */
  alertMailer: AlertMailer;
  /** the retention duty (src/domain/platform/retention.ts) */
  retention: RetentionJob;
  /** signed checkpoints of the ledger's chains, and their duty (src/domain/wallets/checkpoints.ts) */
  ledgerCheckpoints: LedgerCheckpoints;
}

/** `keyStorage`: where new signing keys' private halves go (default: `keyFiles`; src/gateway/server.ts chooses) */
export async function buildServices(ctx: DomainContext, config: GatewayConfig, keyFiles: PrivateKeyFiles, mailer: Mailer = new MemoryMailer(), keyStorage?: KeyStorage): Promise<Services> {
  const signingKeys = new SigningKeys(ctx, keyFiles, keyStorage);
  await signingKeys.init();
  const wallets = new WalletService(ctx, { sandbox: simulatedCredits(config) });
  const policyEngine = new PolicyEngine(ctx);
  // without a configured key (a gateway built outside startGateway) secrets last as long as the process
  const box = new SecretBox(config.webhooks?.secretKey ? parseWebhookKey(config.webhooks.secretKey, 'webhooks.secretKey') : randomBytes(32));
  // the sandbox sends to this machine too (local receivers); the operator's list opens internal ranges
  const egress = new EgressPolicy({ allowLoopback: config.mode === 'sandbox', allow: config.webhooks?.egressAllow ?? [] });
  return {
    ctx,
    config,
    instanceId: randomId('instance'),
    signingKeys,
    wallets,
    mailer,
    signup: new SignupService(ctx, mailer, config),
    accounts: new AccountService(ctx, mailer, { ...config, accountLimits: accountLimitsOf(config) }),
    keys: new KeyService(ctx, accountLimitsOf(config)),
    capabilities: new CapabilityService(ctx),
    providers: new ProviderService(ctx),
    discovery: new DiscoveryService(ctx),
    ...paymentServices({ ctx, signingKeys, settings: config, policy: policyEngine }, wallets),
    x402Exact: new X402ExactService({ ctx, signingKeys, settings: config, policy: policyEngine }, typeof config.rails?.adapters === 'object' ? config.rails.adapters.exact : undefined),
    policies: new PolicyService(ctx, policyEngine),
    approvals: new ApprovalService(ctx),
    rails: railServices(ctx, config, wallets, sandboxAdapters),
    webhooks: new WebhookService(ctx, { box, mode: config.mode, egress }),
    alertMailer: new AlertMailer(ctx, mailer),
    retention: new RetentionJob(ctx, config.retention),
    ledgerCheckpoints: new LedgerCheckpoints(ctx, signingKeys),
    webhookDeliverer: new WebhookDeliverer({
      ctx, box, send: httpSender({ egress, ...(config.webhooks?.ca ? { ca: config.webhooks.ca } : {}) }),
      ...(config.webhooks?.timeoutMs ? { timeoutMs: config.webhooks.timeoutMs } : {}),
      ...(config.webhooks?.concurrency ? { concurrency: config.webhooks.concurrency } : {}),
    }),
  };
}
