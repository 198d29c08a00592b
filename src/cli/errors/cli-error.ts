/**
 * The CLI's own failure: a code, a message, an exit code and, when the person can fix it,
 * the next thing to try. Commands throw it; `describeError` turns it into a Report.
 */

/** Exit codes, documented in docs/cli.md. */
export const EXIT = {
  OK: 0,
  /** refused by the gateway, or invalid input */
  REFUSED: 1,
  /** a flag or argument is missing or wrong */
  USAGE: 2,
  /** cannot reach the gateway, or TLS failed */
  UNREACHABLE: 3,
  /** not authenticated (401) */
  UNAUTHENTICATED: 4,
  /** a bug in agentpay */
  BUG: 70,
  /** the person cancelled a prompt (Ctrl-C) */
  CANCELLED: 130,
} as const;

/** A failure the person can act on. */
export class CliError extends Error {
  readonly code: string;
  readonly exit: number;
  readonly tryNext: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, opts: { exit?: number; tryNext?: string; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.exit = opts.exit ?? EXIT.REFUSED;
    this.tryNext = opts.tryNext;
    this.details = opts.details ?? {};
  }
}

export function usageError(message: string, tryNext?: string, details: Record<string, unknown> = {}): CliError {
  return new CliError('USAGE', message, { exit: EXIT.USAGE, ...(tryNext ? { tryNext } : {}), details });
}
