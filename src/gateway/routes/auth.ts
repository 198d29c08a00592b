/**
 * Identity and keys of the caller's own tenant. whoami, self and scopes need any valid
 * key (no scope), so that every key can check itself; managing keys needs keys:*.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { OptionalBody } from '../schemas.js';
import { ApiKeyView, AuthScopes, AuthSelf, Closed, CreateKeyBody, NewApiKey, RevokedKeys, Whoami } from 'agentpay-sdk/contract';

const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export default async function authRoutes(app: FastifyInstance) {
  const { keys } = app.services;

  app.get('/v1/whoami', { config: { authenticated: true }, schema: { summary: 'The tenant and key of the caller', response: { 200: Whoami } } }, async (request) => keys.whoami(principal(request)));

  app.get('/v1/auth/self', { config: { authenticated: true }, schema: { summary: "The caller's key", response: { 200: AuthSelf } } }, async (request) => keys.self(principal(request)));

  app.get('/v1/auth/scopes', { config: { authenticated: true }, schema: { summary: "The caller key's scopes, and those its tenant's keys can have", response: { 200: AuthScopes } } }, async (request) => keys.scopes(principal(request)));

  app.post<{ Body: Static<typeof CreateKeyBody> | null }>(
    '/v1/auth/keys',
    { config: { scope: 'keys:write', errors: ['CONFLICT'] }, schema: { summary: 'Make an API key (shown once)', body: { ...OptionalBody(CreateKeyBody), examples: [{ name: 'agent-1', preset: 'agent', expiresInSeconds: 86400 }] }, response: { 200: Closed({ apiKey: NewApiKey }) } } },
    async (request) => ({ apiKey: await keys.create(principal(request), request.body ?? {}) }),
  );

  app.get('/v1/auth/keys', { config: { scope: 'keys:read' }, schema: { summary: "The tenant's API keys (never the keys themselves)", response: { 200: Closed({ keys: Type.Array(ApiKeyView) }) } } }, async (request) => ({ keys: await keys.list(principal(request)) }));

  app.post<{ Params: Static<typeof KeyParams> }>(
    '/v1/auth/keys/:id/revoke',
    { config: { scope: 'keys:write' }, schema: { summary: 'Revoke an API key and the keys made from it', params: KeyParams, response: { 200: RevokedKeys } } },
    async (request) => keys.revoke(principal(request), request.params.id),
  );
}
