/**
 * The x402 Bazaar discovery list (x402 v2 spec § 8, and the `DiscoveryResource` of
 * `@x402/extensions/bazaar` 2.27, which clients parse): the gateway's market as
 * `GET /v1/x402/discovery/resources` answers it (docs/api/market.md § x402 Bazaar list).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, Open, StringEnum, Timestamp } from './schemas.js';

/** An x402 `PaymentRequirements` for the agentpay scheme, without a live challenge (the seller's 402 carries one). */
export const BazaarAccept = Closed({
  scheme: Type.Literal('agentpay'),
  network: Type.String({ description: 'CAIP-2 style: agentpay:sandbox or agentpay:live (the gateway\'s mode)' }),
  amount: Amount({ description: 'the price per call, integer minor units' }),
  asset: Type.String({ description: 'the currency or asset the price is in (USD, USDC)' }),
  payTo: Type.String({ description: "the seller's settlement wallet id" }),
  maxTimeoutSeconds: Type.Integer({ minimum: 1, description: 'how long a challenge can be paid' }),
  extra: Closed({ capabilityId: Id('cap'), providerId: Id('prv') }),
}, { description: 'an accept of the agentpay scheme; pay by calling the resource, which answers 402 with a signed challenge' });

/** An x402 `exact` PaymentRequirements (EIP-3009 USDC to the platform's receiving address; the gateway verifies and settles it for the seller), for USD prices when the gateway has a chain. */
export const BazaarExactAccept = Closed({
  scheme: Type.Literal('exact'),
  network: Type.String(),
  amount: Type.String(),
  asset: Type.String(),
  payTo: Type.String(),
  maxTimeoutSeconds: Type.Integer({ minimum: 1 }),
  extra: Closed({ name: Type.String(), version: Type.String() }),
}, { description: "x402 exact: USDC base units to the platform's address (payTo) on the gateway's chain; extra: the token's EIP-712 domain" });

export const BazaarResource = Closed({
  resource: Type.String({ description: 'the URL to call (an MCP server URL for a tool), or agentpay:capability/<id> for a capability with no URL (a package)' }),
  type: StringEnum(['http', 'mcp'] as const),
  x402Version: Type.Literal(2),
  accepts: Type.Array(Type.Union([BazaarAccept, BazaarExactAccept]), { minItems: 1 }),
  lastUpdated: Timestamp({ description: 'when the listing last changed (ISO 8601, as @x402/extensions types it)' }),
  description: Type.String(),
  mimeType: Type.Optional(Type.String()),
  serviceName: Type.String({ description: "the seller's name, at most 32 printable ASCII characters" }),
  tags: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 5 }),
  extensions: Type.Optional(Open({}, { description: 'bazaar: {info: {input: …}, schema} for an MCP tool' })),
  metadata: Closed({
    capabilityId: Id('cap'),
    providerId: Id('prv'),
    name: Type.String(),
    category: Type.String(),
    protocol: StringEnum(['rest', 'mcp'] as const),
    reputation: Type.Number(),
  }, { description: "agentpay's own fields of the listing" }),
});

export const BazaarResourceList = Closed({
  x402Version: Type.Literal(2),
  items: Type.Array(BazaarResource),
  pagination: Closed({ limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer() }),
}, { description: 'the market as an x402 Bazaar resource list' });

export type BazaarResourceList = Static<typeof BazaarResourceList>;
export type BazaarResource = Static<typeof BazaarResource>;
