/**
 * How results leave the CLI: JSON on stdout with --json or when stdout is not a terminal
 * (scripts, pipes, CI), aligned text tables on a terminal. Amounts are the gateway's
 * exact strings; nothing here formats or converts them. Notes for people go to stderr
 * so that stdout stays parseable.
 */
export interface Column<T> {
  header: string;
  get: (row: T) => unknown;
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
