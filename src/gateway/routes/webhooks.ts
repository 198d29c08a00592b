/** Webhook endpoints, their deliveries, and replays (docs/api/webhooks.md). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../domain/platform/events.js';
import { principal } from '../plugins/auth.js';
import { Id, IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';
import { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

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
    { config: { scope: 'webhooks:write', errors: ['CONFLICT'] }, schema: { summary: 'Add a webhook endpoint (its signing secret is shown once)', body: CreateBody, response: { 201: WebhookEndpointWithSecret } } },
    async (request, reply) => {
      reply.code(201);
      return webhooks.create(principal(request), request.body);
    },
  );

  app.get('/v1/webhook-endpoints', { config: { scope: 'webhooks:read' }, schema: { summary: 'Your webhook endpoints', response: { 200: Closed({ endpoints: Type.Array(WebhookEndpoint) }) } } }, async (request) => webhooks.list(principal(request)));

  app.get<{ Params: EndpointParams }>(
    '/v1/webhook-endpoints/:id',
    { config: { scope: 'webhooks:read' }, schema: { summary: 'One webhook endpoint', params: EndpointParams, response: { 200: Closed({ endpoint: WebhookEndpoint }) } } },
    async (request) => webhooks.get(principal(request), request.params.id),
  );

  app.delete<{ Params: EndpointParams }>(
    '/v1/webhook-endpoints/:id',
    { config: { scope: 'webhooks:write' }, schema: { summary: 'Delete a webhook endpoint: nothing more is delivered to it', params: EndpointParams, response: { 200: Closed({ endpoint: WebhookEndpoint, deleted: Type.Literal(true) }) } } },
    async (request) => webhooks.remove(principal(request), request.params.id),
  );

  app.post<{ Params: EndpointParams; Body: Static<typeof RotateBody> }>(
    '/v1/webhook-endpoints/:id/rotate-secret',
    { config: { scope: 'webhooks:write' }, schema: { summary: 'A new signing secret (the previous one keeps signing for a while)', params: EndpointParams, body: RotateBody, response: { 200: WebhookEndpointWithSecret } } },
    async (request) => webhooks.rotateSecret(principal(request), request.params.id, request.body?.keepPreviousForSeconds),
  );

  app.get<{ Params: EndpointParams; Querystring: Static<typeof DeliveriesQuery> }>(
    '/v1/webhook-endpoints/:id/deliveries',
    { config: { scope: 'webhooks:read', errors: ['INVALID_CURSOR'] }, schema: { summary: "An endpoint's deliveries, newest first", params: EndpointParams, querystring: DeliveriesQuery, response: { 200: Closed({ deliveries: Type.Array(WebhookDelivery), nextCursor: Type.Optional(Type.String({ description: 'pass as after for the next page' })) }) } } },
    async (request) => webhooks.deliveries(principal(request), request.params.id, request.query),
  );

  app.get<{ Params: DeliveryParams }>(
    '/v1/webhook-endpoints/:id/deliveries/:deliveryId',
    { config: { scope: 'webhooks:read' }, schema: { summary: 'One delivery with its attempts', params: DeliveryParams, response: { 200: Closed({ delivery: WebhookDelivery }) } } },
    async (request) => webhooks.delivery(principal(request), request.params.id, request.params.deliveryId),
  );

  app.post<{ Params: DeliveryParams; Body: Static<typeof EmptyBody> }>(
    '/v1/webhook-endpoints/:id/deliveries/:deliveryId/retry',
    { config: { scope: 'webhooks:write', errors: ['CONFLICT'] }, schema: { summary: 'Deliver the event again, as a new delivery', params: DeliveryParams, body: EmptyBody, response: { 202: Closed({ delivery: WebhookDelivery }) } } },
    async (request, reply) => {
      reply.code(202);
      return webhooks.replay(principal(request), request.params.id, request.params.deliveryId);
    },
  );
}
