/**
 * Spending policies of a workspace: applying a document (one policy per section, all
 * or nothing), listing, enabling and disabling, and the dry-run evaluation. Enforcement
 * is the PolicyEngine (src/domain/policies/policy-engine.ts); the language is src/domain/policies/language/.
 */
import { AppError, notFound, validationError, wrongKeyKind } from '../../core/errors.js';
import { iso } from '../../core/clock.js';
import { parseMinor } from '../../core/money.js';
import type { Repos } from '../../store/store.js';
import type { Policy } from '../../store/repos/policies.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import type { PolicyEngine } from './policy-engine.js';
import { parsePolicyDocument, PolicyParseError, type ParsedDocument } from './language/index.js';

export function policyView(p: Policy) {
  return {
    id: p.id,
    policyType: p.policyType,
    ...(p.name !== null ? { name: p.name } : {}),
    enabled: p.enabled,
    source: p.source,
    rules: p.rules,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export type PolicyView = ReturnType<typeof policyView>;

export interface EvaluateInput {
  walletId: string;
  capabilityId: string;
  /** default: the capability's current price */
  priceMinor?: string;
}

export interface Evaluation {
  decision: 'allow' | 'deny' | 'approval';
  matchedRule?: { policyId: string; rule: string };
  reason: string;
  /** an approval request the purchase would use, or that holds or refuses it */
  approvalId?: string;
  steps: { policyId: string; policyType: string; result: string; rule?: string }[];
}

/** The parse error as the API's 400: the message and details name line, column and what was expected. */
function documentError(e: PolicyParseError): AppError {
  return validationError('document', e.message, { line: e.line, column: e.column, expected: e.expected });
}

export class PolicyService {
  constructor(private ctx: DomainContext, private engine: PolicyEngine) {}

  private async owned(r: Repos, p: Principal, id: string): Promise<Policy> {
    const policy = await r.policies.get(id);
    if (!policy || policy.workspaceId !== p.tenantId) throw new AppError('NOT_FOUND', `policy ${id} not found`, { id });
    return policy;
  }

  /** One policy per section of the document, enabled; a document with any error creates none. */
  async apply(p: Principal, document: string): Promise<Policy[]> {
    if (p.tenantKind !== 'workspace') throw wrongKeyKind(['workspace'], 'policies belong to a workspace: use a workspace key');
    let parsed: ParsedDocument;
    try {
      parsed = parsePolicyDocument(document);
    } catch (e) {
      throw e instanceof PolicyParseError ? documentError(e) : e;
    }
    const now = this.ctx.clock.now();
    const created: Policy[] = parsed.sections.map((s, ordinal) => ({
      id: this.ctx.ids.next('policy'),
      workspaceId: p.tenantId,
      policyType: s.type,
      name: s.name ?? null,
      enabled: true,
      source: s.source,
      rules: s.rules.map((rule) => rule.text),
      ordinal,
      createdAt: now,
      updatedAt: now,
    }));
    await this.ctx.store.tx(async (r) => {
      for (const policy of created) await r.policies.insert(policy);
    });
    return created;
  }

  list(p: Principal): Promise<Policy[]> {
    return this.ctx.store.read((r) => r.policies.listByWorkspace(p.tenantId));
  }

  /** Takes effect from the next purchase: the engine reads the enabled policies inside each authorization. */
  setEnabled(p: Principal, id: string, enabled: boolean): Promise<Policy> {
    return this.ctx.store.tx(async (r) => {
      const policy = await this.owned(r, p, id);
      if (policy.enabled === enabled) return policy;
      const updatedAt = this.ctx.clock.now();
      await r.policies.update(policy.id, { enabled, updatedAt });
      return { ...policy, enabled, updatedAt };
    });
  }

  /** What an authorization would decide now for this wallet and capability; moves nothing, creates no approval. */
  async evaluate(p: Principal, input: EvaluateInput): Promise<Evaluation> {
    const price = input.priceMinor === undefined ? undefined : parseMinor(input.priceMinor, 'priceMinor', { allowZero: true });
    return this.ctx.store.read(async (r) => {
      const wallet = await r.wallets.get(input.walletId);
      if (!wallet || wallet.tenantId !== p.tenantId) throw notFound('WALLET_NOT_FOUND', 'wallet', input.walletId);
      const capability = await r.capabilities.get(input.capabilityId);
      if (!capability) throw notFound('CAPABILITY_NOT_FOUND', 'capability', input.capabilityId);
      const { verdict, steps, standing } = await this.engine.decide(r, {
        workspaceId: wallet.tenantId, walletId: wallet.id, wallet, capability, providerId: capability.providerId,
        amountMinor: price ?? capability.priceMinor, currency: capability.currency, now: this.ctx.clock.now(),
      });
      const out = { steps, ...('matchedRule' in verdict ? { matchedRule: verdict.matchedRule } : {}) };
      if (verdict.decision !== 'approval' || !standing) return { decision: verdict.decision, reason: verdict.reason, ...out };
      switch (standing.kind) {
        case 'covered':
          return { decision: 'allow', reason: `approval ${standing.approval.id} (up to ${standing.approval.amountMinor}) covers it; the next purchase uses it up`, approvalId: standing.approval.id, ...out };
        case 'denied':
          return { decision: 'deny', reason: `a person denied this purchase (approval ${standing.approval.id}); the denial stands until ${iso(standing.standsUntil)}`, approvalId: standing.approval.id, ...out };
        case 'pending':
          return { decision: 'approval', reason: `${verdict.reason}; approval ${standing.approval.id} is pending`, approvalId: standing.approval.id, ...out };
        case 'none':
          return { decision: 'approval', reason: verdict.reason, ...out };
      }
    });
  }
}
