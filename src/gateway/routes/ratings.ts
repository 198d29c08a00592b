/** Rating a seller, by the workspace whose wallet paid (one rating per transaction). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id } from '../schemas.js';
import { RateBody, Rating } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const ProviderParams = Type.Object({ id: Id('prv') });


export default async function ratingRoutes(app: FastifyInstance) {
  const { ratings } = app.services;

  app.post<{ Params: Static<typeof ProviderParams>; Body: Static<typeof RateBody> }>(
    '/v1/providers/:id/rate',
    { config: { scope: 'ratings:write', errors: ['PROVIDER_NOT_FOUND', 'CONFLICT'] }, schema: { summary: 'Rate a seller after a paid call', params: ProviderParams, body: RateBody, response: { 200: Closed({ rating: Rating }) } } },
    async (request) => ({ rating: await ratings.rate(principal(request), request.params.id, request.body) }),
  );
}
