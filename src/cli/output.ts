/**
 * How results leave the CLI: JSON on stdout with --json or when stdout is not a terminal
 * (scripts, pipes, CI), aligned text tables on a terminal. JSON keeps the gateway's exact
 * minor-unit strings; tables show amounts with `moneyText`. Notes for people go to
 * stderr so that stdout stays parseable.
 *
 * Tables are aligned by display width (string-width: a CJK character or an emoji takes two
 * columns, a combining mark none), not by UTF-16 length, so a capability named
 * `天気予報 ☀️ forecast` does not push the columns after it.
 */
import stringWidth from 'string-width';
import { CURRENCY_DECIMALS, minorToDecimal } from '../core/money.js';

export interface Column<T> {
  header: string;
  get: (row: T) => unknown;
}

/**
 * An amount as a table shows it, exact and in whole currency units: "10" USD is
 * "0.10 USD", "5000" USDC is "0.005000 USDC". A currency whose decimals agentpay does
 * not know stays in minor units, saying so: "10 EUR minor units".
 */
export function moneyText(amountMinor: string, currency: string): string {
  const decimals = CURRENCY_DECIMALS[currency];
  const decimal = decimals === undefined ? undefined : minorToDecimal(amountMinor, decimals);
  return decimal === undefined ? `${amountMinor} ${currency} minor units` : `${decimal} ${currency}`;
}

/** How many terminal columns `s` takes. */
export function displayWidth(s: string): number {
  return stringWidth(s);
}

/** `s` followed by spaces up to `width` display columns. */
export function padDisplay(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - stringWidth(s)));
}

/**
 * Control characters (a newline, a tab, an escape sequence in a seller's capability name)
 * would break a row or drive the terminal: a table cell shows them escaped, as `\n`, `\t`,
 * `\x1b`; a `label: value` line keeps a value's line breaks.
 */
function visible(s: string, keepNewlines = false): string {
  return s.replace(keepNewlines ? /[^\P{Cc}\n]/gu : /\p{Cc}/gu, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (Array.isArray(v)) return v.length ? v.map(cell).join(',') : '-';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A plain aligned table, columns aligned by display width; the last column is not padded. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const cells = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => visible(cell(c.get(r)))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => stringWidth(line[i]!))));
  return cells.map((line) => line.map((s, i) => (i === line.length - 1 ? s : padDisplay(s, widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** Label/value lines, labels aligned. */
export function renderFields(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(...fields.map(([k]) => stringWidth(k)));
  return fields.map(([k, v]) => `${padDisplay(k + ':', width + 1)}  ${visible(cell(v), true)}`).join('\n');
}

export class Output {
  constructor(readonly json: boolean) {}

  /** JSON with --json or when stdout is piped; otherwise the human rendering. */
  static choose(jsonFlag: boolean | undefined): Output {
    return new Output(Boolean(jsonFlag) || !process.stdout.isTTY);
  }

  result(value: unknown, human: () => string): void {
    process.stdout.write(this.json ? JSON.stringify(value, null, 2) + '\n' : human() + '\n');
  }

  /** A message for people (warnings, next steps): stderr, so scripts can ignore it. */
  note(message: string): void {
    process.stderr.write(message + '\n');
  }
}
