/** Webhook endpoints, their deliveries, and replays (docs/api/webhooks.md). */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import {
  Closed, WebhookDelivery, WebhookDeliveriesQuery as DeliveriesQuery, WebhookDeliveryParams as DeliveryParams, WebhookEndpoint, WebhookEndpointBody as CreateBody,
  WebhookEndpointParams as EndpointParams, WebhookEndpointWithSecret, WebhookReplayBody as EmptyBody, WebhookRotateBody as RotateBody,
} from 'agentpay-sdk/contract';

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
