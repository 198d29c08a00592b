/**
 * The SDK's error: every refusal from the gateway (and every client-side refusal such
 * as PRICE_ABOVE_CLIENT_LIMIT or CANCELLED) arrives as an AgentpayError with the
 * specification's code. Runs in browsers and edge runtimes: no Node imports.
 */
export class AgentpayError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  readonly details: Record<string, unknown>;
  /** top-level fields of the error body besides `error` (approvalId, challenge, errorId) */
  readonly body: Record<string, unknown>;

  constructor(code: string, message: string, opts: { status?: number; details?: Record<string, unknown>; body?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AgentpayError';
    this.code = code;
    this.status = opts.status;
    this.details = opts.details ?? {};
    this.body = opts.body ?? {};
  }
}
