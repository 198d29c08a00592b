/**
 * Identity and keys of the caller's own tenant. whoami, self and scopes need any valid
 * key (no scope), so that every key can check itself; managing keys needs keys:*.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';
import { ApiKeyView, NewApiKey, TenantView } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
    preset: Type.Optional(StringEnum(['agent'] as const)),
    expiresAt: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 time' })),
    expiresInSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 * 366 * 24 * 3600 })),
    ...IgnoredTenantIds,
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export default async function authRoutes(app: FastifyInstance) {
  const { keys } = app.services;

  app.get('/v1/whoami', { config: { authenticated: true }, schema: { summary: 'The tenant and key of the caller', response: { 200: Closed({ tenant: TenantView, key: ApiKeyView }) } } }, async (request) => keys.whoami(principal(request)));

  app.get('/v1/auth/self', { config: { authenticated: true }, schema: { summary: "The caller's key", response: { 200: Closed({ key: ApiKeyView, tenant: Closed({ id: Type.String(), kind: Type.String() }) }) } } }, async (request) => keys.self(principal(request)));

  app.get('/v1/auth/scopes', { config: { authenticated: true }, schema: { summary: "The caller key's scopes, and those its tenant's keys can have", response: { 200: Closed({ scopes: Type.Array(Type.String()), available: Type.Array(Type.String()) }) } } }, async (request) => keys.scopes(principal(request)));

  app.post<{ Body: Static<typeof CreateKeyBody> | null }>(
    '/v1/auth/keys',
    { config: { scope: 'keys:write' }, schema: { summary: 'Make an API key (shown once)', body: { ...OptionalBody(CreateKeyBody), examples: [{ name: 'agent-1', preset: 'agent', expiresInSeconds: 86400 }] }, response: { 200: Closed({ apiKey: NewApiKey }) } } },
    async (request) => ({ apiKey: await keys.create(principal(request), request.body ?? {}) }),
  );

  app.get('/v1/auth/keys', { config: { scope: 'keys:read' }, schema: { summary: "The tenant's API keys (never the keys themselves)", response: { 200: Closed({ keys: Type.Array(ApiKeyView) }) } } }, async (request) => ({ keys: await keys.list(principal(request)) }));

  app.post<{ Params: Static<typeof KeyParams> }>(
    '/v1/auth/keys/:id/revoke',
    { config: { scope: 'keys:write' }, schema: { summary: 'Revoke an API key', params: KeyParams, response: { 200: Closed({ key: ApiKeyView }) } } },
    async (request) => ({ key: await keys.revoke(principal(request), request.params.id) }),
  );
}
