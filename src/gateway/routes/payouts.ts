/**
 * Payouts and payout destinations (src/domain/rails/payouts/, destinations.ts), and the
 * operator's resolution of a payout its rail never resolved. docs/api/rails.md.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { PAYOUT_STATUSES, RESOLVE_OUTCOMES } from '../../domain/rails/payouts/service.js';
import { principal } from '../plugins/auth.js';
import { Amount, IgnoredTenantIds, StringEnum } from '../schemas.js';
import { RAIL_ERRORS } from '../plugins/responses.js';

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type Params = Static<typeof Params>;

const DestinationBody = Type.Object({
  destination: Type.String({ minLength: 1, maxLength: 200, examples: ['ext_bank_account_0001'], description: 'ext_… for bank rails, a 0x address for USDC' }),
  asset: Type.Optional(StringEnum(['USD', 'USDC'] as const)),
  chain: Type.Optional(StringEnum(['base'] as const)),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const PayoutBody = Type.Object({
  walletId: Type.String({ minLength: 1, maxLength: 100 }),
  amountMinor: Amount(),
  rail: StringEnum(['bank_transfer', 'ach', 'usdc_base'] as const),
  destination: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  treasuryProviderId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const PayoutHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' })),
});

const ResolveBody = Type.Object({
  outcome: StringEnum(RESOLVE_OUTCOMES, { description: 'paid: the money left (confirmed); failed: it did not (re-credited)' }),
  reason: Type.String({ minLength: 1, maxLength: 500, description: 'what the rail said, recorded on the payout and in the events' }),
}, { additionalProperties: false });

// a provider key lists its own payouts, the operator key every provider's (to find stuck ones)
const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  status: Type.Optional(StringEnum(PAYOUT_STATUSES)),
  submittedBefore: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 time: only payouts submitted before it' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

export default async function payoutRoutes(app: FastifyInstance) {
  const { rails } = app.services;

  app.put<{ Params: Params; Body: Static<typeof DestinationBody> }>(
    '/v1/providers/:id/payout-destination',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params, body: DestinationBody } },
    async (request) => rails.destinations.register(principal(request), request.params.id, request.body),
  );

  app.get<{ Params: Params }>(
    '/v1/providers/:id/payout-destinations',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params } },
    async (request) => rails.destinations.list(principal(request), request.params.id),
  );

  app.post<{ Body: Static<typeof PayoutBody>; Headers: Static<typeof PayoutHeaders> }>(
    '/v1/payouts',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { body: PayoutBody, headers: PayoutHeaders } },
    async (request, reply) => {
      const { payout, replayed } = await rails.payouts.create(principal(request), request.body, request.headers['idempotency-key']);
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return { payout };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v1/payouts',
    { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { querystring: ListQuery } },
    async (request) => rails.payouts.list(principal(request), request.query),
  );

  // the operator closes out a payout its rail never resolved, after asking the rail out of band
  app.post<{ Params: Params; Body: Static<typeof ResolveBody> }>(
    '/v1/payouts/:id/resolve',
    { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { params: Params, body: ResolveBody } },
    async (request) => ({ payout: await rails.payouts.resolve(principal(request), request.params.id, request.body) }),
  );

  app.get<{ Params: Params }>('/v1/payouts/:id', { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params } }, async (request) => ({
    payout: await rails.payouts.get(principal(request), request.params.id),
  }));
}
