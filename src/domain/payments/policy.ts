/**
 * The buyer's workspace policies, as the payment core sees them: one hook called
 * while a purchase is being authorized. The policies issue plugs its engine in here;
 * until then every purchase is allowed.
 */
import type { Repos } from '../../store/store.js';
import type { Wallet } from '../../store/repos/wallets.js';
import type { Capability } from '../../store/repos/market.js';

export interface Purchase {
  workspaceId: string;
  walletId: string;
  wallet: Wallet;
  capability: Capability;
  providerId: string;
  amountMinor: bigint;
  currency: string;
  now: number;
}

export interface PurchasePolicy {
  /**
   * Runs inside the authorization's database transaction, after the replay, frozen
   * and breaker checks and before the balance check. Refuses by throwing AppError
   * `POLICY_DENIED` (details.matchedRule) or `APPROVAL_REQUIRED` (extra {approvalId}).
   *
   * What it writes through `r` commits with the purchase; on one of those two refusals
   * it commits too (an approval request must outlive the refusal that announces it),
   * while nothing else of the purchase is written. Any other error rolls everything back.
   *
   * `transactionId` is the id the purchase's transaction gets if it is authorized: what the
   * policy writes for the purchase (an approval it uses) names it, so a refund can undo it.
   */
  check(r: Repos, purchase: Purchase, transactionId: string, prefetched?: unknown): Promise<void>;
  /**
   * Optional: starts the reads `check` needs that the wallet alone decides, with the
   * authorization's own first reads (asked for at once); what it returns is passed to
   * `check` as `prefetched`.
   */
  prefetch?(r: Repos, walletId: string): Promise<unknown>;
  /**
   * Optional: whether `check` would allow any purchase of the wallet `prefetched` was read for,
   * reading and writing nothing (its workspace has no enabled policy). The authorization is then
   * placed without reading the wallet's balance first (authorize.ts). Without this hook, or
   * without `prefetch`, `check` always runs after the balance read.
   */
  allowsAll?(prefetched: unknown): boolean;
}

export const allowAll: PurchasePolicy = {
  async check() {},
  async prefetch() {
    return undefined;
  },
  allowsAll: () => true,
};
