/**
 * Canonical JSON for everything agentpay signs: keys sorted at every level by
 * JavaScript's default string order (UTF-16 code units, as RFC 8785 orders them),
 * no whitespace, strings escaped as JSON.stringify does. Amounts are strings by the
 * time they get here; NaN, Infinity, lone surrogates, undefined values in arrays,
 * bigints and other non-JSON values are refused rather than silently changed, and so is a
 * value nested deeper than MAX_CANONICAL_DEPTH (a hostile one would overflow the stack).
 */
export class CanonicalJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CanonicalJsonError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// String.prototype.isWellFormed (ES2024: Node 20, current browsers) where it exists, the pattern elsewhere
const wellFormed: (s: string) => boolean = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
  ? (s) => (s as string & { isWellFormed(): boolean }).isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);

/**
 * How deeply objects and arrays of a signed value may nest: twice what the gateway takes in a
 * request (64 levels), so that anything it accepted can be signed.
 */
export const MAX_CANONICAL_DEPTH = 128;

export function canonicalize(value: unknown): string {
  try {
    return write(value, 0);
  } catch (e) {
    if (e instanceof Refusal) throw new CanonicalJsonError(`$${e.path.reverse().join('')}: ${e.reason}`);
    throw e;
  }
}

/**
 * Why a value cannot be signed, and where: each enclosing level adds its step to `path` on
 * the way out, so the path costs nothing on the (hot) path where everything is fine.
 */
class Refusal {
  readonly path: string[] = [];
  constructor(readonly reason: string) {}
}

function write(value: unknown, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new Refusal(`${value} cannot be signed`);
      return JSON.stringify(value);
    case 'string':
      if (!wellFormed(value)) throw new Refusal('lone surrogate in string');
      return JSON.stringify(value);
    case 'object': {
      if (depth >= MAX_CANONICAL_DEPTH) throw new Refusal(`nested deeper than ${MAX_CANONICAL_DEPTH} levels of objects and arrays`);
      if (Array.isArray(value)) {
        // index by index: map() skips the holes of a sparse array and would write "[1,,3]"
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          try {
            out += (i === 0 ? '' : ',') + write(value[i], depth + 1);
          } catch (e) {
            if (e instanceof Refusal) e.path.push(`[${i}]`);
            throw e;
          }
        }
        return out + ']';
      }
      if (!isPlainObject(value)) throw new Refusal('only plain objects can be signed');
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      let out = '{';
      for (const k of keys) {
        const v = obj[k];
        if (v === undefined) continue;
        if (!wellFormed(k)) throw new Refusal('lone surrogate in key');
        try {
          out += (out.length === 1 ? '' : ',') + JSON.stringify(k) + ':' + write(v, depth + 1);
        } catch (e) {
          if (e instanceof Refusal) e.path.push(`.${k}`);
          throw e;
        }
      }
      return out + '}';
    }
    default:
      throw new Refusal(`a ${typeof value} cannot be signed`);
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return !Array.isArray(value) && (proto === Object.prototype || proto === null);
}

function assertPlainObject(value: object, path: string): void {
  if (!isPlainObject(value)) throw new CanonicalJsonError(`${path}: only plain objects can be signed`);
}

/** The signed form of an object: itself without `signature` and `signingKeyId`. */
export function signingPayload(obj: Record<string, unknown>): string {
  // checked before the spread below, which would turn a Date or an array into a plain copy
  if (obj === null || typeof obj !== 'object') throw new CanonicalJsonError('$: only plain objects can be signed');
  assertPlainObject(obj, '$');
  const { signature: _s, signingKeyId: _k, ...rest } = obj;
  return canonicalize(rest);
}
