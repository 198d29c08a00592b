import type { HttpClient } from './http.js';
import type { DiscoveryFilters, DiscoveryResult } from '../types.js';

export class DiscoveryApi {
  constructor(private http: HttpClient) {}

  /** Discoverable capabilities, best first; every filter is optional. */
  async search(filters: DiscoveryFilters = {}): Promise<DiscoveryResult[]> {
    const body = Object.keys(filters).length ? filters : undefined;
    return (await this.http.request<{ results: DiscoveryResult[] }>('POST', '/v1/discovery/search', { body })).results;
  }
}
