/**
 * Two validators: bodies are never coerced (a JSON number where an amount string
 * belongs must fail, not become "100"); query strings and params are, since they
 * arrive as text. `verbose` lets the error handler see which schema failed.
 */
import Ajv from 'ajv';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export default fp(async function validation(app: FastifyInstance) {
  const common = { allErrors: false, verbose: true, strict: false, useDefaults: true, removeAdditional: false as const };
  const strictAjv = new Ajv.default({ ...common, coerceTypes: false });
  const coercingAjv = new Ajv.default({ ...common, coerceTypes: 'array' });
  for (const ajv of [strictAjv, coercingAjv]) ajv.addKeyword('x-amount');
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
    return ajv.compile(schema);
  });
});
