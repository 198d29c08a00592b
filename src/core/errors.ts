/**
 * The one error type of agentpay. Domain code throws `AppError` with a code from
 * `ERROR_STATUS`; the gateway's error handler is the only place that turns a code
 * into an HTTP status (see `httpStatusFor`).
 */
export const ERROR_STATUS = {
  // refusals while buying
  PAYMENT_REQUIRED: 402,
  POLICY_DENIED: 403,
  APPROVAL_REQUIRED: 403,
  INSUFFICIENT_FUNDS: 402,
  WALLET_FROZEN: 403,
  WALLET_PROVIDER_PAUSED: 429,
  CHALLENGE_EXPIRED: 410,
  REPLAY_DETECTED: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  // integration errors
  VALIDATION_FAILED: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CAPABILITY_NOT_FOUND: 404,
  PROVIDER_NOT_FOUND: 404,
  WALLET_NOT_FOUND: 404,
  NOT_SUPPORTED: 501,
  INSECURE_TRANSPORT: 403,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  SERVICE_UNAVAILABLE: 503,
  RATE_LIMITED: 429,
  CONFLICT: 409,
  INVALID_CURSOR: 400,
  // money movement
  DEPOSIT_HELD: 409,
  DESTINATION_COOLING_DOWN: 409,
  SANCTIONED_ADDRESS: 403,
  TREASURY_UNAVAILABLE: 503,
  COVERAGE_SHORTFALL: 503,
  DUPLICATE_EXTERNAL_REF: 409,
  RAIL_DISAGREES: 409,
  // everything else
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra top-level fields of the error body, e.g. `approvalId` or `challenge`. */
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.extra = extra;
  }

  get status(): number {
    return httpStatusFor(this.code);
  }
}

export function httpStatusFor(code: string): number {
  return (ERROR_STATUS as Record<string, number>)[code] ?? 500;
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** `VALIDATION_FAILED` naming the field, the way every 400 of the API reads. */
export function validationError(field: string, message: string, details: ErrorDetails = {}): AppError {
  return new AppError('VALIDATION_FAILED', `${field}: ${message}`, { field, ...details });
}

export function notFound(code: 'NOT_FOUND' | 'CAPABILITY_NOT_FOUND' | 'PROVIDER_NOT_FOUND' | 'WALLET_NOT_FOUND', what: string, id: string): AppError {
  return new AppError(code, `${what} ${id} not found`, { id });
}

export function forbidden(message: string, details: ErrorDetails = {}): AppError {
  return new AppError('FORBIDDEN', message, details);
}

/**
 * FORBIDDEN because the action takes another kind of key: `details.keyKinds` lists the kinds
 * that can do it, and `details.ownerId` the one tenant whose key it must be, when only that
 * tenant's own key will do. Clients build their hints from these, never from the message.
 */
export function wrongKeyKind(
  keyKinds: readonly ('workspace' | 'provider' | 'operator')[],
  message: string,
  opts: { ownerId?: string } = {},
): AppError {
  return forbidden(message, { keyKinds: [...keyKinds], ...(opts.ownerId ? { ownerId: opts.ownerId } : {}) });
}

/**
 * Text an error shows a person, made safe for a terminal: control characters (C0, DEL, C1),
 * bidirectional overrides and isolates (U+202E turns the rest of a line around) and other
 * invisible format characters are written as `\uXXXX`, so an id a client sent that the message
 * echoes cannot move the cursor, colour a terminal or reorder what it shows. The gateway's
 * error envelope passes every message and detail through it (src/gateway/plugins/errors.ts).
 */
export function displaySafe(text: string): string {
  return text.replace(UNSAFE_FOR_DISPLAY, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

// eslint-disable-next-line no-control-regex
const UNSAFE_FOR_DISPLAY = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
