/** Rating sellers: a workspace key, for a transaction one of its wallets paid. */
import type { HttpClient } from './http.js';
import type { RateInput, Rating } from '../types.js';

export class RatingsApi {
  constructor(private http: HttpClient) {}

  async rate(providerId: string, body: RateInput): Promise<Rating> {
    return (await this.http.request<{ rating: Rating }>('POST', `/v1/providers/${encodeURIComponent(providerId)}/rate`, { body })).rating;
  }
}
