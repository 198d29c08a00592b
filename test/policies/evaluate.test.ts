import { describe, expect, it } from 'vitest';
import { budgetDay, evaluatePolicies, parsePolicyDocument, type PurchaseFacts, type Spend } from '../../src/domain/policies/language/index.js';

const FACTS: PurchaseFacts = {
  price: 600n, capability: 'cap_1', provider: 'prv_1', category: 'research', protocol: 'rest', agent: 'scout', wallet: 'wal_1', tags: ['beta', 'nlp'],
};
const NOTHING_SPENT: Spend = { agent: 0n, workspace: 0n };

/** Each section of the document as an enabled policy, ids pol_1, pol_2, … in document order. */
function policies(text: string) {
  return parsePolicyDocument(text).sections.map((section, i) => ({ id: `pol_${i + 1}`, section }));
}

const decide = (text: string, facts: Partial<PurchaseFacts> = {}, spend = NOTHING_SPENT) => evaluatePolicies(policies(text), { ...FACTS, ...facts }, spend);

describe('evaluatePolicies: conditions', () => {
  it('matches each field of the purchase', () => {
    const matches = (rule: string, facts: Partial<PurchaseFacts> = {}) => decide(`deny:\n  ${rule}\n`, facts).verdict.decision === 'deny';
    expect(matches('price >= 600')).toBe(true);
    expect(matches('price < 600')).toBe(false);
    expect(matches('price in [1, 600]')).toBe(true);
    expect(matches('price not in [600]')).toBe(false);
    expect(matches('capability == "cap_1"')).toBe(true);
    expect(matches('capability != "cap_1"')).toBe(false);
    expect(matches('provider in ["prv_2", "prv_1"]')).toBe(true);
    expect(matches('category not in ["research"]')).toBe(false);
    expect(matches('protocol == "mcp"')).toBe(false);
    expect(matches('agent == "scout"')).toBe(true);
    expect(matches('wallet == "wal_2"')).toBe(false);
    expect(matches('tag "nlp"')).toBe(true);
    expect(matches('tag in ["x", "beta"]')).toBe(true);
    expect(matches('tag not in ["beta"]')).toBe(false);
    expect(matches('not tag "beta"', { tags: [] })).toBe(true);
    expect(matches('(price > 1000 or tag "nlp") and not agent == "other"')).toBe(true);
    expect(matches('always')).toBe(true);
    expect(matches('category == "Research"')).toBe(false); // text is compared exactly
  });

  it('matches a section when any of its rules does, naming the first that did', () => {
    const { verdict } = decide('deny:\n  price > 1000\n  tag "beta"\n  category == "research"\n');
    expect(verdict).toMatchObject({ decision: 'deny', matchedRule: { policyId: 'pol_1', rule: 'tag "beta"' } });
  });
});

describe('evaluatePolicies: order', () => {
  it('refuses with deny before it counts the budget, checks allow rules, or holds for approval', () => {
    const { verdict, steps } = decide('approval:\n  always\nallow:\n  protocol == "mcp"\nbudget:\n  per agent 10 per day\ndeny:\n  tag "beta"\n');
    expect(verdict).toMatchObject({ decision: 'deny', by: 'deny', matchedRule: { policyId: 'pol_4', rule: 'tag "beta"' } });
    expect(steps).toEqual([
      { policyId: 'pol_4', policyType: 'deny', result: 'matched', rule: 'tag "beta"' },
      { policyId: 'pol_3', policyType: 'budget', result: 'exceeded', rule: 'per agent 10 per day' },
      { policyId: 'pol_2', policyType: 'allow', result: 'not_matched' },
      { policyId: 'pol_1', policyType: 'approval', result: 'matched', rule: 'always' },
    ]);
  });

  it('refuses over budget before it checks allow rules or holds for approval', () => {
    const { verdict } = decide('approval:\n  always\nbudget:\n  per agent 1000 per day\n', {}, { agent: 401n, workspace: 0n });
    expect(verdict).toMatchObject({ decision: 'deny', by: 'budget', budget: { ceiling: 'agent', spentMinor: 401n, limitMinor: 1000n, amountMinor: 600n } });
  });

  it('refuses when allow policies exist and none matches, before holding for approval', () => {
    expect(decide('approval:\n  always\nallow:\n  protocol == "mcp"\n').verdict).toMatchObject({ decision: 'deny', by: 'allow', allowPolicyIds: ['pol_2'], reason: expect.stringContaining('no allow rule matched') });
    expect(decide('approval:\n  always\nallow:\n  protocol == "mcp"\nallow:\n  protocol == "rest"\n').verdict).toMatchObject({ decision: 'approval', matchedRule: { policyId: 'pol_1' } });
  });

  it('holds for approval only when nothing refused; allows when no rule refuses or holds', () => {
    expect(decide('approval:\n  price > 500\n').verdict).toMatchObject({ decision: 'approval', matchedRule: { rule: 'price > 500' } });
    expect(decide('approval:\n  price > 500\n', { price: 500n }).verdict.decision).toBe('allow');
    expect(decide('deny:\n  price > 5000\n').verdict).toEqual({ decision: 'allow', reason: 'no rule refused or held the purchase' });
    expect(evaluatePolicies([], FACTS, NOTHING_SPENT)).toEqual({ verdict: { decision: 'allow', reason: 'no policy is enabled' }, steps: [] });
  });
});

describe('evaluatePolicies: budgets', () => {
  it('allows up to the ceiling exactly and refuses one minor unit beyond, per agent and per workspace', () => {
    const doc = 'budget:\n  per agent 1000 per day\n  per workspace 5000 per day\n';
    expect(decide(doc, {}, { agent: 400n, workspace: 400n }).verdict.decision).toBe('allow');
    expect(decide(doc, {}, { agent: 401n, workspace: 401n }).verdict).toMatchObject({ decision: 'deny', budget: { ceiling: 'agent' } });
    expect(decide(doc, {}, { agent: 0n, workspace: 4401n }).verdict).toMatchObject({ decision: 'deny', budget: { ceiling: 'workspace', spentMinor: 4401n, limitMinor: 5000n } });
  });

  it('applies the strictest of several budget policies', () => {
    const { verdict } = decide('budget:\n  per agent 5000 per day\nbudget:\n  per agent 700 per day\n', {}, { agent: 200n, workspace: 0n });
    expect(verdict).toMatchObject({ decision: 'deny', matchedRule: { policyId: 'pol_2', rule: 'per agent 700 per day' } });
  });

  it('counts the UTC calendar day: from midnight UTC to the next', () => {
    const noon = Date.UTC(2026, 2, 14, 12, 30);
    expect(budgetDay(noon)).toEqual({ start: Date.UTC(2026, 2, 14), end: Date.UTC(2026, 2, 15) });
    expect(budgetDay(Date.UTC(2026, 2, 15))).toEqual({ start: Date.UTC(2026, 2, 15), end: Date.UTC(2026, 2, 16) });
    expect(budgetDay(Date.UTC(2026, 2, 15) - 1).start).toBe(Date.UTC(2026, 2, 14));
  });
});
