/**
 * The workspace policies as the payment core enforces them (the PurchasePolicy hook of
 * src/domain/payments/policy.ts). It reads the workspace's enabled policies, today's
 * spend from the ledger and the purchase's approvals, lets the pure evaluator decide
 * (deny, budget, allow, approval: docs/policy-language.md § Order), and acts: refuses
 * with POLICY_DENIED, holds with APPROVAL_REQUIRED (keeping the request), or lets the
 * purchase through, using up the approval that covered it and naming the purchase's
 * transaction on it, so a refund of that transaction gives it back. It never moves money.
 */
import { AppError } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { Policy } from '../../store/repos/policies.js';
import type { DomainContext } from '../platform/context.js';
import type { Purchase, PurchasePolicy } from '../payments/policy.js';
import { budgetDay, evaluatePolicies, parsePolicyDocument, type ParsedSection, type PurchaseFacts, type Spend, type Step, type Verdict } from './language/index.js';
import { requestApproval, standingOf, type Standing } from './approvals.js';

export interface Decision {
  verdict: Verdict;
  steps: Step[];
  /** for a purchase an approval rule holds: where it stands with its approvals */
  standing?: Standing;
}

export function factsOf(p: Purchase): PurchaseFacts {
  return {
    price: p.amountMinor,
    capability: p.capability.id,
    provider: p.providerId,
    category: p.capability.category,
    protocol: p.capability.protocol,
    agent: p.wallet.ownerId,
    wallet: p.walletId,
    tags: p.capability.tags,
  };
}

export class PolicyEngine implements PurchasePolicy {
  /** parsed sections by policy id: a policy's source never changes, only whether it is enabled */
  private parsed = new Map<string, ParsedSection>();

  constructor(private ctx: Pick<DomainContext, 'ids' | 'clock'>) {}

  private sectionOf(p: Policy): ParsedSection {
    let s = this.parsed.get(p.id);
    if (!s) {
      // the source was parsed when the policy was applied; a failure here is a bug
      const sections = parsePolicyDocument(p.source).sections;
      if (sections.length !== 1) throw new Error(`policy ${p.id}: its source holds ${sections.length} sections`);
      s = sections[0]!;
      this.parsed.set(p.id, s);
    }
    return s;
  }

  /** The workspace's enabled policies, read with the authorization's first reads (PurchasePolicy.prefetch). */
  prefetch(r: Repos, walletId: string): Promise<Policy[]> {
    return r.policies.listEnabledOfWallet(walletId);
  }

  /** No enabled policy in the wallet's workspace: every purchase is allowed, with nothing read or written. */
  allowsAll(prefetched: unknown): boolean {
    return Array.isArray(prefetched) && prefetched.length === 0;
  }

  /**
   * The decision for a purchase, writing nothing: the dry run of POST /v1/policies/evaluate uses it
   * as is. `enabled`: the workspace's enabled policies, when `prefetch` read them already.
   */
  async decide(r: Repos, p: Purchase, enabled?: Policy[]): Promise<Decision> {
    enabled ??= await r.policies.listEnabled(p.workspaceId);
    const policies = enabled.map((x) => ({ id: x.id, section: this.sectionOf(x) }));
    const scopes = new Set(policies.flatMap(({ section }) => (section.type === 'budget' ? section.rules.map((c) => c.scope) : [])));
    const spend: Spend = { agent: 0n, workspace: 0n };
    if (scopes.size > 0) {
      const { start, end } = budgetDay(p.now);
      // at p.now: a call past its in-flight time counts as refunded even before the sweeper refunds it
      if (scopes.has('agent')) spend.agent = await r.spend.byWallet(p.walletId, start, end, p.now);
      if (scopes.has('workspace')) spend.workspace = await r.spend.byWorkspace(p.workspaceId, start, end, p.now);
    }
    const { verdict, steps } = evaluatePolicies(policies, factsOf(p), spend);
    if (verdict.decision !== 'approval') return { verdict, steps };
    return { verdict, steps, standing: await standingOf(r, p) };
  }

  async check(r: Repos, p: Purchase, transactionId: string, prefetched?: unknown): Promise<void> {
    const { verdict, standing } = await this.decide(r, p, prefetched as Policy[] | undefined);
    if (verdict.decision === 'allow') return;
    if (verdict.decision === 'deny') throw policyDenied(verdict, p);
    const matchedRule = verdict.matchedRule;
    switch (standing?.kind) {
      case 'covered':
        // the one purchase this approval pays for; it commits (or rolls back) with the purchase.
        // Used already, it is a refund due's (standingOf): taken over only if still that one's
        if (await r.approvals.use(standing.approval.id, p.now, transactionId, standing.approval.usedByTransactionId)) return;
        break;
      case 'denied': {
        const a = standing.approval;
        throw new AppError('POLICY_DENIED', `a person denied this purchase (approval ${a.id}${a.resolvedBy ? `, by ${a.resolvedBy}` : ''}); the denial stands until ${iso(standing.standsUntil)}. Do not retry`, {
          matchedRule, approvalId: a.id, deniedAt: iso(a.resolvedAt!), standsUntil: iso(standing.standsUntil),
        });
      }
      case 'pending':
        throw approvalRequired(standing.approval.id, matchedRule);
    }
    const approval = await requestApproval(r, this.ctx, p, matchedRule);
    throw approvalRequired(approval.id, matchedRule);
  }
}

function approvalRequired(approvalId: string, matchedRule: { policyId: string; rule: string }): AppError {
  return new AppError(
    'APPROVAL_REQUIRED',
    `a person must approve this purchase: the approval rule "${matchedRule.rule}" matched. Approval ${approvalId} is pending; once it is approved, retry once`,
    { approvalId, matchedRule },
    { approvalId },
  );
}

function policyDenied(v: Extract<Verdict, { decision: 'deny' }>, p: Purchase): AppError {
  switch (v.by) {
    case 'deny':
      return new AppError('POLICY_DENIED', `${v.reason}. Do not retry`, { matchedRule: v.matchedRule });
    case 'budget':
      return new AppError('POLICY_DENIED', `${v.reason}; the budget resets at ${iso(budgetDay(p.now).end)}`, {
        matchedRule: v.matchedRule,
        ceiling: v.budget.ceiling,
        spentMinor: v.budget.spentMinor.toString(),
        limitMinor: v.budget.limitMinor.toString(),
        amountMinor: v.budget.amountMinor.toString(),
        resetsAt: iso(budgetDay(p.now).end),
      });
    case 'allow':
      return new AppError('POLICY_DENIED', v.reason, { allowPolicyIds: v.allowPolicyIds });
  }
}
