/** The payment core behind the four /v1/x402 routes, built once per gateway. */
import type { Principal } from '../tenancy/api-keys.js';
import type { ReceiptView } from './receipts.js';
import { authorizePayment, type Authorization, type AuthorizeInput } from './authorize.js';
import type { Replay } from './idempotency.js';
import { issueChallenge, type Challenge } from './challenge.js';
import { completeTransaction, type CompleteInput } from './complete.js';
import type { PaymentDeps } from './deps.js';
import { failTransaction, type FailInput } from './fail.js';
import { alreadyResolved, expireTransaction, ownTransaction } from './resolution.js';
import { VerificationKeys } from './verification-keys.js';
import { IssuedChallenges } from './issued-challenges.js';
import { SettlementWallets } from './settlement-wallets.js';
import { ExpirySweeper } from './sweeper.js';
import { BreakerService } from './breaker.js';
import { ReceiptService } from './receipts.js';
import { RatingService } from '../market/ratings.js';
import type { WalletService } from '../wallets/wallets.js';
import { SessionService } from './sessions/service.js';

export class PaymentService {
  private keys: VerificationKeys;
  private issued = new IssuedChallenges();
  private settlement = new SettlementWallets();

  constructor(private deps: PaymentDeps) {
    this.keys = new VerificationKeys(deps.ctx.store);
  }

  async challenge(p: Principal, capabilityId: string): Promise<Challenge> {
    const challenge = await issueChallenge(this.deps, p, capabilityId);
    this.issued.remember(challenge, this.deps.ctx.clock.now());
    return challenge;
  }

  authorize(p: Principal, input: AuthorizeInput): Promise<Authorization | Replay> {
    return authorizePayment(this.deps, this.keys, p, input, this.issued);
  }

  complete(p: Principal, input: CompleteInput): Promise<ReceiptView> {
    return completeTransaction(this.deps, p, input, this.settlement);
  }

  fail(p: Principal, input: FailInput): Promise<ReceiptView> {
    return failTransaction(this.deps, p, input);
  }

  /**
   * Sandbox only (the caller checks: POST /v1/sandbox/transactions/:id/expire): the seller's authorized
   * transaction expires now, exactly as the sweeper expires it at the end of its in-flight time (the
   * hold refunded, a failed receipt, `payment.refunded`). Another seller's is 404; a resolved one 409.
   */
  expireNow(p: Principal, transactionId: string): Promise<ReceiptView> {
    return this.deps.ctx.store.tx(async (r) => {
      const txn = await ownTransaction(r, p, transactionId);
      if (txn.status !== 'authorized') throw alreadyResolved(txn);
      return expireTransaction(r, this.deps, txn);
    });
  }
}

export type { PaymentDeps, PaymentSettings } from './deps.js';
export type { PurchasePolicy, Purchase } from './policy.js';
export { allowAll } from './policy.js';
export type { Challenge } from './challenge.js';
export type { PaymentProof } from './proof.js';
export type { Authorization } from './authorize.js';
export type { Replay } from './idempotency.js';
export { ExpirySweeper, BreakerService, SessionService };

/** Everything of payments, receipts, ratings and the breaker a gateway serves, from one set of deps. */
export function paymentServices(deps: PaymentDeps, wallets: WalletService) {
  const sessions = new SessionService(deps);
  return {
    payments: new PaymentService(deps),
    sessions,
    sweeper: new ExpirySweeper(deps, sessions),
    receipts: new ReceiptService(deps.ctx),
    ratings: new RatingService(deps.ctx),
    breakers: new BreakerService(deps.ctx, wallets),
  };
}
