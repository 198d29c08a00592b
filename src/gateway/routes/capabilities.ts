/**
 * Capabilities: sellers publish, list, edit and deprecate; anyone with capabilities:read
 * resolves one by id. Semantics (address rules, versions, visibility) live in
 * src/domain/market/capabilities.ts; docs/api/market.md describes the wire.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { capabilityView, versionView } from '../../domain/market/capabilities.js';
import { Capability, CapabilityDetail, CapabilityEdit, CapabilityPatchBody, CapabilityVersion, PublishCapabilityBody, PublishedCapability } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

const C = ['CAPABILITY_NOT_FOUND', 'CONFLICT'] as const;

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type Params = Static<typeof Params>;

export default async function capabilityRoutes(app: FastifyInstance) {
  const { capabilities } = app.services;

  app.post<{ Body: Static<typeof PublishCapabilityBody> }>(
    '/v1/capabilities',
    { config: { scope: 'capabilities:write', errors: ['CONFLICT'] }, schema: { summary: 'Publish a capability (a seller)', body: PublishCapabilityBody, response: { 200: PublishedCapability } } },
    async (request) => {
      const { capability, version } = await capabilities.publish(principal(request), request.body);
      return { capability: capabilityView(capability), version: versionView(version) };
    },
  );

  app.get('/v1/capabilities', { config: { scope: 'capabilities:read' }, schema: { summary: "The seller's own capabilities", response: { 200: Closed({ capabilities: Type.Array(PublishedCapability) }) } } }, async (request) => ({
    capabilities: (await capabilities.listOwn(principal(request))).map(({ capability, version }) => ({
      capability: capabilityView(capability),
      version: versionView(version),
    })),
  }));

  app.get<{ Params: Params }>('/v1/capabilities/:id', { config: { scope: 'capabilities:read', errors: C }, schema: { summary: 'A capability, its seller and current version', params: Params, response: { 200: CapabilityDetail } } }, async (request) => {
    const d = await capabilities.get(principal(request), request.params.id);
    return {
      capability: capabilityView(d.capability),
      provider: d.provider,
      discoverable: d.discoverable,
      ...(d.version ? { version: versionView(d.version) } : {}),
    };
  });

  app.post<{ Params: Params; Body: Static<typeof CapabilityPatchBody> }>(
    '/v1/capabilities/:id',
    { config: { scope: 'capabilities:write', errors: C }, schema: { summary: 'Edit a capability (a new version when its address or schema changes)', params: Params, body: CapabilityPatchBody, response: { 200: CapabilityEdit } } },
    async (request) => {
      const { capability, changed, version } = await capabilities.edit(principal(request), request.params.id, request.body);
      return { capability: capabilityView(capability), changed, ...(version ? { version: versionView(version) } : {}) };
    },
  );

  app.post<{ Params: Params }>(
    '/v1/capabilities/:id/deprecate',
    { config: { scope: 'capabilities:write', errors: C }, schema: { summary: 'Deprecate a capability', params: Params, response: { 200: Closed({ capability: Capability }) } } },
    async (request) => ({ capability: capabilityView(await capabilities.deprecate(principal(request), request.params.id)) }),
  );
}
