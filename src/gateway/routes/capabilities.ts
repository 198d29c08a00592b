/**
 * Capabilities: sellers publish, list, edit and deprecate; anyone with capabilities:read
 * resolves one by id. Semantics (address rules, versions, visibility) live in
 * src/domain/market/capabilities.ts; docs/api/market.md describes the wire.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Amount, IgnoredTenantIds, StringEnum } from '../schemas.js';
import { capabilityView, MAX_LATENCY_MS, versionView, type CapabilityPatch, type PublishInput } from '../../domain/market/capabilities.js';
import { Capability, CapabilityVersion, Provider } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const C = ['CAPABILITY_NOT_FOUND', 'CONFLICT'] as const;

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type Params = Static<typeof Params>;

const Tags = Type.Array(Type.String({ maxLength: 50 }), { maxItems: 32 });
const JsonSchemaObject = Type.Object({}, { additionalProperties: true, description: 'JSON Schema of the request body or tool arguments' });
const Latency = Type.Number({ minimum: 0, maximum: MAX_LATENCY_MS, description: 'advertised median latency in milliseconds (fractions allowed)' });
// address and endpoint are checked in the domain, whose messages name the exact field at fault
const Address = Type.Object({ kind: StringEnum(['url', 'package'] as const) }, { additionalProperties: true });

const PublishBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.String({ minLength: 1, maxLength: 5000 }),
    protocol: StringEnum(['rest', 'mcp'] as const),
    priceMinor: Amount(),
    category: Type.String({ minLength: 1, maxLength: 100 }),
    endpoint: Type.Optional(Type.String({ maxLength: 2048 })),
    address: Type.Optional(Address),
    toolName: Type.Optional(Type.String({ maxLength: 128 })),
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

const PatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 5000 })),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    tags: Type.Optional(Tags),
    priceMinor: Type.Optional(Amount()),
    currency: Type.Optional(StringEnum(['USD'] as const)),
    schema: Type.Optional(JsonSchemaObject),
    latencyP50Ms: Type.Optional(Type.Union([Latency, Type.Null()])),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'label of the version a schema edit publishes' })),
    // immutable: accepted by the schema only so that the refusal can say why
    address: Type.Optional(Type.Unknown()),
    endpoint: Type.Optional(Type.Unknown()),
    protocol: Type.Optional(Type.Unknown()),
    toolName: Type.Optional(Type.Unknown()),
    ...IgnoredTenantIds,
  },
  { additionalProperties: false, examples: [{ priceMinor: '150' }] },
);

export default async function capabilityRoutes(app: FastifyInstance) {
  const { capabilities } = app.services;

  app.post<{ Body: Static<typeof PublishBody> }>(
    '/v1/capabilities',
    { config: { scope: 'capabilities:write', errors: ['CONFLICT'] }, schema: { summary: 'Publish a capability (a seller)', body: PublishBody, response: { 200: Closed({ capability: Capability, version: CapabilityVersion }) } } },
    async (request) => {
      const { capability, version } = await capabilities.publish(principal(request), request.body as PublishInput);
      return { capability: capabilityView(capability), version: versionView(version) };
    },
  );

  app.get('/v1/capabilities', { config: { scope: 'capabilities:read' }, schema: { summary: "The seller's own capabilities", response: { 200: Closed({ capabilities: Type.Array(Closed({ capability: Capability, version: CapabilityVersion })) }) } } }, async (request) => ({
    capabilities: (await capabilities.listOwn(principal(request))).map(({ capability, version }) => ({
      capability: capabilityView(capability),
      version: versionView(version),
    })),
  }));

  app.get<{ Params: Params }>('/v1/capabilities/:id', { config: { scope: 'capabilities:read', errors: C }, schema: { summary: 'A capability, its seller and current version', params: Params, response: { 200: Closed({ capability: Capability, provider: Type.Union([Provider, Type.Object({}, { additionalProperties: true })]), discoverable: Type.Boolean(), version: Type.Optional(CapabilityVersion) }) } } }, async (request) => {
    const d = await capabilities.get(principal(request), request.params.id);
    return {
      capability: capabilityView(d.capability),
      provider: d.provider,
      discoverable: d.discoverable,
      ...(d.version ? { version: versionView(d.version) } : {}),
    };
  });

  app.post<{ Params: Params; Body: Static<typeof PatchBody> }>(
    '/v1/capabilities/:id',
    { config: { scope: 'capabilities:write', errors: C }, schema: { summary: 'Edit a capability (a new version when its address or schema changes)', params: Params, body: PatchBody, response: { 200: Closed({ capability: Capability, changed: Type.Array(Type.String()), version: Type.Optional(CapabilityVersion) }) } } },
    async (request) => {
      const { capability, changed, version } = await capabilities.edit(principal(request), request.params.id, request.body as CapabilityPatch);
      return { capability: capabilityView(capability), changed, ...(version ? { version: versionView(version) } : {}) };
    },
  );

  app.post<{ Params: Params }>(
    '/v1/capabilities/:id/deprecate',
    { config: { scope: 'capabilities:write', errors: C }, schema: { summary: 'Deprecate a capability', params: Params, response: { 200: Closed({ capability: Capability }) } } },
    async (request) => ({ capability: capabilityView(await capabilities.deprecate(principal(request), request.params.id)) }),
  );
}
