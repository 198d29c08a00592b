/** Spending policies of a workspace (docs/api/policies.md; the language: docs/policy-language.md). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id } from '../schemas.js';
import { policyView } from '../../domain/policies/policies.js';
import { Policy, PolicyApplyBody, PolicyEvaluateBody, PolicyEvaluation } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const PolicyParams = Type.Object({ id: Id('pol') });
type PolicyParams = Static<typeof PolicyParams>;

export default async function policyRoutes(app: FastifyInstance) {
  const { policies } = app.services;

  app.post<{ Body: Static<typeof PolicyApplyBody> }>('/v1/policies', { config: { scope: 'policies:write' }, schema: { summary: "Apply a policy document: replaces the workspace's policies", body: PolicyApplyBody, response: { 200: Closed({ policies: Type.Array(Policy) }) } } }, async (request) => ({
    policies: (await policies.apply(principal(request), request.body.document)).map(policyView),
  }));

  app.get('/v1/policies', { config: { scope: 'policies:read' }, schema: { summary: "The workspace's policies", response: { 200: Closed({ policies: Type.Array(Policy) }) } } }, async (request) => ({
    policies: (await policies.list(principal(request))).map(policyView),
  }));

  app.post<{ Body: Static<typeof PolicyEvaluateBody> }>('/v1/policies/evaluate', { config: { scope: 'policies:read', errors: ['WALLET_NOT_FOUND', 'CAPABILITY_NOT_FOUND'] }, schema: { summary: 'What the policies would decide for a purchase (nothing is bought)', body: PolicyEvaluateBody, response: { 200: PolicyEvaluation } } }, async (request) => {
    const { walletId, capabilityId, priceMinor } = request.body;
    return policies.evaluate(principal(request), { walletId, capabilityId, ...(priceMinor !== undefined ? { priceMinor } : {}) });
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post<{ Params: PolicyParams }>(`/v1/policies/:id/${action}`, { config: { scope: 'policies:write' }, schema: { summary: `${action === 'enable' ? 'Enable' : 'Disable'} a policy`, params: PolicyParams, response: { 200: Closed({ policy: Policy }) } } }, async (request) => ({
      policy: policyView(await policies.setEnabled(principal(request), request.params.id, enabled)),
    }));
  }
}
