/** `agentpay search`: discovery filters from plain options, and the results as a table. */
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { CapabilityProtocol, DiscoveryFilters, DiscoveryResult } from 'agentpay-sdk/types';
import { parsePrice } from './capabilities.js';
import { moneyText, renderTable } from './output.js';

export interface SearchOptions {
  query?: string | undefined;
  maxPrice?: string | undefined;
  protocol?: CapabilityProtocol | undefined;
  category?: string | undefined;
  maxLatencyMs?: number | undefined;
  limit?: number | undefined;
}

export async function search(client: AgentpayClient, o: SearchOptions): Promise<DiscoveryResult[]> {
  const filters: DiscoveryFilters = {
    ...(o.query ? { query: o.query } : {}),
    ...(o.maxPrice !== undefined ? { maxPriceMinor: parsePrice(o.maxPrice, '--max-price') } : {}),
    ...(o.protocol ? { protocol: o.protocol } : {}),
    ...(o.category ? { category: o.category } : {}),
    ...(o.maxLatencyMs !== undefined ? { maxLatencyMs: o.maxLatencyMs } : {}),
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
  };
  return client.discovery.search(filters);
}

export function searchTable(results: readonly DiscoveryResult[]): string {
  return renderTable(results, [
    { header: 'ID', get: (r) => r.capability.id },
    { header: 'NAME', get: (r) => r.capability.name },
    { header: 'PRICE', get: (r) => moneyText(r.capability.priceMinor, r.capability.currency) },
    { header: 'PROTOCOL', get: (r) => r.capability.protocol },
    { header: 'PROVIDER', get: (r) => `${r.provider.name}${r.provider.verified ? ' (verified)' : ''}` },
    { header: 'SCORE', get: (r) => r.score.toFixed(3) },
  ], '(no capabilities match)');
}
