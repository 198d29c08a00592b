import type { HttpClient } from './http.js';
import type { ProviderDecisionInput, VerificationRequestInput } from '../contract/market.js';
import type { Provider, VerificationRequest } from '../types.js';

const path = (id: string) => `/v1/providers/${encodeURIComponent(id)}`;

/** Sellers: a provider key sees itself, a workspace key verified sellers, the operator all. */
export class ProvidersApi {
  constructor(private http: HttpClient) {}

  /** `verification` (operator only): providers whose latest request has this status, oldest first. */
  async list(filter: { verification?: VerificationRequest['status'] } = {}): Promise<Provider[]> {
    return (await this.http.request<{ providers: Provider[] }>('GET', '/v1/providers', { query: { verification: filter.verification } })).providers;
  }
  async get(id: string): Promise<Provider> {
    return (await this.http.request<{ provider: Provider }>('GET', path(id))).provider;
  }
  /** The provider itself asks to be verified; asking again updates the request and keeps its place. */
  async requestVerification(id: string, input: VerificationRequestInput = {}): Promise<Provider> {
    const body = Object.keys(input).length ? input : undefined;
    return (await this.http.request<{ provider: Provider }>('POST', `${path(id)}/verification-request`, { body })).provider;
  }
  /** Operator key only. */
  async verify(id: string, input: ProviderDecisionInput): Promise<Provider> {
    return (await this.http.request<{ provider: Provider }>('POST', `${path(id)}/verify`, { body: input })).provider;
  }
  /** Operator key only: takes the seller's capabilities out of discovery at once. */
  async suspend(id: string): Promise<Provider> {
    return (await this.http.request<{ provider: Provider }>('POST', `${path(id)}/suspend`)).provider;
  }
  /** Operator key only. */
  async unsuspend(id: string): Promise<Provider> {
    return (await this.http.request<{ provider: Provider }>('POST', `${path(id)}/unsuspend`)).provider;
  }
}
