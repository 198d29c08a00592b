/**
 * Providers: who can see which seller, the verification request, and the operator's
 * decisions (verify, suspend, unsuspend). Rules in src/domain/market/providers.ts.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { OptionalBody } from '../schemas.js';
import { Provider, ProviderDecisionBody as DecisionBody, ProviderListQuery as ListQuery, ProviderParams as Params, VerificationRequestBody } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const ProviderAnswer = Closed({ provider: Provider });
const P = ['PROVIDER_NOT_FOUND'] as const;

export default async function providerRoutes(app: FastifyInstance) {
  const { providers } = app.services;

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v1/providers',
    { config: { scope: 'providers:read' }, schema: { summary: 'Sellers: verified ones, and your own', querystring: ListQuery, response: { 200: Closed({ providers: Type.Array(Provider) }) } } },
    async (request) => ({ providers: await providers.list(principal(request), request.query) }),
  );

  app.get<{ Params: Params }>('/v1/providers/:id', { config: { scope: 'providers:read', errors: P }, schema: { summary: 'A seller', params: Params, response: { 200: ProviderAnswer } } }, async (request) => ({
    provider: await providers.get(principal(request), request.params.id),
  }));

  app.post<{ Params: Params; Body: Static<typeof VerificationRequestBody> | null }>(
    '/v1/providers/:id/verification-request',
    { config: { scope: 'providers:read', errors: [...P, 'CONFLICT'] }, schema: { summary: 'Ask the operator to verify your seller account', params: Params, body: OptionalBody(VerificationRequestBody), response: { 200: ProviderAnswer } } },
    async (request) => ({ provider: await providers.requestVerification(principal(request), request.params.id, request.body ?? {}) }),
  );

  app.post<{ Params: Params; Body: Static<typeof DecisionBody> }>(
    '/v1/providers/:id/verify',
    { config: { scope: 'operator', errors: [...P, 'CONFLICT'] }, schema: { summary: 'Verify or reject a seller (operator)', params: Params, body: DecisionBody, response: { 200: ProviderAnswer } } },
    async (request) => ({ provider: await providers.decide(principal(request), request.params.id, request.body) }),
  );

  for (const [action, suspended] of [['suspend', true], ['unsuspend', false]] as const) {
    app.post<{ Params: Params }>(
      `/v1/providers/:id/${action}`,
      { config: { scope: 'operator', errors: P }, schema: { summary: `${action === 'suspend' ? 'Suspend' : 'Unsuspend'} a seller (operator)`, params: Params, response: { 200: ProviderAnswer } } },
      async (request) => ({ provider: await providers.setSuspended(principal(request), request.params.id, suspended) }),
    );
  }
}
