/** The one error of the policy language: where, and what was expected there. */
export class PolicyParseError extends Error {
  /** 1-based line of the document */
  readonly line: number;
  /** 1-based column (in characters) */
  readonly column: number;
  /** what would have been valid at that place, for people: `a comparison operator (==, !=, <, <=, >, >=)` */
  readonly expected: string;

  constructor(at: { line: number; column: number }, expected: string, found?: string, hint?: string) {
    const what = found === undefined ? `expected ${expected}` : `expected ${expected}, found ${found}`;
    super(`line ${at.line}, column ${at.column}: ${what}${hint ? `. ${hint[0]!.toUpperCase()}${hint.slice(1)}` : ''}`);
    this.name = 'PolicyParseError';
    this.line = at.line;
    this.column = at.column;
    this.expected = expected;
  }

  /** the plain fields, e.g. for JSON output of a lint */
  toJSON(): { line: number; column: number; expected: string; message: string } {
    return { line: this.line, column: this.column, expected: this.expected, message: this.message };
  }
}

/** Up to two edits away: the likely intended word, for "did you mean" hints. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c);
    if (d <= 2 && d < word.length && (!best || d < best.d)) best = { c, d };
  }
  return best?.c;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
