/**
 * Canonical JSON for everything agentpay signs: keys sorted at every level by
 * JavaScript's default string order (UTF-16 code units, as RFC 8785 orders them),
 * no whitespace, strings escaped as JSON.stringify does. Amounts are strings by the
 * time they get here; NaN, Infinity, lone surrogates, undefined values in arrays,
 * bigints and other non-JSON values are refused rather than silently changed.
 */
export class CanonicalJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalJsonError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function canonicalize(value: unknown): string {
  return write(value, '$');
}

function write(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`${path}: ${value} cannot be signed`);
      return JSON.stringify(value);
    case 'string':
      if (LONE_SURROGATE.test(value)) throw new CanonicalJsonError(`${path}: lone surrogate in string`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        // index by index: map() skips the holes of a sparse array and would write "[1,,3]"
        const items: string[] = [];
        for (let i = 0; i < value.length; i++) items.push(write(value[i], `${path}[${i}]`));
        return `[${items.join(',')}]`;
      }
      assertPlainObject(value, path);
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      const parts: string[] = [];
      for (const k of keys) {
        if (LONE_SURROGATE.test(k)) throw new CanonicalJsonError(`${path}: lone surrogate in key`);
        parts.push(`${JSON.stringify(k)}:${write(obj[k], `${path}.${k}`)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new CanonicalJsonError(`${path}: a ${typeof value} cannot be signed`);
  }
}

function assertPlainObject(value: object, path: string): void {
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) || (proto !== Object.prototype && proto !== null)) {
    throw new CanonicalJsonError(`${path}: only plain objects can be signed`);
  }
}

/** The signed form of an object: itself without `signature` and `signingKeyId`. */
export function signingPayload(obj: Record<string, unknown>): string {
  // checked before the spread below, which would turn a Date or an array into a plain copy
  if (obj === null || typeof obj !== 'object') throw new CanonicalJsonError('$: only plain objects can be signed');
  assertPlainObject(obj, '$');
  const { signature: _s, signingKeyId: _k, ...rest } = obj;
  return canonicalize(rest);
}
