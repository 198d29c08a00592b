/** GET /v1/rail/transactions: the rail side of the caller's money, newest first. */
import { AppError } from '../../core/errors.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { railTransactionView } from './views.js';

export class RailTransactionService {
  constructor(private ctx: DomainContext) {}

  /** Every top-up, deposit and payout on the caller's wallets, newest first. */
  async list(p: Principal, q: { kind?: 'topup' | 'deposit' | 'payout'; walletId?: string; limit?: number; after?: string }) {
    const limit = q.limit ?? 50;
    return this.ctx.store.read(async (r) => {
      if (q.after !== undefined) {
        const at = await r.railTransactions.get(q.after);
        if (!at || at.tenantId !== p.tenantId) throw new AppError('INVALID_CURSOR', `after: ${q.after} is not a rail transaction of yours; pass a nextCursor you were given`, { field: 'after' });
      }
      const rows = await r.railTransactions.listByTenant(p.tenantId, {
        limit, ...(q.kind ? { kind: q.kind } : {}), ...(q.walletId ? { walletId: q.walletId } : {}), ...(q.after ? { before: q.after } : {}),
      });
      return { transactions: rows.map(railTransactionView), ...(rows.length === limit ? { nextCursor: rows.at(-1)!.id } : {}) };
    });
  }
}
