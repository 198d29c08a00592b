/** Payouts and payout destinations of a provider. docs/api/rails.md. */
import type { HttpClient } from './http.js';

export type { Payout, PayoutDestination, PayoutInput } from '../contract/rails.js';
import type { Payout, PayoutDestination, PayoutInput } from '../contract/rails.js';
import type { ResolveOutcome } from '../contract/payout-states.js';

export interface PayoutListOptions {
  limit?: number;
  after?: string;
  status?: Payout['status'];
  /** ISO 8601 time: only payouts submitted (created) before it */
  submittedBefore?: string;
}

const p = (id: string) => `/v1/providers/${encodeURIComponent(id)}`;

export class PayoutsApi {
  constructor(private http: HttpClient) {}

  /**
   * Pays out from the settlement wallet. Always idempotent: without `idempotencyKey` a
   * random one is made, so keep and pass the same key to retry safely.
   */
  async create(input: PayoutInput, opts: { idempotencyKey?: string } = {}): Promise<Payout> {
    const key = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
    return (await this.http.request<{ payout: Payout }>('POST', '/v1/payouts', { body: input, headers: { 'idempotency-key': key } })).payout;
  }
  /**
   * Newest first: a provider key's own payouts, or with the operator key every provider's
   * (each names its `providerId`). `status` and `submittedBefore` (an ISO time) narrow it:
   * `{status: 'submitted', submittedBefore: <PAYOUT_STUCK_AFTER_MS (a day) before the gateway's time>}` finds the stuck ones.
   */
  list(opts: PayoutListOptions = {}): Promise<{ payouts: Payout[]; nextCursor?: string }> {
    return this.http.request('GET', '/v1/payouts', { query: { ...opts } });
  }
  async get(id: string): Promise<Payout> {
    return (await this.http.request<{ payout: Payout }>('GET', `/v1/payouts/${encodeURIComponent(id)}`)).payout;
  }
  /**
   * Operator key: closes out a `submitted` payout its rail never resolved, after checking with
   * the rail: `paid` (it becomes `confirmed`) or `failed` (re-credited). `reason` is required.
   */
  async resolve(id: string, input: { outcome: ResolveOutcome; reason: string }): Promise<Payout> {
    return (await this.http.request<{ payout: Payout }>('POST', `/v1/payouts/${encodeURIComponent(id)}/resolve`, { body: input })).payout;
  }
  /** Registers the destination of its asset; a change freezes payouts on that asset's rails for 24 hours. */
  setDestination(providerId: string, input: { destination: string; asset?: 'USD' | 'USDC'; chain?: 'base' }): Promise<{ destination: PayoutDestination; changed: boolean }> {
    return this.http.request('PUT', `${p(providerId)}/payout-destination`, { body: input });
  }
  async destinations(providerId: string): Promise<PayoutDestination[]> {
    return (await this.http.request<{ destinations: PayoutDestination[] }>('GET', `${p(providerId)}/payout-destinations`)).destinations;
  }
}
