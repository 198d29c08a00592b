/**
 * The PostgreSQL tables, made from the same descriptions as the SQLite ones (../tables), so the
 * row types are the SQLite tables' by construction. drizzle-kit reads this module's named exports
 * (drizzle.pg.config.ts; migrations in drizzle-pg/, with the hand-written SQL for what the SQLite
 * migrations do with triggers and virtual tables: docs/architecture.md "Tables and migrations").
 */
import * as described from '../tables/index.js';
import { pgTables } from '../tables/kit.js';

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
} = pgTables(described);
