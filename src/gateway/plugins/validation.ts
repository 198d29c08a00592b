/**
 * Two validators: bodies are never coerced (a JSON number where an amount string
 * belongs must fail, not become "100"); query strings and params are, since they
 * arrive as text. `verbose` lets the error handler see which schema failed.
 * Every schema is compiled with the text rule (request-text.ts): the value is walked first
 * (no control characters or lone surrogates anywhere, keys included; nesting capped), then
 * each string field of the schema is one line unless marked multi-line.
 */
import Ajv, { type ErrorObject, type SchemaValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { TEXT_KEYWORD, textProblem, unsafeText, withTextRule } from './request-text.js';

const common = { allErrors: false, verbose: true, strict: false, useDefaults: true, removeAdditional: false as const };
const strictAjv = new Ajv.default({ ...common, coerceTypes: false });
const coercingAjv = new Ajv.default({ ...common, coerceTypes: 'array' });

const checkText: SchemaValidateFunction = (mode: unknown, data: unknown) => {
  const problem = typeof data === 'string' ? textProblem(data, mode !== 'multiline') : undefined;
  checkText.errors = problem ? [{ keyword: TEXT_KEYWORD, message: problem, params: {} }] : [];
  return problem === undefined;
};
for (const ajv of [strictAjv, coercingAjv]) {
  ajv.addKeyword('x-amount');
  ajv.addKeyword('x-multiline');
  ajv.addKeyword({ keyword: TEXT_KEYWORD, type: 'string', schemaType: 'string', errors: true, validate: checkText });
}

/** A compiled schema as fastify calls it: true, or false with `errors`. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** Each schema with the text rule, made once per schema object (routes share schemas; ajv compiles a schema object once). */
const marked = new WeakMap<object, Record<string, unknown>>();

function compile(ajv: Ajv.default, schema: object, opts: { walk: boolean }): Validator {
  let withRule = marked.get(schema);
  if (!withRule) marked.set(schema, (withRule = withTextRule(schema as Record<string, unknown>)));
  const validate = ajv.compile(withRule);
  const v: Validator = (data: unknown) => {
    const refused = opts.walk ? unsafeText(data) : undefined;
    if (refused) {
      v.errors = [{ instancePath: refused.instancePath, schemaPath: '', keyword: TEXT_KEYWORD, params: {}, message: refused.message }];
      return false;
    }
    const ok = validate(data);
    v.errors = validate.errors;
    return ok;
  };
  return v;
}

/** A body validator as the routes get, for JSON validated outside a route's schema (a batch's operations). */
export function compileBodyValidator(schema: object): Validator {
  return compile(strictAjv, schema, { walk: true });
}

export default fp(async function validation(app: FastifyInstance) {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
    // headers are all of the request's, most of them not the route's: only the fields it declares are checked
    return compile(ajv, schema, { walk: httpPart !== 'headers' });
  });
});
