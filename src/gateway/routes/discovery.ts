/** Discovery search; ranking and filters are in src/domain/market/discovery.ts. */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { OptionalBody } from '../schemas.js';
import { BazaarQuery, BazaarResourceList, DiscoveryPage, DiscoverySearchBody } from 'agentpay-sdk/contract';
import { bazaarResources } from '../../domain/market/discovery-bazaar.js';

export default async function discoveryRoutes(app: FastifyInstance) {
  const { discovery } = app.services;

  // The same market as an x402 Bazaar resource list, for x402 clients (withBazaar(...).extensions.bazaar.listResources
  // with the facilitator URL https://<gateway>/v1/x402 and createAuthHeaders giving {bazaar: {authorization: 'Bearer <key>'}}).
  app.get<{ Querystring: Static<typeof BazaarQuery> }>(
    '/v1/x402/discovery/resources',
    { config: { scope: 'discovery:read' }, schema: { summary: 'The market as an x402 Bazaar resource list (discovery, in the x402 format)', querystring: BazaarQuery, response: { 200: BazaarResourceList } } },
    async (request) => bazaarResources(app.services.ctx, discovery, { ...app.services.config, exact: app.services.x402Exact.publicOffer() }, request.query),
  );

  app.post<{ Body: Static<typeof DiscoverySearchBody> | null }>(
    '/v1/discovery/search',
    { config: { scope: 'discovery:read', errors: ['INVALID_CURSOR'] }, schema: { summary: 'Search the market: discoverable capabilities of verified sellers', body: OptionalBody(DiscoverySearchBody), response: { 200: DiscoveryPage } } },
    // every caller with discovery:read sees the same market, so the principal is not needed
    async (request) => discovery.search(request.body ?? {}),
  );
}
