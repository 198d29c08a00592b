/** Webhook endpoints, their deliveries, and replays (docs/api/webhooks.md). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../domain/events.js';
import { principal } from '../plugins/auth.js';
import { Id, IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';

const CreateBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'where deliveries are POSTed: https (http too on a sandbox gateway)', examples: ['https://example.com/hooks/agentpay'] }),
  eventTypes: Type.Optional(Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: EVENT_TYPES.length * 2, description: 'only these event types; default every type' })),
  description: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const EndpointParams = Type.Object({ id: Id('whe') });
type EndpointParams = Static<typeof EndpointParams>;
const DeliveryParams = Type.Object({ id: Id('whe'), deliveryId: Id('whd') });
type DeliveryParams = Static<typeof DeliveryParams>;

const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const RotateBody = OptionalBody(Type.Object({
  keepPreviousForSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 * 60, description: 'how long the old secret keeps signing beside the new one; default 86400 (a day), 0 retires it at once' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false }));

const EmptyBody = OptionalBody(Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false }));

export default async function webhookEndpointRoutes(app: FastifyInstance) {
  const { webhooks } = app.services;

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/v1/webhook-endpoints',
    { config: { scope: 'webhooks:write' }, schema: { body: CreateBody } },
    async (request, reply) => {
      reply.code(201);
      return webhooks.create(principal(request), request.body);
    },
  );

  app.get('/v1/webhook-endpoints', { config: { scope: 'webhooks:read' } }, async (request) => webhooks.list(principal(request)));

  app.get<{ Params: EndpointParams }>(
    '/v1/webhook-endpoints/:id',
    { config: { scope: 'webhooks:read' }, schema: { params: EndpointParams } },
    async (request) => webhooks.get(principal(request), request.params.id),
  );

  app.delete<{ Params: EndpointParams }>(
    '/v1/webhook-endpoints/:id',
    { config: { scope: 'webhooks:write' }, schema: { params: EndpointParams } },
    async (request) => webhooks.remove(principal(request), request.params.id),
  );

  app.post<{ Params: EndpointParams; Body: Static<typeof RotateBody> }>(
    '/v1/webhook-endpoints/:id/rotate-secret',
    { config: { scope: 'webhooks:write' }, schema: { params: EndpointParams, body: RotateBody } },
    async (request) => webhooks.rotateSecret(principal(request), request.params.id, request.body?.keepPreviousForSeconds),
  );

  app.get<{ Params: EndpointParams; Querystring: Static<typeof DeliveriesQuery> }>(
    '/v1/webhook-endpoints/:id/deliveries',
    { config: { scope: 'webhooks:read' }, schema: { params: EndpointParams, querystring: DeliveriesQuery } },
    async (request) => webhooks.deliveries(principal(request), request.params.id, request.query),
  );

  app.get<{ Params: DeliveryParams }>(
    '/v1/webhook-endpoints/:id/deliveries/:deliveryId',
    { config: { scope: 'webhooks:read' }, schema: { params: DeliveryParams } },
    async (request) => webhooks.delivery(principal(request), request.params.id, request.params.deliveryId),
  );

  app.post<{ Params: DeliveryParams; Body: Static<typeof EmptyBody> }>(
    '/v1/webhook-endpoints/:id/deliveries/:deliveryId/retry',
    { config: { scope: 'webhooks:write' }, schema: { params: DeliveryParams, body: EmptyBody } },
    async (request, reply) => {
      reply.code(202);
      return webhooks.replay(principal(request), request.params.id, request.params.deliveryId);
    },
  );
}
