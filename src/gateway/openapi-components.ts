/**
 * Names the contract's shapes in the OpenAPI document: every object schema the contract exports
 * (agentpay-sdk/contract: the resources, the payment protocol's challenge, proof, authorization and
 * receipt, the error envelope, …) goes into `components.schemas` under its export name, and each
 * place of the document where @fastify/swagger inlined one of them, structurally identical, refers
 * to it with `$ref: '#/components/schemas/<Name>'` instead. An error answer refers to the
 * `ErrorEnvelope` and narrows its `code` to the codes of its status (allOf). Only the document is
 * rewritten: the routes keep their inline TypeBox schemas, so request validation (ajv) and the
 * strict text rules (plugins/request-text.ts) see exactly what they saw before.
 */
import * as contract from 'agentpay-sdk/contract';
import { Kind, type TSchema } from '@sinclair/typebox';

type Json = Record<string, unknown>;
const REF = '#/components/schemas/';
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A schema as @fastify/swagger writes it into a 3.1 document (records' patternProperties as additionalProperties). */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'patternProperties' && isObject(x) && Object.keys(x).length === 1 && '^(.*)$' in x) out.additionalProperties = normalize(x['^(.*)$']);
    else out[k] = normalize(x);
  }
  return out;
}

/** Key-order-independent text of a JSON value, to compare schemas structurally. */
function keyOf(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(keyOf).join(',')}]`;
  if (!isObject(v)) return JSON.stringify(v);
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${keyOf(v[k])}`).join(',')}}`;
}

/** The contract's named object schemas, in export order: name → the schema as the document writes it. */
export function contractSchemas(): Map<string, Json> {
  const named = new Map<string, Json>();
  for (const [name, value] of Object.entries(contract)) {
    if (!isObject(value) || !(Kind in value) || (value as TSchema).type !== 'object') continue;
    named.set(name, normalize(JSON.parse(JSON.stringify(value))) as Json);
  }
  return named;
}

/** ErrorEnvelopeOf(codes, description), recognised by being exactly that with its own codes and description. */
function errorEnvelopeCodes(node: Json): string[] | undefined {
  const code = ((node.properties as Json | undefined)?.error as Json | undefined)?.properties as Json | undefined;
  const codes = isObject(code?.code) ? (code.code.enum as string[] | undefined) : undefined;
  if (!Array.isArray(codes) || typeof node.description !== 'string') return undefined;
  const expected = normalize(JSON.parse(JSON.stringify(contract.ErrorEnvelopeOf(codes, node.description))));
  return keyOf(expected) === keyOf(node) ? codes : undefined;
}

/** Rewrites the document in place: returns it with `components.schemas` holding every named shape and the inlined copies referred to. */
export function nameSchemas(doc: Json): Json {
  const named = contractSchemas();
  const byKey = new Map<string, string>();
  for (const [name, schema] of named) if (!byKey.has(keyOf(schema))) byKey.set(keyOf(schema), name);

  const rewrite = (node: unknown, self?: string): unknown => {
    if (Array.isArray(node)) return node.map((x) => rewrite(x));
    if (!isObject(node)) return node;
    const name = byKey.get(keyOf(node));
    if (name && name !== self) {
      return { $ref: REF + name };
    }
    const codes = errorEnvelopeCodes(node);
    if (codes) {
      return {
        description: node.description,
        allOf: [
          { $ref: `${REF}ErrorEnvelope` },
          { type: 'object', required: ['error'], properties: { error: { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } } } },
        ],
      };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === 'example' || k === 'examples' || k === 'const' || k === 'enum' || k === 'default' ? v : rewrite(v);
    return out;
  };

  doc.paths = rewrite(doc.paths);
  if (doc.webhooks) doc.webhooks = rewrite(doc.webhooks);
  // every named shape, used by a route or not (the payment proof travels in a header): each refers to the others it holds
  const schemas: Json = {};
  for (const [name, schema] of named) if (byKey.get(keyOf(schema)) === name) schemas[name] = { title: name, ...(rewrite(schema, name) as Json) };
  const components = (isObject(doc.components) ? doc.components : {}) as Json;
  components.schemas = Object.fromEntries(Object.keys(schemas).sort().map((n) => [n, schemas[n]]));
  doc.components = components;
  return doc;
}
