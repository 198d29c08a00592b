/**
 * The text rule (src/core/text.ts, docs/api/conventions.md § Text) on every route's schema, as
 * validation.ts compiles it, so no route can leave it out: the value is walked first (unsafeText:
 * no control characters or lone surrogates anywhere, keys included; nesting capped), then every
 * string field of the schema is one line unless the contract marks it `x-multiline`
 * (MultilineString: a policy document, a PEM key, a description).
 */
export { MAX_NESTING, textProblem, unsafeText, type TextRefusal } from '../../core/text.js';

/** The marker of a string field that may hold tabs and line breaks (packages/sdk/src/contract/schemas.ts MultilineString). */
export const MULTILINE = 'x-multiline';
/** The keyword validation.ts adds to every string schema: 'line' or 'multiline'. */
export const TEXT_KEYWORD = 'x-text';

type Schema = Record<string, unknown>;
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SUBSCHEMAS = ['items', 'additionalItems', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];

const isString = (s: Schema) => s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'));

/** A copy of a schema with TEXT_KEYWORD on every string schema in it (the original is left as it is). */
export function withTextRule(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (isString(schema)) out[TEXT_KEYWORD] = schema[MULTILINE] === true ? 'multiline' : 'line';
  for (const k of SUBSCHEMA_MAPS) {
    const m = schema[k];
    if (m && typeof m === 'object' && !Array.isArray(m)) out[k] = Object.fromEntries(Object.entries(m as Record<string, Schema>).map(([n, s]) => [n, isSchema(s) ? withTextRule(s) : s]));
  }
  for (const k of SUBSCHEMAS) if (isSchema(schema[k])) out[k] = withTextRule(schema[k] as Schema);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(schema[k])) out[k] = (schema[k] as unknown[]).map((s) => (isSchema(s) ? withTextRule(s) : s));
  return out;
}

const isSchema = (s: unknown): s is Schema => s !== null && typeof s === 'object' && !Array.isArray(s);
