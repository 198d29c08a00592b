import { index, int, minor, table, text, uniqueIndex } from './kit.js';

/**
 * x402 `exact` payments (EIP-3009 transferWithAuthorization) the gateway verified for a seller
 * (src/domain/payments/x402-exact.ts). A row reserves its authorization: the nonce is unique per
 * network and token, so the same authorization cannot pay twice, whichever instance sees it.
 *
 * States: reserved (verified, the handler may run) -> settling (claimed by a settle; submitted on
 * chain) -> settled (confirmed; the sale is in the ledger) | failed (the chain refused it, recorded
 * and alerted; the settlement duty retries it while the authorization is valid) -> settling again |
 * expired (given up: the authorization expired unused, or its nonce was used without a transfer);
 * reserved -> released (the handler failed: nothing is submitted, the buyer keeps its money).
 * A `settling` row left by a crash is taken up again by the settlement duty (X402SettlementDuty).
 */
export const x402Authorizations = table('x402_authorizations', {
  id: text('id').primaryKey(),
  /** CAIP-2, e.g. eip155:8453 */
  network: text('network').notNull(),
  /** the token's address, lower case */
  asset: text('asset').notNull(),
  /** the EIP-3009 nonce (0x + 64 hex), lower case */
  nonce: text('nonce').notNull(),
  payer: text('payer').notNull(),
  payTo: text('pay_to').notNull(),
  /** token base units, decimal (uint256) */
  value: text('value').notNull(),
  validAfter: int('valid_after').notNull(),
  validBefore: int('valid_before').notNull(),
  signature: text('signature').notNull(),
  capabilityId: text('capability_id').notNull(),
  providerId: text('provider_id').notNull(),
  /** the price the authorization pays, in the capability's minor units */
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  state: text('state', { enum: ['reserved', 'settling', 'settled', 'released', 'failed', 'expired'] }).notNull(),
  /** the last transferWithAuthorization sent for it (kept as soon as it is sent, before the confirmations) */
  txHash: text('tx_hash'),
  /** the hash of the seller's answer, given by settle: what the receipt signs, also when the settlement duty records the sale */
  responseHash: text('response_hash'),
  /** the sale's transaction (transactions.id) once settled */
  transactionId: text('transaction_id'),
  attempts: int('attempts').notNull(),
  lastError: text('last_error'),
  createdAt: int('created_at').notNull(),
  updatedAt: int('updated_at').notNull(),
  settledAt: int('settled_at'),
  /** when the settlement duty found the settled transaction confirmed on chain (null: not checked yet) */
  reconciledAt: int('reconciled_at'),
}, (t) => [
  uniqueIndex('x402_authorizations_nonce').on(t.network, t.asset, t.nonce),
  index('x402_authorizations_state').on(t.state, t.updatedAt),
]);
