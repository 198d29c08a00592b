/**
 * The market on the wire (docs/api/market.md): publishing and editing capabilities, a capability
 * with its seller, and discovery's search, as request bodies and answers. The gateway's routes
 * declare them, the domain takes their types, and the SDK's types are these.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CapabilityAddressSchema } from './address.js';
import { Capability, CapabilityVersion, Metering, Provider } from './resources.js';
import { Amount, Closed, IgnoredTenantIds, MultilineString, Open, StringEnum } from './schemas.js';

/** The largest advertised median latency: an hour. */
export const MAX_LATENCY_MS = 3_600_000;
/** Discovery answers at most this many results a page. */
export const MAX_DISCOVERY_LIMIT = 100;

export const CapabilityProtocol = StringEnum(['rest', 'mcp'] as const);
export type CapabilityProtocol = Static<typeof CapabilityProtocol>;

const Tags = Type.Array(Type.String({ maxLength: 50 }), { maxItems: 32 });
const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the request body or tool arguments' });
const Latency = Type.Number({ minimum: 0, maximum: MAX_LATENCY_MS, description: 'advertised median latency in milliseconds (fractions allowed)' });
// the address is checked field by field by checkCapabilityAddress (address.ts), whose messages name the exact field at fault
const AddressBody = Open({ kind: StringEnum(['url', 'package'] as const) }, { description: '{kind: "url", url} or {kind: "package", command: "npx", args, version}' });

// the metering is checked field by field by the domain (src/domain/market/metering.ts), whose messages name the field at fault
// (each optional here, so that a missing one is refused by the domain and a malformed one by the schema, each by name)
const MeteringBody = Closed({
  unit: Type.Optional(Metering.properties.unit),
  unitPriceMinor: Type.Optional(Metering.properties.unitPriceMinor),
  maxUnits: Type.Optional(Metering.properties.maxUnits),
}, {
  description: 'optional: a metered price {unit, unitPriceMinor, maxUnits}; priceMinor must then be unitPriceMinor × maxUnits, the most one call can cost (docs/protocol.md § Metered prices)',
});

/** Exactly one of `endpoint` or `address`; `toolName` for (and only for) `mcp`. */
export const PublishCapabilityBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: MultilineString({ minLength: 1, maxLength: 5000 }),
    protocol: CapabilityProtocol,
    priceMinor: Amount(),
    category: Type.String({ minLength: 1, maxLength: 100 }),
    endpoint: Type.Optional(Type.String({ maxLength: 2048 })),
    address: Type.Optional(AddressBody),
    toolName: Type.Optional(Type.String({ maxLength: 128 })),
    metering: Type.Optional(MeteringBody),
    schema: Type.Optional(JsonSchemaObject),
    tags: Type.Optional(Tags),
    latencyP50Ms: Type.Optional(Latency),
    currency: Type.Optional(StringEnum(['USD'] as const)),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...IgnoredTenantIds,
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Echo', description: 'Echoes the request body', protocol: 'rest', priceMinor: '100', category: 'utility', endpoint: 'https://example.com/echo' }],
  },
);
/** A publish request as the gateway's domain takes it. */
export type PublishCapabilityBody = Static<typeof PublishCapabilityBody>;

/** Only what changes. The immutable fields are accepted by the schema only so that the refusal can say why. */
export const CapabilityPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 5000 })),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    tags: Type.Optional(Tags),
    priceMinor: Type.Optional(Amount()),
    currency: Type.Optional(StringEnum(['USD'] as const)),
    metering: Type.Optional(Type.Union([MeteringBody, Type.Null()], { description: 'a new metered price (priceMinor follows: unitPriceMinor × maxUnits), or null to charge priceMinor flat again' })),
    schema: Type.Optional(JsonSchemaObject),
    latencyP50Ms: Type.Optional(Type.Union([Latency, Type.Null()])),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'label of the version a schema edit publishes' })),
    address: Type.Optional(Type.Unknown({ description: 'immutable: refused' })),
    endpoint: Type.Optional(Type.Unknown({ description: 'immutable: refused' })),
    protocol: Type.Optional(Type.Unknown({ description: 'immutable: refused' })),
    toolName: Type.Optional(Type.Unknown({ description: 'immutable: refused' })),
    ...IgnoredTenantIds,
  },
  { additionalProperties: false, examples: [{ priceMinor: '150' }] },
);
export type CapabilityPatchBody = Static<typeof CapabilityPatchBody>;

/** What a client sends to publish: the body without the ignored tenant ids, with a typed address. */
export type PublishCapabilityInput = Omit<PublishCapabilityBody, 'providerId' | 'workspaceId' | 'address' | 'metering'> & { address?: Static<typeof CapabilityAddressSchema>; metering?: Metering };
/** What a client sends to edit: address, endpoint, protocol and toolName cannot be edited. */
export type CapabilityPatch = Omit<CapabilityPatchBody, 'providerId' | 'workspaceId' | 'address' | 'endpoint' | 'protocol' | 'toolName' | 'metering'> & { metering?: Metering | null };

export const PublishedCapability = Closed({ capability: Capability, version: CapabilityVersion });
export type PublishedCapability = Static<typeof PublishedCapability>;

export const CapabilityEdit = Closed({
  capability: Capability,
  changed: Type.Array(Type.String()),
  version: Type.Optional(CapabilityVersion),
});
export type CapabilityEdit = Static<typeof CapabilityEdit>;

/** A seller as capability and discovery records show it. */
export const ProviderSummary = Closed({ id: Provider.properties.id, name: Type.String(), verified: Type.Boolean(), reputation: Type.Number() });
export type ProviderSummary = Static<typeof ProviderSummary>;

export const CapabilityDetail = Closed({
  capability: Capability,
  provider: ProviderSummary,
  discoverable: Type.Boolean(),
  version: Type.Optional(CapabilityVersion),
}, { description: 'the version only if discoverable, or for its seller and the operator' });
export type CapabilityDetail = Static<typeof CapabilityDetail>;

export const DiscoverySearchBody = Type.Object(
  {
    query: Type.Optional(MultilineString({ maxLength: 1000, description: 'natural language' })),
    category: Type.Optional(Type.String({ maxLength: 100, description: 'exact match' })),
    protocol: Type.Optional(CapabilityProtocol),
    maxPriceMinor: Type.Optional(Amount({ description: 'at most this price, integer minor units as a string' })),
    maxLatencyMs: Type.Optional(Type.Number({ minimum: 0, description: 'ceiling on advertised median latency' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `default 20; more than ${MAX_DISCOVERY_LIMIT} is treated as ${MAX_DISCOVERY_LIMIT}` })),
    ...IgnoredTenantIds,
  },
  { additionalProperties: false },
);
export type DiscoveryFilters = Omit<Static<typeof DiscoverySearchBody>, 'providerId' | 'workspaceId'>;

export const ScoreBreakdown = Closed({ relevance: Type.Number(), price: Type.Number(), latency: Type.Number(), reputation: Type.Number(), verification: Type.Number() });
export type ScoreBreakdown = Static<typeof ScoreBreakdown>;

const { providerId: _p, createdAt: _c, updatedAt: _u, ...listing } = Capability.properties;
export const DiscoveryResult = Closed({
  capability: Closed(listing, { description: 'the capability without its seller id and times' }),
  version: Closed({ endpoint: CapabilityVersion.properties.endpoint, address: CapabilityVersion.properties.address, version: CapabilityVersion.properties.version }),
  provider: ProviderSummary,
  score: Type.Number(),
  scoreBreakdown: ScoreBreakdown,
});
export type DiscoveryResult = Static<typeof DiscoveryResult>;

export const DiscoveryPage = Closed({ results: Type.Array(DiscoveryResult), nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { description: 'one page of results' });
export type DiscoveryPage = Static<typeof DiscoveryPage>;

/** GET /v1/x402/discovery/resources: the x402 Bazaar list's query. */
export const BazaarQuery = Type.Object({
  type: Type.Optional(StringEnum(['http', 'mcp'] as const, { description: 'http: REST capabilities; mcp: tools' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 20' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'default 0; the list reaches the first 1000 listings of the ranking' })),
  scheme: Type.Optional(Type.String({ maxLength: 100, description: 'only agentpay is listed; any other gives an empty list' })),
  network: Type.Optional(Type.String({ maxLength: 100, description: 'agentpay:sandbox or agentpay:live (this gateway\'s), or agentpay:*; any other gives an empty list' })),
  payTo: Type.Optional(Type.String({ maxLength: 100, description: "a seller's settlement wallet id: only its listings of the page" })),
  extensions: Type.Optional(Type.String({ maxLength: 200, description: 'accepted and ignored' })),
}, { additionalProperties: false });
export type BazaarQuery = Static<typeof BazaarQuery>;

// ---- providers (docs/api/market.md § Providers) ----

export const ProviderParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'prv_…' }) });
export type ProviderParams = Static<typeof ProviderParams>;

export const ProviderListQuery = Type.Object({
  verification: Type.Optional(StringEnum(['requested', 'approved', 'denied'] as const, { description: 'operator only: latest request status' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type ProviderListQuery = Static<typeof ProviderListQuery>;

export const VerificationRequestBody = Type.Object({
  note: Type.Optional(MultilineString({ maxLength: 2000 })),
  contact: Type.Optional(Type.String({ maxLength: 500 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type VerificationRequestInput = Omit<Static<typeof VerificationRequestBody>, keyof typeof IgnoredTenantIds>;

/** The operator's decision on a provider's verification (DESIGN: operator decisions). */
export const ProviderDecisionBody = Type.Object({
  decision: StringEnum(['approved', 'denied'] as const),
  reason: Type.Optional(MultilineString({ maxLength: 2000 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type ProviderDecisionInput = Omit<Static<typeof ProviderDecisionBody>, keyof typeof IgnoredTenantIds>;
