/**
 * The seller's side of the payment protocol (docs/protocol.md): a provider key with
 * payments:write. The seller middleware is built on these four calls.
 */
import type { HttpClient } from './http.js';
import type { Authorization, Challenge, PaymentProof, Receipt } from '../types.js';

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
}
