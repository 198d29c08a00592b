/** Discovery search; ranking and filters are in src/domain/discovery.ts. */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { Amount, OptionalBody, StringEnum } from '../schemas.js';
import { MAX_LIMIT } from '../../domain/discovery.js';
import { OpenRecord } from 'agentpay-sdk/contract';
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

export default async function discoveryRoutes(app: FastifyInstance) {
  const { discovery } = app.services;

  app.post<{ Body: Static<typeof SearchBody> | null }>(
    '/v1/discovery/search',
    { config: { scope: 'discovery:read', errors: ['INVALID_CURSOR'] }, schema: { summary: 'Search the market: discoverable capabilities of verified sellers', body: OptionalBody(SearchBody), response: { 200: Closed({ results: Type.Array(OpenRecord('a capability as discovery shows it, with its seller (docs/api/market.md)')), nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { description: 'one page of results' }) } } },
    // every caller with discovery:read sees the same market, so the principal is not needed
    async (request) => discovery.search(request.body ?? {}),
  );
}
