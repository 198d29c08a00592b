/**
 * The SQLite tables, made from the one description of each table (../tables). drizzle-kit reads
 * this module's named exports (drizzle.config.ts), so every described table is exported here:
 * test/store/tables.test.ts holds the list to account.
 */
import * as described from '../tables/index.js';
import { sqliteTables } from '../tables/kit.js';

export const {
  tenants, signups, accounts, passwordResets, apiKeys, authThrottles,
  wallets, ledgerEntries, ledgerCheckpoints,
  signingKeys,
  capabilities, capabilityVersions, verificationRequests, ratings,
  transactions, receipts, breakers, paymentIdempotency,
  policies, approvals,
  railTransactions, depositAddresses, payoutDestinations, railEvents, reconciliations, sandboxObjects,
  webhookEndpoints, webhookDeliveries,
  alertMails,
  x402Authorizations,
  sessions, sessionClaims,
} = sqliteTables(described);
