/**
 * Spending policies on the wire (docs/api/policies.md): the document POST /v1/policies applies,
 * what POST /v1/policies/evaluate takes and answers. The policy and approval resources are in resources.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, IgnoredTenantIds, MultilineString, StringEnum } from './schemas.js';

export const PolicyType = StringEnum(['approval', 'deny', 'allow', 'budget'] as const);
export type PolicyType = Static<typeof PolicyType>;

/**
 * The longest policy document the gateway accepts (64 KiB is hundreds of sections), in characters as
 * JSON Schema counts them: code points, an emoji is one. The policy language's parser refuses a longer
 * document too, so that lint catches it offline.
 */
export const MAX_POLICY_DOCUMENT_CHARS = 64 * 1024;

const EXAMPLE_DOCUMENT = 'deny "no gambling":\n  category == "gambling"\n';

/** POST /v1/policies: a policy document (docs/policy-language.md) that replaces the workspace's policies. */
export const PolicyApplyBody = Type.Object({
  document: MultilineString({
    minLength: 1, maxLength: MAX_POLICY_DOCUMENT_CHARS, description: 'a policy document (docs/policy-language.md); every section becomes one policy',
    examples: [EXAMPLE_DOCUMENT],
  }),
  ...IgnoredTenantIds,
}, { additionalProperties: false, examples: [{ document: EXAMPLE_DOCUMENT }] });
export type PolicyApplyInput = Omit<Static<typeof PolicyApplyBody>, keyof typeof IgnoredTenantIds>;

export const PolicyEvaluateBody = Closed({
  walletId: Id('wal'),
  capabilityId: Id('cap'),
  priceMinor: Type.Optional(Amount({ description: "the price to evaluate, default the capability's current price" })),
  ...IgnoredTenantIds,
});
export type PolicyEvaluateInput = Omit<Static<typeof PolicyEvaluateBody>, keyof typeof IgnoredTenantIds>;

export const MatchedRule = Closed({ policyId: Id('pol'), rule: Type.String() });
export type MatchedRule = Static<typeof MatchedRule>;

export const PolicyStep = Closed({
  policyId: Id('pol'),
  policyType: PolicyType,
  result: StringEnum(['matched', 'not_matched', 'within', 'exceeded'] as const, { description: 'deny, allow, approval: matched or not_matched; budget: within or exceeded' }),
  rule: Type.Optional(Type.String({ description: 'the rule that matched or the ceiling that was exceeded' })),
});
export type PolicyStep = Static<typeof PolicyStep>;

export const PolicyEvaluation = Closed({
  decision: StringEnum(['allow', 'deny', 'approval'] as const),
  matchedRule: Type.Optional(MatchedRule),
  reason: Type.String(),
  approvalId: Type.Optional(Id('apr')),
  steps: Type.Array(PolicyStep),
}, { description: 'the decision and the rule that made it; approvalId: an approval request that covers, holds or refused this purchase' });
export type PolicyEvaluation = Static<typeof PolicyEvaluation>;
