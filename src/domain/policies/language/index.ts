/**
 * The policy language, pure: parse, lint and evaluate documents with no I/O (the CLI
 * lints offline with this). Enforcement against the store is src/domain/policies/policies.ts.
 */
export { parsePolicyDocument, lintPolicyDocument, documentSizeError, MAX_DOCUMENT_CHARS, MAX_CONDITION_NESTING } from './parser.js';
export { PolicyParseError } from './errors.js';
export { evaluatePolicies, conditionMatches, matchingRule, budgetDay } from './evaluate.js';
export type { PurchaseFacts, Spend, PolicyToEvaluate, MatchedRule, Step, StepResult, Verdict, BudgetExceeded } from './evaluate.js';
export * from './ast.js';
