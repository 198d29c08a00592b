/**
 * Two validators: bodies are never coerced (a JSON number where an amount string
 * belongs must fail, not become "100"); query strings and params are, since they
 * arrive as text. `verbose` lets the error handler see which schema failed.
 */
import Ajv from 'ajv';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const common = { allErrors: false, verbose: true, strict: false, useDefaults: true, removeAdditional: false as const };
const strictAjv = new Ajv.default({ ...common, coerceTypes: false });
const coercingAjv = new Ajv.default({ ...common, coerceTypes: 'array' });
for (const ajv of [strictAjv, coercingAjv]) ajv.addKeyword('x-amount');

/** A body validator as the routes get, for JSON validated outside a route's schema (a batch's operations). */
export function compileBodyValidator(schema: object) {
  return strictAjv.compile(schema);
}

export default fp(async function validation(app: FastifyInstance) {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
    return ajv.compile(schema);
  });
});
