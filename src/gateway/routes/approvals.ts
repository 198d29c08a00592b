/** Purchases held for a person, and the person's decision (docs/api/policies.md § Approvals). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id, IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';
import { approvalView } from '../../domain/policies/approvals.js';
import { Approval } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(['pending', 'approved', 'denied'] as const)),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const ResolveBody = OptionalBody(Type.Object({
  resolvedBy: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'who decided, for the record; default the id of the key that called' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false }));

const ApprovalParams = Type.Object({ id: Id('apr') });
type ApprovalParams = Static<typeof ApprovalParams>;

export default async function approvalRoutes(app: FastifyInstance) {
  const { approvals } = app.services;

  app.get<{ Querystring: Static<typeof ListQuery> }>('/v1/approvals', { config: { scope: 'approvals:read' }, schema: { summary: 'Purchases held for a person', querystring: ListQuery, response: { 200: Closed({ approvals: Type.Array(Approval) }) } } }, async (request) => ({
    approvals: (await approvals.list(principal(request), request.query.status)).map(approvalView),
  }));

  app.get<{ Params: ApprovalParams }>('/v1/approvals/:id', { config: { scope: 'approvals:read' }, schema: { summary: 'A held purchase', params: ApprovalParams, response: { 200: Closed({ approval: Approval }) } } }, async (request) => ({
    approval: approvalView(await approvals.get(principal(request), request.params.id)),
  }));

  for (const [action, decision] of [['approve', 'approved'], ['deny', 'denied']] as const) {
    app.post<{ Params: ApprovalParams; Body: Static<typeof ResolveBody> }>(
      `/v1/approvals/:id/${action}`,
      { config: { scope: 'approvals:write', errors: ['CONFLICT'] }, schema: { summary: `${action === 'approve' ? 'Approve' : 'Deny'} a held purchase`, params: ApprovalParams, body: ResolveBody, response: { 200: Closed({ approval: Approval }) } } },
      async (request) => ({
        approval: approvalView(await approvals.resolve(principal(request), request.params.id, decision, request.body?.resolvedBy)),
      }),
    );
  }
}
