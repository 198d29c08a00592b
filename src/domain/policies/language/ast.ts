/**
 * The parsed form of a policy document (docs/policy-language.md). Plain data: the
 * parser makes it, the evaluator reads it, nothing here does I/O, so the CLI can lint
 * documents offline with the same code the gateway enforces them with.
 */

export const POLICY_TYPES = ['approval', 'deny', 'allow', 'budget'] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

/** Section types whose rules are conditions over a purchase. */
export type ConditionPolicyType = Exclude<PolicyType, 'budget'>;

/** Fields compared as text; `price` is the one number. */
export const TEXT_FIELDS = ['capability', 'provider', 'category', 'protocol', 'agent', 'wallet'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

export const ORDER_OPS = ['<', '<=', '>', '>='] as const;
export const EQUALITY_OPS = ['==', '!='] as const;
export type CompareOp = (typeof EQUALITY_OPS)[number] | (typeof ORDER_OPS)[number];

/** A condition over one purchase. */
export type Condition =
  | { kind: 'and'; operands: Condition[] }
  | { kind: 'or'; operands: Condition[] }
  | { kind: 'not'; operand: Condition }
  /** matches every purchase */
  | { kind: 'always' }
  | { kind: 'price'; op: CompareOp; value: bigint }
  | { kind: 'priceIn'; values: bigint[]; negated: boolean }
  | { kind: 'text'; field: TextField; op: '==' | '!='; value: string }
  | { kind: 'textIn'; field: TextField; values: string[]; negated: boolean }
  /** `tag "x"` is `tag in ["x"]`: the capability has at least one of the tags */
  | { kind: 'tag'; values: string[]; negated: boolean };

interface RuleBase {
  /** the rule as written, its lines joined by one space, comments left out */
  text: string;
  /** 1-based line of the rule's first line in the document */
  line: number;
}

export interface ConditionRule extends RuleBase {
  kind: 'condition';
  condition: Condition;
}

/** A daily spending ceiling: `per agent 2000 per day`. */
export interface CeilingRule extends RuleBase {
  kind: 'ceiling';
  /** `agent`: each agent wallet on its own; `workspace`: all wallets of the workspace together */
  scope: 'agent' | 'workspace';
  limitMinor: bigint;
  /** the UTC calendar day (docs/policy-language.md § Budgets says why) */
  period: 'day';
}

interface SectionBase {
  /** the name in quotes after the type, if any */
  name?: string;
  /** 1-based line of the header */
  line: number;
  /** the section as written: comment lines right above the header, the header, its rules */
  source: string;
}

export interface ConditionSection extends SectionBase {
  type: ConditionPolicyType;
  rules: ConditionRule[];
}

export interface BudgetSection extends SectionBase {
  type: 'budget';
  rules: CeilingRule[];
}

/** One section of a document; each becomes one policy. */
export type ParsedSection = ConditionSection | BudgetSection;

export interface ParsedDocument {
  sections: ParsedSection[];
}
