/**
 * Every route the app serves, recorded as it is registered: method, URL, config (scope
 * or public) and schema. Test matrices are derived from it, so a new route is covered
 * by the conventions tests without anyone listing it; an API index can read it too.
 * Registered before the route plugins (fastify-plugin, so its onRoute hook is global).
 */
import type { FastifyContextConfig, FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';

export interface RouteEntry {
  method: string;
  /** full URL with fastify's `:param` placeholders, e.g. /v1/wallets/:id */
  url: string;
  config: FastifyContextConfig;
  schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** every route registered so far, HEAD routes fastify adds for GETs included */
    routeTable: readonly RouteEntry[];
  }
}

export default fp(async function routeTable(app: FastifyInstance) {
  const routes: RouteEntry[] = [];
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      routes.push({ method: String(method), url: route.url, config: (route.config ?? {}) as FastifyContextConfig, schema: route.schema });
    }
  });
});
