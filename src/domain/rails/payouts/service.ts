/**
 * Payouts from a provider's settlement wallet to its registered destination.
 *
 * A payout is checked (destination usable, payouts not paused by reconciliation,
 * screening, pricing for USDC, funds), then in one transaction the wallet is debited
 * (`payout` entry) and the payout recorded as `submitted`; only then is the rail asked
 * to send it. It later becomes `confirmed`, or `returned` with a new `payout_return`
 * entry re-crediting the wallet. If the rail refuses that first submission
 * (RailUnavailable) the payout is `failed`, re-credited at once, and the request answers
 * 503 TREASURY_UNAVAILABLE. Any other error of the rail (a lost response, a timeout)
 * leaves the outcome unknown: the rail may hold the payout. It stays `submitted`
 * without an external reference, the request answers it, and the rail job submits it
 * again (the rail's submit is idempotent on the payout id) until the rail answers;
 * a re-submission is never reversed, even when refused, since an earlier attempt may
 * be on its way.
 *
 * A payout its rail never resolves stays `submitted`; the operator, having asked the rail out
 * of band, closes it out with `resolve`: `paid` (confirmed; the debit stands) or `failed`
 * (re-credited as a refused submission is), with a reason, unless the rail's own record
 * (`lookup`) contradicts that. It races the rail job like any resolution: one wins.
 *
 * Idempotency: with an `idempotency-key`, the same key and body answer the first
 * payout (however many times, however concurrently: the key is unique per provider and
 * checked inside the debiting transaction); the same key with another body is 409
 * CONFLICT. A failed payout frees its key, so retrying later with it is a new attempt.
 *
 * The work is split as payments/ is: create.ts (checks, debit, handing over to the rail),
 * follow.ts (the rail job: submitting again, following to confirmed or returned), resolve.ts
 * (the operator's resolution), list.ts (reads), shared.ts (the deps, the reversal); this class
 * holds the in-process marks they share and is what callers use.
 */
import type { ResolveOutcome } from 'agentpay-sdk/contract';
import type { RailTransaction } from '../../../store/repos/rails.js';
import type { Principal } from '../../tenancy/api-keys.js';
import type { DomainContext } from '../../platform/context.js';
import type { WalletService } from '../../wallets/wallets.js';
import type { RailsSettings } from '../config.js';
import type { RailRegistry } from '../registry.js';
import { createPayout, submitPayout, type PayoutInput, type PayoutResult } from './create.js';
import { claimResubmission, followAllPayouts, followPayout } from './follow.js';
import { resolvePayout } from './resolve.js';
import { getPayout, listPayouts, type PayoutListInput } from './list.js';
import type { PayoutDeps } from './shared.js';

export type { PayoutInput, PayoutResult } from './create.js';
export type { PayoutListInput } from './list.js';

export class PayoutService {
  private readonly deps: PayoutDeps;

  constructor(ctx: DomainContext, registry: RailRegistry, wallets: WalletService, settings: Pick<RailsSettings, 'priceBandBps'>) {
    this.deps = { ctx, registry, wallets, settings, firstSubmissions: new Set(), submitting: new Set() };
  }

  create(p: Principal, input: PayoutInput, idempotencyKey?: string): Promise<PayoutResult> {
    return createPayout(this.deps, p, input, idempotencyKey);
  }

  /** Hands a submitted payout to its rail: see `submitPayout` (./create.ts). */
  submit(t: RailTransaction, attempt: 'first' | 'again'): Promise<RailTransaction> {
    return submitPayout(this.deps, t, attempt);
  }

  claimResubmission(t: RailTransaction): Promise<RailTransaction | undefined> {
    return claimResubmission(this.deps, t);
  }

  follow(t: RailTransaction): Promise<RailTransaction['state']> {
    return followPayout(this.deps, t);
  }

  followAll(pageSize = 500): Promise<number> {
    return followAllPayouts(this.deps, pageSize);
  }

  resolve(p: Principal, id: string, input: { outcome: ResolveOutcome; reason: string }) {
    return resolvePayout(this.deps, p, id, input);
  }

  get(p: Principal, id: string) {
    return getPayout(this.deps, p, id);
  }

  list(p: Principal, q: PayoutListInput) {
    return listPayouts(this.deps, p, q);
  }
}
