/**
 * The wire's building blocks: what every request and response of the API is made of. This
 * module imports nothing of agentpay (TypeBox only), so it runs in Node, browsers and edge
 * runtimes; the gateway declares its routes with it and the OpenAPI document is generated from
 * it. Amounts are strings of integer minor units; `x-amount` marks them so a validation error
 * can say so plainly.
 */
import { Type, type Static, type StringOptions, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';

export const Amount = (opts: { description?: string } = {}) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$', 'x-amount': true, description: opts.description ?? 'integer minor units as a string, e.g. "100"' });

/** An amount as answered: integer minor units as a string, negative for a debit where the field says so. */
export const SignedAmount = (opts: { description?: string } = {}) =>
  Type.String({ pattern: '^-?(0|[1-9][0-9]*)$', description: opts.description ?? 'integer minor units as a string, e.g. "100" or "-100"' });

export const StringEnum = <const T extends readonly string[]>(values: T, opts: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });

/**
 * Request text that may span lines: tabs, line feeds and carriage returns are accepted in it
 * (a policy document, a PEM key, a description). Every other string a request carries is one
 * line; control characters and lone surrogates are refused in all of them
 * (docs/api/conventions.md § Text; the gateway applies the rule to every schema it compiles).
 */
export const MultilineString = (opts: StringOptions = {}) => Type.String({ ...opts, 'x-multiline': true });

export const Id = (prefix: string) => Type.String({ minLength: 1, maxLength: 100, description: `${prefix}_…` });

/** A time as answered: ISO 8601 in UTC with milliseconds, e.g. 2026-01-31T12:00:00.000Z. */
export const Timestamp = (opts: { description?: string } = {}) => Type.String({ description: opts.description ?? 'ISO 8601 time (UTC)', examples: ['2026-01-31T12:00:00.000Z'] });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An object whose fields are all listed: a response that adds one fails the response checks in tests. */
export const Closed = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> => Type.Object(props, { additionalProperties: false, ...opts });

/** An object whose listed fields are documented, and which may carry more. */
export const Open = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> => Type.Object(props, { additionalProperties: true, ...opts });

/** The `error` member of every error answer (docs/api/conventions.md § The error envelope). */
export const ErrorObject = Type.Object(
  {
    code: Type.String({ description: 'what went wrong, for programs: handle errors by this' }),
    message: Type.String({ description: 'for people: names the field or thing at fault and what to do; display-safe (control and bidirectional characters as \\uXXXX)' }),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'structured facts about the error (field, location, problems, ids, limits); always an object' }),
  },
  { additionalProperties: false },
);

/** Every error answer: `{error: {code, message, details}}`, some with top-level fields beside it (`approvalId`, `challenge`, `errorId`). */
export const ErrorEnvelope = Type.Object({ error: ErrorObject }, { additionalProperties: true });
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** The envelope of one status, its `code` limited to the codes a route answers with it. */
export const ErrorEnvelopeOf = (codes: readonly string[], description: string) =>
  Type.Object(
    { error: Type.Object({ code: Type.Unsafe<string>({ type: 'string', enum: [...codes] }), message: ErrorObject.properties.message, details: ErrorObject.properties.details }, { additionalProperties: false }) },
    { additionalProperties: true, description },
  );

/**
 * The tenant comes from the key: bodies that refuse unknown fields still accept these
 * and ignore them, as the specification says.
 */
export const IgnoredTenantIds = {
  providerId: Type.Optional(Type.Unknown({ description: "ignored: the tenant is the key's" })),
  workspaceId: Type.Optional(Type.Unknown({ description: "ignored: the tenant is the key's" })),
};

/** For routes whose body is optional: no body at all is accepted as `{}`. */
export const OptionalBody = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export type { Static };
