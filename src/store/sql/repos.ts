/**
 * Every repository, written once (./sql.ts), for either store: SqliteStore makes them once over its
 * connection, PgStore once per pooled connection (and once for its autocommit reads).
 */
import type { Sql } from './sql.js';
import { Tenants, Signups, Accounts, PasswordResets, ApiKeys, AuthThrottles } from './tenancy.js';
import { SigningKeys } from './platform.js';
import { Capabilities, CapabilityVersions, CapabilitySearch, VerificationRequests, Ratings } from './market.js';
import { Policies, Approvals, Spend } from './policies.js';
import { RailTransactions, DepositAddresses, PayoutDestinations, RailEvents, Reconciliations, SandboxObjects } from './rails.js';
import { WebhookEndpoints, WebhookDeliveries } from './webhooks.js';
import { AlertMails } from './alerts.js';
import { X402Authorizations } from './x402.js';
import { Discovery } from './discovery.js';
import { Wallets, Ledger, LedgerCheckpoints } from './wallets.js';
import { Transactions, Receipts, Breakers, PaymentIdempotencies, PurchaseFacts } from './payments.js';
import { Sessions } from './sessions.js';

/** Every repository over one connection; `Repos` (../store.ts) is what this returns, as callers see it. */
export function makeRepos(c: Sql) {
  return {
    wallets: new Wallets(c),
    ledger: new Ledger(c),
    ledgerCheckpoints: new LedgerCheckpoints(c),
    tenants: new Tenants(c),
    signups: new Signups(c),
    accounts: new Accounts(c),
    passwordResets: new PasswordResets(c),
    apiKeys: new ApiKeys(c),
    authThrottles: new AuthThrottles(c),
    signingKeys: new SigningKeys(c),
    capabilities: new Capabilities(c),
    capabilityVersions: new CapabilityVersions(c),
    capabilitySearch: new CapabilitySearch(c),
    discovery: new Discovery(c),
    verificationRequests: new VerificationRequests(c),
    ratings: new Ratings(c),
    policies: new Policies(c),
    approvals: new Approvals(c),
    spend: new Spend(c),
    railTransactions: new RailTransactions(c),
    depositAddresses: new DepositAddresses(c),
    payoutDestinations: new PayoutDestinations(c),
    railEvents: new RailEvents(c),
    reconciliations: new Reconciliations(c),
    sandboxObjects: new SandboxObjects(c),
    webhookEndpoints: new WebhookEndpoints(c),
    webhookDeliveries: new WebhookDeliveries(c),
    alertMails: new AlertMails(c),
    x402Authorizations: new X402Authorizations(c),
    transactions: new Transactions(c),
    receipts: new Receipts(c),
    breakers: new Breakers(c),
    paymentIdempotency: new PaymentIdempotencies(c),
    purchaseFacts: new PurchaseFacts(c),
    sessions: new Sessions(c),
  };
}
