/**
 * Identity and keys of the caller's own tenant. whoami, self and scopes need any valid
 * key (no scope), so that every key can check itself; managing keys needs keys:*.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';

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

  app.get('/v1/whoami', { config: { authenticated: true } }, async (request) => keys.whoami(principal(request)));

  app.get('/v1/auth/self', { config: { authenticated: true } }, async (request) => keys.self(principal(request)));

  app.get('/v1/auth/scopes', { config: { authenticated: true } }, async (request) => keys.scopes(principal(request)));

  app.post<{ Body: Static<typeof CreateKeyBody> | null }>(
    '/v1/auth/keys',
    { config: { scope: 'keys:write' }, schema: { body: OptionalBody(CreateKeyBody) } },
    async (request) => ({ apiKey: await keys.create(principal(request), request.body ?? {}) }),
  );

  app.get('/v1/auth/keys', { config: { scope: 'keys:read' } }, async (request) => ({ keys: await keys.list(principal(request)) }));

  app.post<{ Params: Static<typeof KeyParams> }>(
    '/v1/auth/keys/:id/revoke',
    { config: { scope: 'keys:write' }, schema: { params: KeyParams } },
    async (request) => ({ key: await keys.revoke(principal(request), request.params.id) }),
  );
}
