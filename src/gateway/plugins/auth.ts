/**
 * Authentication and scopes, declared per route in its config:
 *   config: { scope: 'wallets:read' }   a key with that scope is required
 *   config: { public: true }            no key
 *   config: { authenticated: true }     any valid key, whatever its scopes (whoami)
 * A route that declares neither is refused at registration, so none is left open by accident.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../core/errors.js';
import { authenticate, KeyUseRecorder, requireScope, type Principal } from '../../domain/tenancy/api-keys.js';
import type { Scope } from '../../domain/tenancy/scopes.js';
import type { DomainContext } from '../../domain/platform/context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: Scope;
    public?: boolean;
    authenticated?: boolean;
  }
  interface FastifyRequest {
    principalOrNull: Principal | null;
  }
}

/** The authenticated caller; only on routes that declare a scope or `authenticated`. */
export function principal(request: FastifyRequest): Principal {
  if (!request.principalOrNull) throw new AppError('UNAUTHORIZED', 'this route needs an API key');
  return request.principalOrNull;
}

export default fp(async function auth(app: FastifyInstance, opts: { ctx: DomainContext }) {
  app.decorateRequest('principalOrNull', null);
  // lastUsedAt: one write per key per minute, off the request's path (see KeyUseRecorder)
  const keyUse = new KeyUseRecorder(opts.ctx, (err, keyId) => app.log.warn({ err, keyId }, 'could not record the use of an API key'));
  app.addHook('onRoute', (route) => {
    const cfg = route.config as { scope?: string; public?: boolean; authenticated?: boolean } | undefined;
    if (route.method === 'HEAD' || route.method === 'OPTIONS') return;
    if (!cfg?.scope && !cfg?.public && !cfg?.authenticated) throw new Error(`route ${String(route.method)} ${route.url} declares neither a scope nor public nor authenticated`);
  });
  app.addHook('preParsing', async (request) => {
    const cfg = request.routeOptions.config;
    if (!cfg || cfg.public || (!cfg.scope && !cfg.authenticated)) return;
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    // unsynced: the principal is only used to decide this request (src/store/store.ts says why that is safe)
    const p = await opts.ctx.store.read((r) => authenticate(r, opts.ctx.clock, key), { unsynced: true });
    keyUse.used(p.keyId); // a valid key was used, whether or not it holds the route's scope
    if (cfg.scope) requireScope(p, cfg.scope);
    request.principalOrNull = p;
  });
});
