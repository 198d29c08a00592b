/**
 * Ratings of sellers by the wallets that paid them: one per transaction, and only
 * for a transaction with a receipt. Refusals follow the specification: no receipt is
 * 404, someone else's purchase or the wrong provider is 403, a second rating is 400.
 */
import { AppError, forbidden, notFound, validationError, wrongKeyKind } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Rating } from '../../store/repos/market.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';

export interface RateInput {
  transactionId: string;
  rating: number;
  raterWalletId: string;
  raterAgentId?: string;
}

export function ratingView(r: Rating) {
  return {
    id: r.id,
    providerId: r.providerId,
    transactionId: r.transactionId,
    rating: r.rating,
    raterWalletId: r.walletId,
    raterAgentId: r.agentId,
    createdAt: iso(r.createdAt),
  };
}

export class RatingService {
  constructor(private ctx: DomainContext) {}

  rate(p: Principal, providerId: string, input: RateInput) {
    if (p.tenantKind !== 'workspace') throw wrongKeyKind(['workspace'], 'sellers are rated with a workspace key, by the workspace whose wallet paid');
    if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) throw validationError('rating', 'must be an integer from 1 to 5');
    return this.ctx.store.tx(async (r) => {
      const receipts = await r.receipts.byTransaction(input.transactionId);
      const txn = receipts.length > 0 ? await r.transactions.get(input.transactionId) : undefined;
      if (!txn) throw notFound('NOT_FOUND', 'receipt for transaction', input.transactionId);
      if (txn.workspaceId !== p.tenantId || txn.walletId !== input.raterWalletId) {
        throw forbidden(`transaction ${txn.id} was not paid by wallet ${input.raterWalletId} of this workspace`, { transactionId: txn.id });
      }
      if (txn.providerId !== providerId) throw forbidden(`transaction ${txn.id} was a purchase from another provider`, { transactionId: txn.id, providerId });
      if (await r.ratings.byTransaction(txn.id)) {
        throw new AppError('VALIDATION_FAILED', `transactionId: transaction ${txn.id} is already rated; there is one rating per transaction`, { field: 'transactionId' });
      }
      const rating: Rating = {
        id: this.ctx.ids.next('rating'),
        providerId,
        transactionId: txn.id,
        walletId: txn.walletId,
        workspaceId: txn.workspaceId,
        agentId: input.raterAgentId ?? null,
        rating: input.rating,
        createdAt: this.ctx.clock.now(),
      };
      await r.ratings.insert(rating);
      return ratingView(rating);
    });
  }
}
