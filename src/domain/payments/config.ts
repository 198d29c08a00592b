/**
 * Payment settings: the numbers of the payment protocol, in one place (the rails' are in
 * ../rails/config.ts). A gateway's configuration (GatewayConfig) carries the ones a deployment
 * may change and takes their defaults from DEFAULT_PAYMENTS; the breaker threshold and the
 * idempotency window are fixed by the specification. docs/api/payments.md § Configuration.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export interface PaymentSettings {
  /** platform fee in basis points, rounded down to the minor unit; 300 = 3% */
  feeBps: number;
  /** how long a signed price challenge can be paid */
  challengeTtlMs: number;
  /**
   * how long an authorized transaction waits for complete or fail before its hold is released:
   * refunded to the buyer, `expired`, with a failed receipt (was `inFlightTtlMs`, still accepted
   * by resolveConfig)
   */
  releaseUnsettledAfterMs: number;
  /** how often the expiry sweeper looks for such transactions */
  sweepIntervalMs: number;
}

export const DEFAULT_PAYMENTS: PaymentSettings = {
  feeBps: 300,
  challengeTtlMs: 5 * MINUTE,
  releaseUnsettledAfterMs: 15 * MINUTE,
  sweepIntervalMs: 30 * SECOND,
};

/** Provider errors in a row that pause a seller for a wallet (the breaker, ./breaker.ts). */
export const BREAKER_THRESHOLD = 3;

/** How long a payment idempotency key is remembered after its first use: the 24 hours the protocol promises. */
export const IDEMPOTENCY_WINDOW_MS = 24 * HOUR;
