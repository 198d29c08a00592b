/**
 * Payouts and payout destinations (src/domain/rails/payouts/, destinations.ts), and the
 * operator's resolution of a payout its rail never resolved. docs/api/rails.md.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { PayoutAnswer, PayoutBody, PayoutDestinationAnswer, PayoutDestinationBody as DestinationBody, PayoutDestinationList, PayoutListQuery as ListQuery, PayoutPage, PayoutResolveBody as ResolveBody } from 'agentpay-sdk/contract';
import { RAIL_ERRORS } from '../plugins/responses.js';

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type Params = Static<typeof Params>;

const PayoutHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' })),
});

export default async function payoutRoutes(app: FastifyInstance) {
  const { rails } = app.services;

  app.put<{ Params: Params; Body: Static<typeof DestinationBody> }>(
    '/v1/providers/:id/payout-destination',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params, body: DestinationBody, response: { 200: PayoutDestinationAnswer } } },
    async (request) => rails.destinations.register(principal(request), request.params.id, request.body),
  );

  app.get<{ Params: Params }>(
    '/v1/providers/:id/payout-destinations',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params, response: { 200: PayoutDestinationList } } },
    async (request) => rails.destinations.list(principal(request), request.params.id),
  );

  app.post<{ Body: Static<typeof PayoutBody>; Headers: Static<typeof PayoutHeaders> }>(
    '/v1/payouts',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { body: PayoutBody, headers: PayoutHeaders, response: { 200: PayoutAnswer } } },
    async (request, reply) => {
      const { payout, replayed } = await rails.payouts.create(principal(request), request.body, request.headers['idempotency-key']);
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return { payout };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v1/payouts',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { querystring: ListQuery, response: { 200: PayoutPage } } },
    async (request) => rails.payouts.list(principal(request), request.query),
  );

  // the operator closes out a payout its rail never resolved, after asking the rail out of band
  app.post<{ Params: Params; Body: Static<typeof ResolveBody> }>(
    '/v1/payouts/:id/resolve',
    { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { params: Params, body: ResolveBody, response: { 200: PayoutAnswer } } },
    async (request) => ({ payout: await rails.payouts.resolve(principal(request), request.params.id, request.body) }),
  );

  app.get<{ Params: Params }>('/v1/payouts/:id', { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params, response: { 200: PayoutAnswer } } }, async (request) => ({
    payout: await rails.payouts.get(principal(request), request.params.id),
  }));
}
