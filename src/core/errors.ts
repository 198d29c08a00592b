/**
 * The one error type of agentpay. Domain code throws `AppError` with a code from
 * `ERROR_STATUS` (the contract's table); the gateway's error handler is the only place that turns a code
 * into an HTTP status (see `httpStatusFor`).
 */
import { ERROR_STATUS, httpStatusFor, type ErrorCode } from 'agentpay-sdk/contract';

// the codes and their statuses are the wire's (packages/sdk/src/contract/errors.ts)
export { ERROR_STATUS, httpStatusFor, type ErrorCode };

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
