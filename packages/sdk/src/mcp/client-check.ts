/**
 * The check an MCP client makes of a tool's structured content once it listed the tools: the
 * outputSchema as McpServer advertises it in tools/list (the same conversion, the same options),
 * compiled by the MCP SDK's default client validator (Ajv).
 *
 * A stateless streamable-HTTP server registers its tools on a new McpServer per request, so the
 * same schema arrives as a new object every time. Compiling costs ~2 ms and an Ajv instance keeps
 * every schema object it compiled, so validators are cached by the schema's canonical JSON text,
 * at most CLIENT_CHECKS_MAX of them (least recently used dropped). Each entry has its own Ajv,
 * compiled from a parsed copy of that text: dropping the entry frees everything it compiled.
 */
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { AnyObjectSchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { canonicalize } from '../contract/canonical-json.js';

/** Why structured content fails the advertised output schema, or null. */
export type ClientCheck = (structuredContent: unknown) => string | null;

/** Distinct output schemas kept compiled (a server has a handful; the bound only caps memory). */
export const CLIENT_CHECKS_MAX = 256;

const compiled = new Map<string, ClientCheck>();

export function clientCheckOf(schema: AnyObjectSchema): ClientCheck {
  const advertised = toJsonSchemaCompat(schema, { strictUnions: true, pipeStrategy: 'output' });
  let key: string;
  try {
    key = canonicalize(advertised);
  } catch {
    key = JSON.stringify(advertised); // a value canonical JSON refuses: still a deterministic text of it
  }
  let check = compiled.get(key);
  if (check) {
    compiled.delete(key); // most recently used last
  } else {
    const validate = new AjvJsonSchemaValidator().getValidator(JSON.parse(key) as never);
    check = (value) => {
      const r = validate(value);
      return r.valid ? null : (r.errorMessage ?? 'invalid');
    };
    if (compiled.size >= CLIENT_CHECKS_MAX) compiled.delete(compiled.keys().next().value!);
  }
  compiled.set(key, check);
  return check;
}
