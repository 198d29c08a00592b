/**
 * Splits one line of a policy document into tokens, each with its line and column.
 * `#` outside a string starts a comment that runs to the end of the line.
 */
import { MAX_MINOR } from '../../../core/money.js';
import { PolicyParseError } from './errors.js';

export type Token =
  | { type: 'word'; text: string; line: number; column: number }
  | { type: 'amount'; text: string; value: bigint; line: number; column: number }
  | { type: 'string'; text: string; value: string; line: number; column: number }
  | { type: 'symbol'; text: string; line: number; column: number };

const SYMBOLS = ['==', '!=', '<=', '>=', '<', '>', '(', ')', '[', ']', ',', ':'] as const;

/** How a token reads in an error message. */
export function describeToken(t: Token | undefined): string {
  if (!t) return 'the end of the line';
  if (t.type === 'string') return `the text ${t.text}`;
  return `"${t.text}"`;
}

/** Suggests the minor-unit form of a decimal amount, assuming two decimals (USD cents). */
function decimalHint(whole: string, fraction: string): string {
  const w = whole.replace(/_/g, '');
  if (fraction.length <= 2) {
    const minor = BigInt(w) * 100n + BigInt(fraction.padEnd(2, '0'));
    return `amounts are integers in minor units: write ${minor} for ${w}.${fraction.padEnd(2, '0')}`;
  }
  return 'amounts are integers in minor units (cents for USD): write 500 for 5.00';
}

/**
 * Tokens of `text`, which starts at `column` of `line` (after the indentation).
 * Throws PolicyParseError at the first character that cannot start a token.
 */
export function tokenize(text: string, line: number, column: number): Token[] {
  const out: Token[] = [];
  let i = 0;
  const at = (k: number) => ({ line, column: column + k });
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\t') {
      i++;
      continue;
    }
    if (ch === '#') break;
    const start = i;
    if (/[A-Za-z_]/.test(ch)) {
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) i++;
      out.push({ type: 'word', text: text.slice(start, i), ...at(start) });
      continue;
    }
    if (/[0-9]/.test(ch)) {
      while (i < text.length && /[0-9_]/.test(text[i]!)) i++;
      const raw = text.slice(start, i);
      if (text[i] === '.' && /[0-9]/.test(text[i + 1] ?? '')) {
        let j = i + 1;
        while (j < text.length && /[0-9]/.test(text[j]!)) j++;
        throw new PolicyParseError(at(start), 'an integer amount in minor units', `"${text.slice(start, j)}"`, decimalHint(raw, text.slice(i + 1, j)));
      }
      if (/[A-Za-z]/.test(text[i] ?? '')) {
        throw new PolicyParseError(at(i), 'a space after the amount', `"${text[i]}"`, 'amounts are plain integers in minor units, with no currency or unit');
      }
      if (!/^[0-9]+(_[0-9]+)*$/.test(raw)) {
        throw new PolicyParseError(at(start), 'an amount such as 500 or 10_000 (an underscore only between digits)', `"${raw}"`);
      }
      const digits = raw.replace(/_/g, '');
      if (digits.length > 1 && digits.startsWith('0')) throw new PolicyParseError(at(start), 'an amount without leading zeros', `"${raw}"`);
      const value = BigInt(digits);
      if (value > MAX_MINOR) throw new PolicyParseError(at(start), `an amount of at most ${MAX_MINOR} minor units`, `"${raw}"`);
      out.push({ type: 'amount', text: raw, value, ...at(start) });
      continue;
    }
    if (ch === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new PolicyParseError(at(i), 'a closing quote (") before the end of the line', undefined, `the text starting at column ${column + start} is not closed`);
        const c = text[i]!;
        if (c === '"') break;
        if (c === '\\') {
          const n = text[i + 1];
          if (n !== '"' && n !== '\\') throw new PolicyParseError(at(i), 'an escape \\" or \\\\ (the only two in quoted text)', n === undefined ? 'the end of the line' : `"\\${n}"`);
          value += n;
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      i++;
      out.push({ type: 'string', text: text.slice(start, i), value, ...at(start) });
      continue;
    }
    const sym = SYMBOLS.find((s) => text.startsWith(s, i));
    if (sym) {
      i += sym.length;
      out.push({ type: 'symbol', text: sym, ...at(start) });
      continue;
    }
    if (ch === '=') throw new PolicyParseError(at(start), '"==" (equality is written with two equals signs)', '"="');
    if (ch === '!') throw new PolicyParseError(at(start), '"!=" or the word "not"', '"!"');
    if (ch === '&' || ch === '|') throw new PolicyParseError(at(start), `the word "${ch === '&' ? 'and' : 'or'}"`, `"${text.slice(start, text[start + 1] === ch ? start + 2 : start + 1)}"`);
    if (ch === "'") throw new PolicyParseError(at(start), 'text in double quotes ("…")', `"'"`);
    if (ch === '-' && /[0-9]/.test(text[i + 1] ?? '')) throw new PolicyParseError(at(start), 'an amount of zero or more (amounts are never negative)', '"-"');
    throw new PolicyParseError(at(start), 'a field, a value or an operator', `"${ch}"`);
  }
  return out;
}
