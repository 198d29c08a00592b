/**
 * Receipts: written and signed once, in the transaction that resolves a paid call,
 * and read back by the buyer's workspace and the seller. The signed object is exactly
 * `receiptView` without `signature` and `signingKeyId`, rebuilt from the stored row,
 * so a receipt read later verifies just like the one returned at the time.
 */
import { AppError, notFound, wrongKeyKind } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { Receipt } from '../../store/repos/payments.js';
import type { ReceiptUsage } from '../../store/tables/payments.js';
import type { Transaction } from '../../store/repos/payments.js';
import type { LedgerEntry } from '../../store/repos/wallets.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import type { SigningKeys } from './signing-keys.js';

export const RECEIPT_PAGE_DEFAULT = 50;
export const RECEIPT_PAGE_MAX = 200;

/** A link of a wallet's hash chain a receipt signs: the entry a resolution appended (docs/ledger.md). */
export interface ChainLink { walletId: string; seq: number; hash: string }

export function unsignedReceipt(rc: Receipt) {
  const ledger = rc.ledgerHeads === null ? undefined : (JSON.parse(rc.ledgerHeads) as ChainLink[]);
  return {
    id: rc.id,
    transactionId: rc.transactionId,
    providerId: rc.providerId,
    consumerId: rc.consumerId,
    capabilityId: rc.capabilityId,
    amount: { amountMinor: rc.amountMinor.toString(), currency: rc.currency },
    responseHash: rc.responseHash,
    status: rc.status,
    timestamp: iso(rc.timestamp),
    // a metered call's success: what was used, at what price, and what was authorized
    ...(rc.usage ? { usage: rc.usage } : {}),
    // receipts written before the hash chain have none
    ...(ledger ? { ledger } : {}),
  };
}

export type ReceiptView = ReturnType<typeof unsignedReceipt> & { signature: string; signingKeyId: string };

export function receiptView(rc: Receipt): ReceiptView {
  return { ...unsignedReceipt(rc), signature: rc.signature, signingKeyId: rc.signingKeyId };
}

/**
 * Signs and stores the receipt of a transaction's resolution; call inside its `tx`, after the
 * resolution's movements: `entries`, the ledger entries they appended, are signed with it (the
 * heads of those wallets' chains as the resolution left them). A success receipt's amount is what
 * was charged (`chargedMinor`, a metered call's units × unit price, with its `usage`), a failed
 * one's what was held and given back.
 */
export async function writeReceipt(
  r: Repos,
  deps: { ctx: Pick<DomainContext, 'clock' | 'ids'>; signingKeys: SigningKeys },
  txn: Transaction,
  status: Receipt['status'],
  responseHash: string | null,
  entries: readonly LedgerEntry[],
  usage: ReceiptUsage | null = null,
): Promise<ReceiptView> {
  const links: ChainLink[] = entries.map((e) => ({ walletId: e.walletId, seq: e.seq, hash: e.hash! }));
  const row: Receipt = {
    id: deps.ctx.ids.next('receipt'),
    transactionId: txn.id,
    providerId: txn.providerId,
    consumerId: txn.walletId,
    workspaceId: txn.workspaceId,
    capabilityId: txn.capabilityId,
    amountMinor: status === 'success' && txn.chargedMinor !== null ? txn.chargedMinor : txn.amountMinor,
    currency: txn.currency,
    responseHash,
    usage: status === 'success' ? usage : null,
    status,
    timestamp: deps.ctx.clock.now(),
    signature: '',
    signingKeyId: '',
    ledgerHeads: JSON.stringify(links),
  };
  const signed = deps.signingKeys.sign(unsignedReceipt(row));
  await r.receipts.insert({ ...row, signature: signed.signature, signingKeyId: signed.signingKeyId });
  return signed;
}

/** Buyer's workspace or seller; the operator sees every receipt. */
function canSee(p: Principal, owner: { workspaceId: string; providerId: string }): boolean {
  return p.tenantKind === 'operator' || owner.workspaceId === p.tenantId || owner.providerId === p.tenantId;
}

export class ReceiptService {
  constructor(private ctx: DomainContext) {}

  /** Newest first: a workspace's purchases or a provider's sales. `nextCursor` only on a full page. */
  list(p: Principal, q: { limit?: number; after?: string }) {
    const limit = q.limit ?? RECEIPT_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > RECEIPT_PAGE_MAX) {
      throw new AppError('VALIDATION_FAILED', `limit: must be an integer from 1 to ${RECEIPT_PAGE_MAX}`, { field: 'limit', location: 'querystring' });
    }
    const owner = p.tenantKind === 'workspace' ? { workspaceId: p.tenantId } : p.tenantKind === 'provider' ? { providerId: p.tenantId } : undefined;
    if (!owner) throw wrongKeyKind(['workspace', 'provider'], 'receipts are listed with a workspace key (its purchases) or a provider key (its sales)');
    return this.ctx.store.read(async (r) => {
      let before: { timestamp: number; id: string } | undefined;
      if (q.after !== undefined) {
        const cursor = await r.receipts.get(q.after);
        const mine = cursor && ('workspaceId' in owner ? cursor.workspaceId === owner.workspaceId : cursor.providerId === owner.providerId);
        if (!cursor || !mine) {
          throw new AppError('INVALID_CURSOR', `after: ${q.after} is not a receipt in this list; pass the nextCursor of the previous page, or leave it out to start from the newest`, { field: 'after' });
        }
        before = { timestamp: cursor.timestamp, id: cursor.id };
      }
      const rows = await r.receipts.list(owner, { limit, ...(before ? { before } : {}) });
      const receipts = rows.map(receiptView);
      return rows.length === limit ? { receipts, nextCursor: rows[rows.length - 1]!.id } : { receipts };
    });
  }

  get(p: Principal, id: string): Promise<ReceiptView> {
    return this.ctx.store.read(async (r) => {
      const rc = await r.receipts.get(id);
      if (!rc || !canSee(p, rc)) throw notFound('NOT_FOUND', 'receipt', id);
      return receiptView(rc);
    });
  }

  forTransaction(p: Principal, transactionId: string): Promise<ReceiptView[]> {
    return this.ctx.store.read(async (r) => {
      const txn = await r.transactions.get(transactionId);
      if (!txn || !canSee(p, txn)) throw notFound('NOT_FOUND', 'transaction', transactionId);
      return (await r.receipts.byTransaction(txn.id)).map(receiptView);
    });
  }
}
