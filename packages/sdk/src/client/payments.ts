/**
 * The seller's side of the payment protocol (docs/protocol.md): a provider key with
 * payments:write. The seller middleware is built on these four calls, and on `batch`,
 * which carries several of them in one request.
 */
import type { HttpClient } from './http.js';
import type { Authorization, Challenge, PaymentProof, Receipt } from '../types.js';

/** One operation of a batch: the body of its own route and `op`. */
export type PaymentOperation =
  | { op: 'challenge'; capabilityId: string }
  | { op: 'authorize'; capabilityId: string; payment: PaymentProof | string }
  | { op: 'complete'; transactionId: string; responseHash: string }
  | { op: 'fail'; transactionId: string; reason: 'client_error' | 'provider_error'; responseHash?: string; statusCode?: number };

/** What the operation's own route would have answered: its status and body (an error envelope from 400 up). */
export interface PaymentOperationResult {
  status: number;
  body: unknown;
}

export class PaymentsApi {
  constructor(private http: HttpClient) {}

  /** A platform-signed price challenge for one call of the caller's capability, at its price now. */
  async challenge(capabilityId: string): Promise<Challenge> {
    return (await this.http.request<{ challenge: Challenge }>('POST', '/v1/x402/challenge', { body: { capabilityId } })).challenge;
  }
  /** Checks the buyer's proof and places a hold; `payment` may be the x-payment header value as received. */
  authorize(input: { capabilityId: string; payment: PaymentProof | string }): Promise<Authorization> {
    return this.http.request('POST', '/v1/x402/authorize', { body: input });
  }
  /** Captures the hold, settles and returns the signed success receipt (same receipt when repeated). */
  complete(input: { transactionId: string; responseHash: string }): Promise<{ receipt: Receipt }> {
    return this.http.request('POST', '/v1/x402/complete', { body: input });
  }
  /** Refunds the buyer and returns the failed receipt; `provider_error` counts toward the breaker. */
  fail(input: { transactionId: string; reason: 'client_error' | 'provider_error'; responseHash?: string; statusCode?: number }): Promise<{ receipt: Receipt }> {
    return this.http.request('POST', '/v1/x402/fail', { body: input });
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
