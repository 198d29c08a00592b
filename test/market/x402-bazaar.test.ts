/**
 * The market as an x402 Bazaar resource list (issue 18 part 5): GET /v1/x402/discovery/resources
 * on a real gateway answers the listings discovery search ranks, each with an agentpay accept
 * that the published @x402/core accepts as PaymentRequirements v2 and ResourceInfo.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentRequirementsV2Schema, ResourceInfoSchema } from '@x402/core/schemas';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { BazaarResourceList } from '../../packages/sdk/src/contract/bazaar.js';

let t: TestGateway;
let seller: Awaited<ReturnType<TestGateway['newProvider']>>;
let restId: string;
let mcpId: string;

beforeAll(async () => {
  t = await startTestGateway();
  seller = await t.newProvider({ name: 'Bazaar Weather Ltd — a long seller name past 32 chars' });
  restId = (await seller.client.capabilities.publish({
    name: 'Bazaar forecast', description: 'weather forecast for the bazaar', protocol: 'rest', priceMinor: '125', category: 'weather',
    tags: ['weather', 'forecast', 'a', 'b', 'c', 'd'], endpoint: 'https://127.0.0.1/forecast',
  })).capability.id;
  mcpId = (await seller.client.capabilities.publish({
    name: 'Bazaar tool', description: 'an MCP tool', protocol: 'mcp', priceMinor: '7', category: 'tools', toolName: 'lookup',
    schema: { type: 'object', properties: { q: { type: 'string' } } }, endpoint: 'https://127.0.0.1/mcp',
  })).capability.id;
});
afterAll(async () => {
  await t?.close();
});

const list = (query = '') => t.workspace.http.request<BazaarResourceList>('GET', `/v1/x402/discovery/resources${query}`);

describe('GET /v1/x402/discovery/resources', () => {
  it('lists the market as x402 resources with an agentpay accept at the listing price, paid to the seller', async () => {
    const body = await list('?limit=100');
    expect(body.x402Version).toBe(2);
    const rest = body.items.find((i) => i.metadata.capabilityId === restId)!;
    expect(rest).toMatchObject({
      resource: 'https://127.0.0.1/forecast', type: 'http', x402Version: 2, description: 'weather forecast for the bazaar',
      accepts: [{ scheme: 'agentpay', network: 'agentpay:sandbox', amount: '125', asset: 'USD', payTo: seller.walletId, maxTimeoutSeconds: 300, extra: { capabilityId: restId, providerId: seller.id } }],
      metadata: { capabilityId: restId, providerId: seller.id, protocol: 'rest', category: 'weather' },
    });
    expect(rest.tags).toHaveLength(5);
    expect(rest.serviceName.length).toBeLessThanOrEqual(32);
    expect(Number.isNaN(Date.parse(rest.lastUpdated))).toBe(false);
    // what x402 clients parse
    expect(PaymentRequirementsV2Schema.safeParse(rest.accepts[0]).success).toBe(true);
    expect(ResourceInfoSchema.safeParse({ url: rest.resource, description: rest.description, mimeType: rest.mimeType, serviceName: rest.serviceName, tags: rest.tags }).success).toBe(true);

    const tool = body.items.find((i) => i.metadata.capabilityId === mcpId)!;
    expect(tool).toMatchObject({ type: 'mcp', extensions: { bazaar: { info: { input: { type: 'mcp', tool: 'lookup', inputSchema: { type: 'object' } } } } } });
    expect(body.pagination).toEqual({ limit: 100, offset: 0, total: body.items.length });
  });

  it('filters by type, scheme and network, and pages by offset in the order of discovery search', async () => {
    expect((await list('?type=mcp')).items.map((i) => i.type)).toEqual(expect.arrayContaining(['mcp']));
    expect((await list('?type=mcp')).items.every((i) => i.type === 'mcp')).toBe(true);
    expect((await list('?type=http')).items.every((i) => i.type === 'http')).toBe(true);
    expect((await list('?scheme=exact')).items).toEqual([]);
    expect((await list('?network=eip155:8453')).items).toEqual([]);
    expect((await list('?network=agentpay:sandbox')).items.length).toBeGreaterThan(0);
    const searched = (await t.workspace.discovery.search({ limit: 100 })).map((r) => r.capability.id);
    const all = (await list('?limit=100')).items.map((i) => i.metadata.capabilityId);
    expect(all).toEqual(searched);
    const second = await list('?limit=1&offset=1');
    expect(second.items.map((i) => i.metadata.capabilityId)).toEqual([searched[1]]);
    expect(second.pagination).toEqual({ limit: 1, offset: 1, total: searched.length });
    expect((await list(`?payTo=${seller.walletId}&limit=100`)).items.map((i) => i.metadata.providerId)).toEqual([seller.id, seller.id]);
  });

  it('takes a key with discovery:read, as discovery search does, and refuses unknown parameters', async () => {
    await expect(t.client().http.request('GET', '/v1/x402/discovery/resources')).rejects.toMatchObject({ status: 401 });
    await expect(list('?limit=0')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    await expect(list('?bogus=1')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });
});
