/**
 * The market as an x402 Bazaar resource list (`GET /v1/x402/discovery/resources`): the same
 * listings, in the same order, as discovery search without a query (src/domain/market/discovery.ts),
 * each as an x402 `DiscoveryResource` whose accepts are the agentpay scheme at the listing's price
 * and, when the gateway has a chain (x402 `exact`, src/domain/payments/x402-exact.ts) and the listing
 * has a USD price, x402's `exact` scheme as the seller's 402 (or paid tool) offers it. The accepts
 * carry no challenge: a buyer calls the resource and pays the 402 it gets.
 */
import type { ExactOffer } from 'agentpay-sdk/contract';
import { agentpayNetworkOf } from 'agentpay-sdk/interop';
import type { DomainContext } from '../platform/context.js';
import { countDiscoverable, MATCH_CEILING, type DiscoveryService } from './discovery.js';

export interface BazaarQuery {
  type?: 'http' | 'mcp';
  limit?: number;
  offset?: number;
  scheme?: string;
  network?: string;
  payTo?: string;
}

export interface BazaarSettings {
  mode: 'sandbox' | 'production';
  challengeTtlMs: number;
  /** the gateway's x402 `exact` offer (GET /v1/x402/exact), null or absent without a chain */
  exact?: ExactOffer | null;
}

/** The x402 network of this gateway's money, named as the sellers' 402s name it: `agentpay:sandbox` or `agentpay:live`. */
export const bazaarNetwork = (mode: BazaarSettings['mode']) => agentpayNetworkOf(mode);

/** x402's ResourceInfo rules: serviceName 1-32 printable ASCII; at most 5 tags of 1-32 characters. */
const serviceName = (name: string) => (name.replace(/[^\x20-\x7e]/g, '').trim().slice(0, 32) || 'agentpay seller');
const tagsOf = (tags: readonly string[]) => tags.filter((t) => t.length >= 1).map((t) => t.slice(0, 32)).slice(0, 5);

export async function bazaarResources(ctx: DomainContext, discovery: DiscoveryService, settings: BazaarSettings, q: BazaarQuery) {
  const limit = Math.min(Math.max(1, q.limit ?? 20), 100);
  const offset = Math.min(Math.max(0, q.offset ?? 0), MATCH_CEILING);
  const network = bazaarNetwork(settings.mode);
  const empty = { x402Version: 2 as const, items: [], pagination: { limit, offset, total: 0 } };
  // the agentpay scheme on this gateway's network; x402 `exact` on its chain
  const exact = settings.exact ?? undefined;
  const agentpay = (q.scheme === undefined || q.scheme === 'agentpay') && (q.network === undefined || q.network === network || q.network === 'agentpay:*');
  const wantsExact = exact !== undefined && (q.scheme === undefined || q.scheme === 'exact')
    && (q.network === undefined || q.network === exact.network || q.network === 'eip155:*');
  if (!agentpay && !wantsExact) return empty;
  const protocol = q.type === undefined ? undefined : q.type === 'mcp' ? 'mcp' as const : 'rest' as const;
  const { results } = await discovery.search({ limit, ...(protocol ? { protocol } : {}) }, { offset });
  const { total, payTo, updated } = await ctx.store.read(async (r) => {
    const wallets = new Map<string, string>();
    const times = new Map<string, number>();
    for (const res of results) {
      if (!wallets.has(res.provider.id)) wallets.set(res.provider.id, (await r.tenants.get(res.provider.id))?.settlementWalletId ?? '');
      times.set(res.capability.id, (await r.capabilities.get(res.capability.id))?.updatedAt ?? 0);
    }
    return { total: await countDiscoverable(r, protocol ? { protocol } : {}), payTo: wallets, updated: times };
  });
  const maxTimeoutSeconds = Math.max(1, Math.floor(settings.challengeTtlMs / 1000));
  /** the `exact` accept of a listing, as its seller's 402 makes it (agentpay-sdk/interop x402ExactRequirements) */
  const exactAccept = (c: { currency: string; priceMinor: string }) => (exact && wantsExact && c.currency === exact.currency ? [{
    scheme: 'exact' as const, network: exact.network, amount: (BigInt(c.priceMinor) * BigInt(exact.unitsPerMinor)).toString(), asset: exact.asset, payTo: exact.payTo,
    maxTimeoutSeconds: Math.max(60, maxTimeoutSeconds), extra: { ...exact.extra },
  }] : []);
  const items = results
    .filter((res) => q.payTo === undefined || payTo.get(res.provider.id) === q.payTo)
    .map((res) => {
      const c = res.capability;
      const mcp = c.protocol === 'mcp';
      const address = res.version.address as { kind: string; url?: string };
      const accepts = [
        ...(agentpay ? [{
          scheme: 'agentpay' as const, network, amount: c.priceMinor, asset: c.currency, payTo: payTo.get(res.provider.id) ?? '',
          maxTimeoutSeconds, extra: { capabilityId: c.id, providerId: res.provider.id },
        }] : []),
        ...exactAccept(c),
      ];
      return {
        resource: address.kind === 'url' && address.url ? address.url : `agentpay:capability/${c.id}`,
        type: mcp ? 'mcp' as const : 'http' as const,
        x402Version: 2 as const,
        accepts,
        lastUpdated: new Date(updated.get(c.id) ?? 0).toISOString(),
        description: c.description,
        mimeType: 'application/json',
        serviceName: serviceName(res.provider.name),
        tags: tagsOf(c.tags),
        ...(mcp && 'toolName' in c && c.toolName ? {
          extensions: {
            bazaar: {
              info: { input: { type: 'mcp', tool: c.toolName, inputSchema: c.schema ?? { type: 'object' }, description: c.description } },
              schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { input: { type: 'object' } }, required: ['input'] },
            },
          },
        } : {}),
        metadata: { capabilityId: c.id, providerId: res.provider.id, name: c.name, category: c.category, protocol: c.protocol, reputation: res.provider.reputation },
      };
    })
    // a listing `exact` alone was asked of and that it cannot take (a price in another currency) is left out, as payTo leaves others out
    .filter((item) => item.accepts.length > 0);
  return { x402Version: 2 as const, items, pagination: { limit, offset, total } };
}
