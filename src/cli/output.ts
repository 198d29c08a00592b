/**
 * How results leave the CLI: JSON on stdout with --json or when stdout is not a terminal
 * (scripts, pipes, CI), aligned text tables on a terminal. JSON keeps the gateway's exact
 * minor-unit strings; tables show amounts with `moneyText`. Notes for people go to
 * stderr so that stdout stays parseable.
 */
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

function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (Array.isArray(v)) return v.length ? v.map(cell).join(',') : '-';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A plain aligned table; the last column is not padded. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const cells = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.get(r))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => line.map((s, i) => (i === line.length - 1 ? s : s.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** Label/value lines, labels aligned. */
export function renderFields(fields: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${(k + ':').padEnd(width + 1)}  ${cell(v)}`).join('\n');
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
