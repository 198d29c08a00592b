/**
 * The seller's side of the payment protocol (docs/protocol.md): a provider key with
 * payments:write. The seller middleware is built on these four calls, and on `batch`,
 * which carries several of them in one request.
 */
import type { HttpClient } from './http.js';
import type { Authorization, Challenge, Receipt, Replay } from '../types.js';
import type { AuthorizeInput, CompleteInput, FailInput } from '../contract/payment.js';
import type { ExactOffer, ExactReleased, ExactReleaseInput, ExactSettled, ExactSettleInput, ExactVerified, ExactVerifyInput } from '../contract/x402.js';

/** One operation of a batch: the body of its own route and `op`. */
export type PaymentOperation =
  | { op: 'challenge'; capabilityId: string }
  | ({ op: 'authorize' } & AuthorizeInput)
  | ({ op: 'complete' } & CompleteInput)
  | ({ op: 'fail' } & FailInput);

/**
 * `idempotencyKey` and `requestHash` (both or neither): the buyer's key and the seller's
 * fingerprint of the request; a retry of a call that succeeded then answers a `Replay`.
 * `response` of complete: the answer (body in base64), kept by the gateway for replays of an
 * idempotent call. The bodies are the contract's (contract/payment.ts).
 */
export type { AuthorizeInput, CompleteInput, FailInput };

/** What the operation's own route would have answered: its status and body (an error envelope from 400 up). */
export interface PaymentOperationResult {
  status: number;
  body: unknown;
}

/** x402 `exact`: the offer, the verified and settled authorizations (contract/x402.ts, shared with the gateway). */
export type { ExactOffer, ExactVerified, ExactSettled };

export class PaymentsApi {
  constructor(private http: HttpClient) {}

  /** A platform-signed price challenge for one call of the caller's capability, at its price now. */
  async challenge(capabilityId: string): Promise<Challenge> {
    return (await this.http.request<{ challenge: Challenge }>('POST', '/v1/x402/challenge', { body: { capabilityId } })).challenge;
  }
  /** Checks the buyer's proof and places a hold; `payment` may be the x-payment header value as received. */
  authorize(input: AuthorizeInput & { idempotencyKey?: undefined }): Promise<Authorization>;
  /** With an idempotency key: a retry of a call that succeeded answers its `Replay` (nothing held or charged). */
  authorize(input: AuthorizeInput): Promise<Authorization | Replay>;
  authorize(input: AuthorizeInput): Promise<Authorization | Replay> {
    return this.http.request('POST', '/v1/x402/authorize', { body: input });
  }
  /** Captures the hold, settles and returns the signed success receipt (same receipt when repeated). */
  complete(input: CompleteInput): Promise<{ receipt: Receipt }> {
    return this.http.request('POST', '/v1/x402/complete', { body: input });
  }
  /** Refunds the buyer and returns the failed receipt; `provider_error` counts toward the breaker. */
  fail(input: FailInput): Promise<{ receipt: Receipt }> {
    return this.http.request('POST', '/v1/x402/fail', { body: input });
  }
  /** What to offer for x402's `exact` scheme; null when the gateway has no chain (offer agentpay only). */
  async exactOffer(): Promise<ExactOffer | null> {
    return (await this.http.request<{ offer: ExactOffer | null }>('GET', '/v1/x402/exact')).offer;
  }
  /** Verifies and reserves an x402 `exact` PaymentPayload for one call (402 with x402's reason when refused). */
  exactVerify(input: ExactVerifyInput): Promise<ExactVerified> {
    return this.http.request('POST', '/v1/x402/exact/verify', { body: input });
  }
  /** Settles a verified authorization on chain and records the sale: the receipt and the chain transaction. */
  exactSettle(input: ExactSettleInput): Promise<ExactSettled> {
    return this.http.request('POST', '/v1/x402/exact/settle', { body: input });
  }
  /** The handler failed: the authorization is let go, nothing is settled. */
  exactRelease(input: ExactReleaseInput): Promise<ExactReleased> {
    return this.http.request('POST', '/v1/x402/exact/release', { body: input });
  }
  /**
   * Up to 100 independent operations in one request; the results come in the same order, each
   * with the status and body its route would have answered. The request itself fails (and
   * this throws) only when the whole batch is refused: bad key, malformed batch, rate limit.
   */
  async batch(operations: PaymentOperation[]): Promise<PaymentOperationResult[]> {
    return (await this.http.request<{ results: PaymentOperationResult[] }>('POST', '/v1/x402/batch', { body: { operations } })).results;
  }
}
