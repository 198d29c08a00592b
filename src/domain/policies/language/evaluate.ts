/**
 * Decides a purchase against a workspace's enabled policies, in the documented order:
 * deny, then budget, then allow, then approval (docs/policy-language.md § Order).
 * Pure: the caller supplies the facts of the purchase and what was spent today, and
 * acts on the verdict (refuses, or holds the purchase for a person).
 */
import type { CeilingRule, Condition, ConditionRule, ConditionSection, ParsedSection, PolicyType } from './ast.js';

/** What a rule can look at. */
export interface PurchaseFacts {
  /** the quoted amount, minor units */
  price: bigint;
  capability: string;
  provider: string;
  category: string;
  protocol: string;
  /** the wallet's ownerId label */
  agent: string;
  wallet: string;
  tags: readonly string[];
}

/** Spent today (UTC) before this purchase: by the paying agent wallet, and by its whole workspace. */
export interface Spend {
  agent: bigint;
  workspace: bigint;
}

export interface PolicyToEvaluate {
  id: string;
  section: ParsedSection;
}

export interface MatchedRule {
  policyId: string;
  rule: string;
}

export type StepResult = 'matched' | 'not_matched' | 'within' | 'exceeded';

export interface Step {
  policyId: string;
  policyType: PolicyType;
  result: StepResult;
  /** the rule that matched, or the ceiling that was exceeded */
  rule?: string;
}

export interface BudgetExceeded {
  ceiling: CeilingRule['scope'];
  spentMinor: bigint;
  limitMinor: bigint;
  amountMinor: bigint;
}

export type Verdict =
  | { decision: 'allow'; reason: string }
  | { decision: 'deny'; by: 'deny'; reason: string; matchedRule: MatchedRule }
  | { decision: 'deny'; by: 'budget'; reason: string; matchedRule: MatchedRule; budget: BudgetExceeded }
  | { decision: 'deny'; by: 'allow'; reason: string; allowPolicyIds: string[] }
  | { decision: 'approval'; reason: string; matchedRule: MatchedRule };

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC calendar day holding `now`: budgets count from `start` and reset at `end`. */
export function budgetDay(now: number): { start: number; end: number } {
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  return { start, end: start + DAY_MS };
}

export function conditionMatches(c: Condition, f: PurchaseFacts): boolean {
  switch (c.kind) {
    case 'and':
      return c.operands.every((o) => conditionMatches(o, f));
    case 'or':
      return c.operands.some((o) => conditionMatches(o, f));
    case 'not':
      return !conditionMatches(c.operand, f);
    case 'always':
      return true;
    case 'price':
      switch (c.op) {
        case '==': return f.price === c.value;
        case '!=': return f.price !== c.value;
        case '<': return f.price < c.value;
        case '<=': return f.price <= c.value;
        case '>': return f.price > c.value;
        case '>=': return f.price >= c.value;
      }
      return false;
    case 'priceIn':
      return c.values.includes(f.price) !== c.negated;
    case 'text':
      return (f[c.field] === c.value) === (c.op === '==');
    case 'textIn':
      return c.values.includes(f[c.field]) !== c.negated;
    case 'tag':
      return c.values.some((v) => f.tags.includes(v)) !== c.negated;
  }
}

/** The first rule of a section that matches: a section matches when any of its rules does. */
export function matchingRule(section: ConditionSection, f: PurchaseFacts): ConditionRule | undefined {
  return section.rules.find((r) => conditionMatches(r.condition, f));
}

const ORDER: readonly PolicyType[] = ['deny', 'budget', 'allow', 'approval'];

/**
 * Every enabled policy's result, in evaluation order, and the verdict: the first deny
 * that matches, else the first ceiling the purchase would exceed, else (when any allow
 * policy exists) the lack of a matching allow rule, else the first approval rule that
 * matches; otherwise the purchase is allowed.
 */
export function evaluatePolicies(policies: readonly PolicyToEvaluate[], f: PurchaseFacts, spend: Spend): { verdict: Verdict; steps: Step[] } {
  const steps: Step[] = [];
  let verdict: Verdict | undefined;
  const allowIds: string[] = [];
  let allowMatched = false;
  let approval: MatchedRule | undefined;

  for (const type of ORDER) {
    for (const { id, section } of policies.filter((p) => p.section.type === type)) {
      if (section.type === 'budget') {
        const over = section.rules.find((r) => spend[r.scope] + f.price > r.limitMinor);
        steps.push({ policyId: id, policyType: 'budget', result: over ? 'exceeded' : 'within', ...(over ? { rule: over.text } : {}) });
        if (over && !verdict) {
          const spent = spend[over.scope];
          verdict = {
            decision: 'deny', by: 'budget', matchedRule: { policyId: id, rule: over.text },
            reason: `the ${over.scope === 'agent' ? "agent wallet's" : "workspace's"} daily budget of ${over.limitMinor} would be exceeded: ${spent} spent today (UTC) and this purchase costs ${f.price}`,
            budget: { ceiling: over.scope, spentMinor: spent, limitMinor: over.limitMinor, amountMinor: f.price },
          };
        }
        continue;
      }
      const rule = matchingRule(section, f);
      steps.push({ policyId: id, policyType: section.type, result: rule ? 'matched' : 'not_matched', ...(rule ? { rule: rule.text } : {}) });
      if (!rule) {
        if (section.type === 'allow') allowIds.push(id);
        continue;
      }
      if (section.type === 'deny' && !verdict) {
        verdict = { decision: 'deny', by: 'deny', matchedRule: { policyId: id, rule: rule.text }, reason: `refused by the deny rule "${rule.text}"` };
      } else if (section.type === 'allow') {
        allowMatched = true;
      } else if (section.type === 'approval') {
        approval ??= { policyId: id, rule: rule.text };
      }
    }
    if (type === 'allow' && !verdict && allowIds.length > 0 && !allowMatched) {
      verdict = { decision: 'deny', by: 'allow', allowPolicyIds: allowIds, reason: 'no allow rule matched: once an allow policy is enabled, a purchase must match one' };
    }
  }
  verdict ??= approval
    ? { decision: 'approval', matchedRule: approval, reason: `held for a person by the approval rule "${approval.rule}"` }
    : { decision: 'allow', reason: policies.length === 0 ? 'no policy is enabled' : 'no rule refused or held the purchase' };
  return { verdict, steps };
}
