/**
 * What text a request may carry (docs/api/conventions.md § Text), the one rule for every string
 * the API takes, so that SQLite and PostgreSQL store the same things (PostgreSQL refuses NUL in
 * text and in JSON; a lone surrogate has no UTF-8 form at all):
 *
 * - anywhere in a request, at any depth, keys included: no control characters but tab, line feed
 *   and carriage return (no C0, DEL or C1), and no lone surrogate; objects and arrays nest at
 *   most MAX_NESTING levels;
 * - a field that is one line (every string field of a route's schema but those marked
 *   multi-line) takes no tab, line feed or carriage return either.
 *
 * The gateway applies it to every route's schema (src/gateway/plugins/request-text.ts) and to
 * what a request carries encoded (a payment proof in its header form, src/domain/payments/proof.ts).
 */

/** How deeply objects and arrays of a request may nest. */
export const MAX_NESTING = 64;

// C0 but tab, LF, CR; DEL; C1; and (with the u flag, which pairs surrogates first) a surrogate left alone
const UNSAFE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|\p{Cs}/u;
const UNSAFE_ONE_LINE = /[\u0000-\u001F\u007F-\u009F]|\p{Cs}/u;

const hex = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

/** What is wrong with a string under the rule (`oneLine`: a field that is one line), or undefined. */
export function textProblem(s: string, oneLine: boolean): string | undefined {
  const m = (oneLine ? UNSAFE_ONE_LINE : UNSAFE).exec(s);
  if (!m) return undefined;
  const c = m[0].charCodeAt(0);
  const at = `${hex(c)} at character ${m.index + 1}`;
  if (c >= 0xd800 && c <= 0xdfff) return `must be valid Unicode text: it has a lone surrogate (${at}), half of a character that has no UTF-8 form; send well-formed text`;
  if (c === 0x09 || c === 0x0a || c === 0x0d) return `must be one line: tabs and line breaks are refused in this field (${at})`;
  return `must not contain control characters (${at}); remove it`;
}

export interface TextRefusal {
  /** JSON Pointer of the value at fault, as ajv writes it (`/a/0/b`) */
  instancePath: string;
  message: string;
}

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first string or key of a request's value (parsed JSON, a query or params object) the rule
 * refuses, or a nesting deeper than MAX_NESTING; undefined when all is well. Never recurses
 * deeper than MAX_NESTING, however deep the value.
 */
export function unsafeText(value: unknown): TextRefusal | undefined {
  const walk = (v: unknown, path: string, depth: number): TextRefusal | undefined => {
    if (typeof v === 'string') {
      const p = textProblem(v, false);
      return p ? { instancePath: path, message: p } : undefined;
    }
    if (v === null || typeof v !== 'object') return undefined;
    if (depth >= MAX_NESTING) return { instancePath: path, message: `is nested deeper than ${MAX_NESTING} levels of objects and arrays; send a flatter value` };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const r = walk(v[i], `${path}/${i}`, depth + 1);
        if (r) return r;
      }
      return undefined;
    }
    for (const [k, x] of Object.entries(v)) {
      const p = textProblem(k, false);
      if (p) return { instancePath: `${path}/${pointer(k)}`, message: `(a field name) ${p}` };
      const r = walk(x, `${path}/${pointer(k)}`, depth + 1);
      if (r) return r;
    }
    return undefined;
  };
  return walk(value, '', 0);
}
