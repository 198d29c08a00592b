/**
 * Schema building blocks shared by every route. Amounts are strings of integer
 * minor units; `x-amount` marks them so the validation error can say so plainly.
 */
import { Type, type TSchema, type Static } from '@sinclair/typebox';

export const Amount = (opts: { description?: string } = {}) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$', 'x-amount': true, description: opts.description ?? 'integer minor units as a string, e.g. "100"' });

export const StringEnum = <const T extends readonly string[]>(values: T, opts: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });

export const Id = (prefix: string) => Type.String({ minLength: 1, maxLength: 100, description: `${prefix}_…` });

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Record(Type.String(), Type.Unknown()) }),
});

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
