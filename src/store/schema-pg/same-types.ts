/**
 * Compile-time check: every PostgreSQL table reads back exactly the row type of its SQLite twin,
 * so the repositories' types (src/store/repos, written against the SQLite schema) fit both.
 */
import type * as lite from '../schema/index.js';
import type * as pg from './index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Check<T extends true> = T;

export type SameRows = [
  Check<Same<typeof lite.tenants.$inferSelect, typeof pg.tenants.$inferSelect>>,
  Check<Same<typeof lite.signups.$inferSelect, typeof pg.signups.$inferSelect>>,
  Check<Same<typeof lite.accounts.$inferSelect, typeof pg.accounts.$inferSelect>>,
  Check<Same<typeof lite.passwordResets.$inferSelect, typeof pg.passwordResets.$inferSelect>>,
  Check<Same<typeof lite.apiKeys.$inferSelect, typeof pg.apiKeys.$inferSelect>>,
  Check<Same<typeof lite.authThrottles.$inferSelect, typeof pg.authThrottles.$inferSelect>>,
  Check<Same<typeof lite.wallets.$inferSelect, typeof pg.wallets.$inferSelect>>,
  Check<Same<typeof lite.ledgerEntries.$inferSelect, typeof pg.ledgerEntries.$inferSelect>>,
  Check<Same<typeof lite.ledgerCheckpoints.$inferSelect, typeof pg.ledgerCheckpoints.$inferSelect>>,
  Check<Same<typeof lite.signingKeys.$inferSelect, typeof pg.signingKeys.$inferSelect>>,
  Check<Same<typeof lite.capabilities.$inferSelect, typeof pg.capabilities.$inferSelect>>,
  Check<Same<typeof lite.capabilityVersions.$inferSelect, typeof pg.capabilityVersions.$inferSelect>>,
  Check<Same<typeof lite.verificationRequests.$inferSelect, typeof pg.verificationRequests.$inferSelect>>,
  Check<Same<typeof lite.ratings.$inferSelect, typeof pg.ratings.$inferSelect>>,
  Check<Same<typeof lite.transactions.$inferSelect, typeof pg.transactions.$inferSelect>>,
  Check<Same<typeof lite.receipts.$inferSelect, typeof pg.receipts.$inferSelect>>,
  Check<Same<typeof lite.breakers.$inferSelect, typeof pg.breakers.$inferSelect>>,
  Check<Same<typeof lite.paymentIdempotency.$inferSelect, typeof pg.paymentIdempotency.$inferSelect>>,
  Check<Same<typeof lite.policies.$inferSelect, typeof pg.policies.$inferSelect>>,
  Check<Same<typeof lite.approvals.$inferSelect, typeof pg.approvals.$inferSelect>>,
  Check<Same<typeof lite.railTransactions.$inferSelect, typeof pg.railTransactions.$inferSelect>>,
  Check<Same<typeof lite.depositAddresses.$inferSelect, typeof pg.depositAddresses.$inferSelect>>,
  Check<Same<typeof lite.payoutDestinations.$inferSelect, typeof pg.payoutDestinations.$inferSelect>>,
  Check<Same<typeof lite.railEvents.$inferSelect, typeof pg.railEvents.$inferSelect>>,
  Check<Same<typeof lite.reconciliations.$inferSelect, typeof pg.reconciliations.$inferSelect>>,
  Check<Same<typeof lite.sandboxObjects.$inferSelect, typeof pg.sandboxObjects.$inferSelect>>,
  Check<Same<typeof lite.webhookEndpoints.$inferSelect, typeof pg.webhookEndpoints.$inferSelect>>,
  Check<Same<typeof lite.webhookDeliveries.$inferSelect, typeof pg.webhookDeliveries.$inferSelect>>,
  Check<Same<typeof lite.alertMails.$inferSelect, typeof pg.alertMails.$inferSelect>>,
];
