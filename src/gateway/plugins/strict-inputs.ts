/**
 * Unknown fields are refused everywhere (docs/api/conventions.md), including on routes that
 * declare no query or body schema of their own: such a route gets one that admits only the
 * tenant ids the specification says to ignore, and path parameters get a length limit. A route that takes no body accepts none, `{}`
 * or `null`; anything else is named and refused, so a misspelt field never passes silently.
 * Registered before the route plugins (fastify-plugin, so its onRoute hook is global) and
 * before the route table, which then records the schemas as served.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { IgnoredTenantIds, OptionalBody } from '../schemas.js';

const NoFields = Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false });
const NoBody = OptionalBody(NoFields);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export default fp(async function strictInputs(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    if (methods.every((m) => m === 'HEAD' || m === 'OPTIONS')) return;
    const schema = { ...(route.schema ?? {}) };
    schema.querystring ??= NoFields;
    // a path parameter is at most 100 characters (the router admits longer ones, app.ts); a route
    // that declares no params schema gets one that says so
    const params = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
    if (schema.params === undefined && params.length > 0) {
      schema.params = Type.Object(Object.fromEntries(params.map((p) => [p, Type.String({ minLength: 1, maxLength: 100 })])));
    }
    if (schema.body === undefined && methods.some((m) => BODY_METHODS.has(m))) schema.body = NoBody;
    route.schema = schema;
  });
});
