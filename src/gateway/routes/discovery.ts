/** Discovery search; ranking and filters are in src/domain/market/discovery.ts. */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { Amount, OptionalBody, StringEnum } from '../schemas.js';
import { MAX_LIMIT } from '../../domain/market/discovery.js';
import { BazaarResourceList, OpenRecord } from 'agentpay-sdk/contract';
import { bazaarResources } from '../../domain/market/discovery-bazaar.js';
import { Closed } from 'agentpay-sdk/contract';

const SearchBody = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 1000, description: 'natural language' })),
    category: Type.Optional(Type.String({ maxLength: 100, description: 'exact match' })),
    protocol: Type.Optional(StringEnum(['rest', 'mcp'] as const)),
    maxPriceMinor: Type.Optional(Amount({ description: 'at most this price, integer minor units as a string' })),
    maxLatencyMs: Type.Optional(Type.Number({ minimum: 0, description: 'ceiling on advertised median latency' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `default 20; more than ${MAX_LIMIT} is treated as ${MAX_LIMIT}` })),
    // the tenant comes from the key; accepted and ignored, as the specification says
    providerId: Type.Optional(Type.Unknown()),
    workspaceId: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const BazaarQuery = Type.Object({
  type: Type.Optional(StringEnum(['http', 'mcp'] as const, { description: 'http: REST capabilities; mcp: tools' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 20' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'default 0; the list reaches the first 1000 listings of the ranking' })),
  scheme: Type.Optional(Type.String({ maxLength: 100, description: 'only agentpay is listed; any other gives an empty list' })),
  network: Type.Optional(Type.String({ maxLength: 100, description: 'agentpay:sandbox or agentpay:live (this gateway\'s), or agentpay:*; any other gives an empty list' })),
  payTo: Type.Optional(Type.String({ maxLength: 100, description: "a seller's settlement wallet id: only its listings of the page" })),
  extensions: Type.Optional(Type.String({ maxLength: 200, description: 'accepted and ignored' })),
}, { additionalProperties: false });

export default async function discoveryRoutes(app: FastifyInstance) {
  const { discovery } = app.services;

  // The same market as an x402 Bazaar resource list, for x402 clients (withBazaar(...).extensions.bazaar.listResources
  // with the facilitator URL https://<gateway>/v1/x402 and createAuthHeaders giving {bazaar: {authorization: 'Bearer <key>'}}).
  app.get<{ Querystring: Static<typeof BazaarQuery> }>(
    '/v1/x402/discovery/resources',
    { config: { scope: 'discovery:read' }, schema: { summary: 'The market as an x402 Bazaar resource list (discovery, in the x402 format)', querystring: BazaarQuery, response: { 200: BazaarResourceList } } },
    async (request) => bazaarResources(app.services.ctx, discovery, app.services.config, request.query),
  );

  app.post<{ Body: Static<typeof SearchBody> | null }>(
    '/v1/discovery/search',
    { config: { scope: 'discovery:read', errors: ['INVALID_CURSOR'] }, schema: { summary: 'Search the market: discoverable capabilities of verified sellers', body: OptionalBody(SearchBody), response: { 200: Closed({ results: Type.Array(OpenRecord('a capability as discovery shows it, with its seller (docs/api/market.md)')), nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { description: 'one page of results' }) } } },
    // every caller with discovery:read sees the same market, so the principal is not needed
    async (request) => discovery.search(request.body ?? {}),
  );
}
