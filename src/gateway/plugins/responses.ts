/**
 * Responses as declared. Every route declares its success answer (`schema.response[200]`, from
 * agentpay-sdk/contract); this adds, per status, the error envelope with the codes the route can answer
 * (the codes every route shares, those of its kind of input and key, and its own
 * `config.errors`), and its scope as `x-scope`, for the OpenAPI document (plugins/openapi.ts).
 *
 * Response schemas never change what is sent: answers are serialized with JSON.stringify, not
 * with fast-json-stringify, which would silently drop a field the schema does not list and
 * coerce a value of the wrong type. Instead, with `validateResponses` (the tests' gateways),
 * every JSON answer is checked against its status's schema and a mismatch fails the request
 * loudly (500, logged with what did not match): a field added to an answer without its schema,
 * or a status a route did not declare, breaks the tests of that route.
 * Registered after strict-inputs (which completes the request schemas) and before the routes.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../core/errors.js';
import { ErrorEnvelope, ErrorEnvelopeOf } from 'agentpay-sdk/contract';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** error codes this route answers beyond those every route of its kind does (documented per status) */
    errors?: readonly ErrorCode[];
  }
}

/** What the money-movement routes (rails, payouts, the sandbox's controls) can answer beyond the shared codes. */
export const RAIL_ERRORS: readonly ErrorCode[] = [
  'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'WALLET_NOT_FOUND', 'PROVIDER_NOT_FOUND', 'INVALID_CURSOR', 'INSUFFICIENT_FUNDS', 'WALLET_FROZEN', 'SANCTIONED_ADDRESS', 'CONFLICT',
  'DUPLICATE_EXTERNAL_REF', 'DEPOSIT_HELD', 'DESTINATION_COOLING_DOWN', 'RAIL_DISAGREES', 'NOT_SUPPORTED', 'TREASURY_UNAVAILABLE', 'COVERAGE_SHORTFALL',
];

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The codes a route can answer: shared by all, by its inputs and key, and its own. */
export function errorCodesOf(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): ErrorCode[] {
  const cfg = (route.config ?? {}) as { scope?: string; authenticated?: boolean; public?: boolean; errors?: readonly ErrorCode[] };
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
  const codes = new Set<ErrorCode>(['VALIDATION_FAILED', 'INSECURE_TRANSPORT', 'RATE_LIMITED', 'INTERNAL', 'SERVICE_UNAVAILABLE']);
  if (!cfg.public && (cfg.scope || cfg.authenticated)) {
    codes.add('UNAUTHORIZED');
    if (cfg.scope) codes.add('FORBIDDEN');
  }
  if (methods.some((m) => BODY_METHODS.has(m))) codes.add('PAYLOAD_TOO_LARGE');
  if (route.url.includes(':')) codes.add('NOT_FOUND');
  for (const c of cfg.errors ?? []) codes.add(c);
  return [...codes];
}

const STATUS_TEXT: Record<number, string> = {
  400: 'the request is not valid', 401: 'no valid API key', 402: 'payment required or funds short', 403: 'refused: plain HTTP, scope, key kind, policy',
  404: 'no such record or route', 408: 'request not received in time', 409: 'the record is in a state that refuses this', 410: 'expired', 413: 'body over the limit',
  429: 'rate limited or paused', 431: 'headers over the limit', 500: 'unexpected failure (errorId)', 501: 'not available in this deployment', 503: 'unavailable; retry later',
};

/** The error responses of a route: one envelope schema per status, its codes listed. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERROR_STATUS[c], [...(byStatus.get(ERROR_STATUS[c]) ?? []), c]);
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, cs]) => [status, ErrorEnvelopeOf(cs, `${STATUS_TEXT[status] ?? 'error'}: ${cs.join(', ')}`)]),
  );
}

const ajv = new Ajv.default({ strict: false, allErrors: true, coerceTypes: false });
ajv.addKeyword('x-amount');
const compiled = new WeakMap<object, ValidateFunction>();
const compile = (schema: object) => {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(schema)));
  return v;
};
const envelopeOnly = compile(ErrorEnvelope);

export default fp(async function responses(app: FastifyInstance, opts: { validate: boolean }) {
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    if (methods.every((m) => m === 'HEAD' || m === 'OPTIONS')) return;
    const cfg = (route.config ?? {}) as { scope?: string; public?: boolean };
    const schema = { ...(route.schema ?? {}) } as FastifySchema & Record<string, unknown>;
    // a route without a success schema has none here either: the OpenAPI test names it, and its answer fails validateResponses
    schema.response = { ...errorResponses(errorCodesOf(route)), ...((schema.response ?? {}) as Record<string, unknown>) };
    schema['x-scope'] = cfg.scope ?? (cfg.public ? 'public' : 'any valid key');
    schema.security = cfg.public ? [] : [{ apiKey: [] }];
    route.schema = schema;
  });

  if (!opts.validate) return;
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method === 'HEAD' || typeof payload !== 'string' || reply.statusCode >= 500) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
    const declared = (request.routeOptions.schema?.response ?? {}) as Record<string, object>;
    const schema = declared[String(reply.statusCode)] ?? (reply.statusCode >= 400 && request.is404 ? ErrorEnvelope : undefined);
    const where = `${request.method} ${request.routeOptions.url ?? request.url}`;
    if (!schema) {
      process.stderr.write(`[validateResponses] ${where} ${reply.statusCode}: status not declared\n${payload.slice(0, 300)}\n`);
      throw new AppError('INTERNAL', `response status ${reply.statusCode} of ${where} is not declared in its schema`);
    }
    const validate = schema === ErrorEnvelope ? envelopeOnly : compile(schema);
    if (!validate(JSON.parse(payload))) {
      request.log.error({ errors: validate.errors, route: where, status: reply.statusCode }, 'response does not match its schema');
      // a test's gateway usually logs nothing: the mismatch is written where the test run shows it
      process.stderr.write(`[validateResponses] ${where} ${reply.statusCode}: ${ajv.errorsText(validate.errors)}\n${payload.slice(0, 2000)}\n`);
      throw new AppError('INTERNAL', `the ${reply.statusCode} response of ${where} does not match its schema: ${ajv.errorsText(validate.errors)}`);
    }
    return payload;
  });
});
