/**
 * The error codes of the API and the HTTP status each is answered with: one table, which the
 * gateway's error handler, the OpenAPI document's error envelopes and every client read
 * (docs/api/conventions.md § The error envelope). A program handles an error by its code.
 */
import { StringEnum } from './schemas.js';

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
  USAGE_ABOVE_MAXIMUM: 409,
  // payment sessions (docs/protocol.md § Payment sessions)
  SESSION_NOT_FOUND: 404,
  SESSION_CLOSED: 409,
  SESSION_EXPIRED: 410,
  VOUCHER_INVALID: 400,
  VOUCHER_ABOVE_CAP: 409,
  VOUCHER_STALE: 409,
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

/** Every error code the gateway answers with. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** An error code as a schema (the `code` of an error envelope). */
export const ErrorCodeSchema = StringEnum(ERROR_CODES, { description: 'what went wrong, for programs: handle errors by this' });

/** The status an error code is answered with; 500 for a code the table does not know. */
export function httpStatusFor(code: string): number {
  return (ERROR_STATUS as Record<string, number>)[code] ?? 500;
}
