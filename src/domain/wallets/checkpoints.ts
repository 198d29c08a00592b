/**
 * Signed checkpoints of the ledger (docs/ledger.md): the head of every wallet's hash chain at one
 * time (its last entry's seq and hash), signed with the platform's key as receipts are, kept
 * append-only and published to the operator (GET /v1/platform/ledger-checkpoints). A later edit of
 * an entry at or before a head, or the deletion of one, no longer matches a checkpoint: `agentpay
 * ledger verify` checks each. Made by a fleet duty whenever the ledger moved since the last one,
 * and on the operator's demand.
 */
import { AppError } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { LedgerCheckpoint } from '../../store/repos/wallets.js';
import type { DomainContext } from '../platform/context.js';
import { Periodic } from '../platform/periodic.js';
import type { ChainLink } from '../payments/receipts.js';

/** The platform's signer (src/domain/payments/signing-keys.ts SigningKeys). */
export interface Signer {
  sign<T extends Record<string, unknown>>(obj: T): T & { signature: string; signingKeyId: string };
}

export const CHECKPOINT_PAGE_DEFAULT = 20;
export const CHECKPOINT_PAGE_MAX = 100;

/** The signed object: the wire form without `signature` and `signingKeyId`. */
export function unsignedCheckpoint(c: LedgerCheckpoint) {
  return { id: c.id, createdAt: iso(c.createdAt), heads: JSON.parse(c.heads) as ChainLink[] };
}

export type CheckpointView = ReturnType<typeof unsignedCheckpoint> & { signature: string; signingKeyId: string };

export function checkpointView(c: LedgerCheckpoint): CheckpointView {
  return { ...unsignedCheckpoint(c), signature: c.signature, signingKeyId: c.signingKeyId };
}

export class LedgerCheckpoints {
  private readonly periodic = new Periodic(() => this.makeIfMoved());

  constructor(private ctx: DomainContext, private signer: Signer) {}

  /** Signs and keeps the heads of every chain now. */
  async make(): Promise<CheckpointView> {
    const { ctx } = this;
    return ctx.store.tx(async (r) => {
      const heads: ChainLink[] = [];
      for (const h of await r.ledger.heads()) {
        // sealed at the store's start: an entry without a hash is one written behind the store
        if (h.hash === null) throw new AppError('INTERNAL', `wallet ${h.walletId}'s entry ${h.seq} has no hash: the ledger was written behind the store; run agentpay ledger verify`);
        heads.push({ walletId: h.walletId, seq: h.seq, hash: h.hash });
      }
      const row: LedgerCheckpoint = { id: ctx.ids.next('ledgerCheckpoint'), createdAt: ctx.clock.now(), heads: JSON.stringify(heads), signature: '', signingKeyId: '' };
      const signed = this.signer.sign(unsignedCheckpoint(row));
      await r.ledgerCheckpoints.insert({ ...row, signature: signed.signature, signingKeyId: signed.signingKeyId });
      return signed;
    });
  }

  /** A checkpoint when the heads moved since the newest one (the duty's run); undefined when they did not. */
  async makeIfMoved(): Promise<CheckpointView | undefined> {
    const [latest, heads] = await this.ctx.store.read((r) => Promise.all([r.ledgerCheckpoints.list({ limit: 1 }), r.ledger.heads()]));
    const same = latest[0] && latest[0].heads === JSON.stringify(heads.map((h) => ({ walletId: h.walletId, seq: h.seq, hash: h.hash })));
    return same ? undefined : this.make();
  }

  /** Newest first; `nextCursor` only on a full page. */
  async list(q: { limit?: number; after?: string }): Promise<{ checkpoints: CheckpointView[]; nextCursor?: string }> {
    const limit = q.limit ?? CHECKPOINT_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > CHECKPOINT_PAGE_MAX) {
      throw new AppError('VALIDATION_FAILED', `limit: must be an integer from 1 to ${CHECKPOINT_PAGE_MAX}`, { field: 'limit', location: 'querystring' });
    }
    return this.ctx.store.read(async (r) => {
      let before: { createdAt: number; id: string } | undefined;
      if (q.after !== undefined) {
        const cursor = await r.ledgerCheckpoints.get(q.after);
        if (!cursor) throw new AppError('INVALID_CURSOR', `after: ${q.after} is not a checkpoint; pass the nextCursor of the previous page, or leave it out to start from the newest`, { field: 'after' });
        before = { createdAt: cursor.createdAt, id: cursor.id };
      }
      const rows = await r.ledgerCheckpoints.list({ limit, ...(before ? { before } : {}) });
      const checkpoints = rows.map(checkpointView);
      return rows.length === limit ? { checkpoints, nextCursor: rows[rows.length - 1]!.id } : { checkpoints };
    });
  }

  /** A checkpoint every `intervalMs` when the ledger moved; a failed run is reported to `onError` and tried again next time. */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(intervalMs, onError, when);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
