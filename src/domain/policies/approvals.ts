/**
 * Approval requests: purchases an approval rule held for a person. A person approves
 * or denies a pending request; an approved one pays for exactly one later purchase by
 * the same wallet of the same capability, up to the approved amount; a denied one
 * refuses that purchase (the same or a higher amount) for DENIAL_STANDS_MS. When both
 * an approval and a denial cover a purchase, the later decision (resolvedAt) wins, and
 * the denial on a tie.
 * A purchase that uses an approval and is then refunded (the call failed, or expired
 * unresolved) bought nothing, so it gives the approval back: the refund clears `usedAt`
 * (src/domain/payments/resolution.ts), and the approval covers the next purchase. A purchase
 * past its in-flight time and not refunded yet is a refund due: its approval covers the next
 * purchase already, which takes it over, so the later refund finds nothing to give back.
 * Requests belong to the workspace of the wallet; another tenant's are "not found".
 */
import { AppError } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { Approval, ApprovalStatus } from '../../store/repos/policies.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { recordEvent } from '../platform/events.js';
import type { Purchase } from '../payments/policy.js';
import type { MatchedRule } from './language/index.js';
import { DAY_MS } from './language/evaluate.js';

/** How long a denial refuses the same purchase; after it, the purchase is held and asked about again. */
export const DENIAL_STANDS_MS = DAY_MS;

export function approvalView(a: Approval) {
  return {
    id: a.id,
    agentId: a.agentId,
    walletId: a.walletId,
    capabilityId: a.capabilityId,
    amountMinor: a.amountMinor.toString(),
    currency: a.currency,
    rule: a.rule,
    policyId: a.policyId,
    status: a.status,
    createdAt: iso(a.createdAt),
    ...(a.resolvedBy !== null ? { resolvedBy: a.resolvedBy } : {}),
    ...(a.resolvedAt !== null ? { resolvedAt: iso(a.resolvedAt) } : {}),
    ...(a.usedAt !== null ? { usedAt: iso(a.usedAt) } : {}),
    // the deadline on the record, so that clients say it without knowing DENIAL_STANDS_MS
    ...(a.status === 'denied' && a.resolvedAt !== null ? { standsUntil: iso(a.resolvedAt + DENIAL_STANDS_MS) } : {}),
  };
}

export type ApprovalView = ReturnType<typeof approvalView>;

/** Where a held purchase stands with the approvals of its wallet and capability. */
export type Standing =
  /**
   * an approved, unused approval for at least this amount, decided after any denial that
   * covers it: the purchase may use it. If its `usedByTransactionId` is set, that purchase is
   * a refund due, and this one takes the approval over from it
   */
  | { kind: 'covered'; approval: Approval }
  /** a person denied this purchase (at this amount or less) within DENIAL_STANDS_MS, and approved none covering it since */
  | { kind: 'denied'; approval: Approval; standsUntil: number }
  /** the same purchase already waits for a person */
  | { kind: 'pending'; approval: Approval }
  | { kind: 'none' };

export async function standingOf(r: Repos, p: Purchase): Promise<Standing> {
  const same = (a: Approval) => a.currency === p.currency;
  const approved = (await r.approvals.forPurchase(p.walletId, p.capability.id, 'approved')).filter((a) => same(a) && a.amountMinor >= p.amountMinor);
  // one more query only if a purchase used one of them: that purchase may be a refund due
  const due = approved.some((a) => a.usedByTransactionId !== null)
    ? new Set((await r.approvals.refundDue(p.walletId, p.capability.id, p.now)).map((a) => a.id))
    : undefined;
  const covering = approved.filter((a) => a.usedAt === null || due?.has(a.id));
  const denied = await r.approvals.forPurchase(p.walletId, p.capability.id, 'denied');
  const denials = denied.filter((a) => same(a) && p.amountMinor >= a.amountMinor && a.resolvedAt !== null && p.now < a.resolvedAt + DENIAL_STANDS_MS);
  // a person may have said yes and no to the same purchase (pending requests at two prices):
  // the most recent decision stands, and a denial wins a tie
  const approval = latestDecision(covering);
  const denial = latestDecision(denials);
  if (denial && (!approval || decidedAt(denial) >= decidedAt(approval))) {
    return { kind: 'denied', approval: denial, standsUntil: decidedAt(denial) + DENIAL_STANDS_MS };
  }
  if (approval) return { kind: 'covered', approval };
  const pending = await r.approvals.forPurchase(p.walletId, p.capability.id, 'pending');
  const waiting = pending.find((a) => same(a) && a.amountMinor === p.amountMinor);
  return waiting ? { kind: 'pending', approval: waiting } : { kind: 'none' };
}

/** A decided approval's resolvedAt (always set once approved or denied). */
const decidedAt = (a: Approval) => a.resolvedAt ?? a.createdAt;

/** The one decided last; of equal times, the one requested last (the list is oldest first). */
function latestDecision(list: readonly Approval[]): Approval | undefined {
  return list.reduce<Approval | undefined>((best, a) => (!best || decidedAt(a) >= decidedAt(best) ? a : best), undefined);
}

/** A new pending request for the purchase, naming the rule that held it, announced to the workspace (approval.requested). */
export async function requestApproval(r: Repos, ctx: Pick<DomainContext, 'ids' | 'clock'>, p: Purchase, matched: MatchedRule): Promise<Approval> {
  const approval: Approval = {
    id: ctx.ids.next('approval'),
    workspaceId: p.workspaceId,
    walletId: p.walletId,
    agentId: p.wallet.ownerId,
    capabilityId: p.capability.id,
    amountMinor: p.amountMinor,
    currency: p.currency,
    policyId: matched.policyId,
    rule: matched.rule,
    status: 'pending',
    createdAt: p.now,
    resolvedBy: null,
    resolvedAt: null,
    usedAt: null,
    usedByTransactionId: null,
  };
  await r.approvals.insert(approval);
  await recordEvent(r, ctx, p.workspaceId, 'approval.requested', {
    approvalId: approval.id, walletId: approval.walletId, agentId: approval.agentId, capabilityId: approval.capabilityId,
    amountMinor: approval.amountMinor.toString(), currency: approval.currency, policyId: approval.policyId, rule: approval.rule,
  });
  return approval;
}

export class ApprovalService {
  constructor(private ctx: DomainContext) {}

  private async owned(r: Repos, p: Principal, id: string): Promise<Approval> {
    const a = await r.approvals.get(id);
    if (!a || a.workspaceId !== p.tenantId) throw new AppError('NOT_FOUND', `approval ${id} not found`, { id });
    return a;
  }

  list(p: Principal, status?: ApprovalStatus): Promise<Approval[]> {
    return this.ctx.store.read((r) => r.approvals.listByWorkspace(p.tenantId, status));
  }

  get(p: Principal, id: string): Promise<Approval> {
    return this.ctx.store.read((r) => this.owned(r, p, id));
  }

  /** pending -> approved or denied, once; `resolvedBy` defaults to the id of the key that decided. */
  resolve(p: Principal, id: string, decision: 'approved' | 'denied', resolvedBy?: string): Promise<Approval> {
    return this.ctx.store.tx(async (r) => {
      const a = await this.owned(r, p, id);
      const patch = { status: decision, resolvedBy: resolvedBy?.trim() || p.keyId, resolvedAt: this.ctx.clock.now() };
      if (a.status !== 'pending' || !(await r.approvals.resolve(a.id, patch))) {
        const now = a.status !== 'pending' ? a : (await r.approvals.get(a.id))!;
        throw new AppError('CONFLICT', `approval ${a.id} is already ${now.status}${now.resolvedBy ? ` (by ${now.resolvedBy})` : ''}; a decision is final`, {
          approvalId: a.id, status: now.status,
        });
      }
      return { ...a, ...patch };
    });
  }
}
