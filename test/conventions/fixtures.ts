/**
 * One fixture per tenant-owned resource, keyed by the route prefix its records live
 * under. A route with a path param is matched to the longest prefix that contains it;
 * the tenancy matrix fails, naming the route, when a scoped route with a path param has
 * no fixture here. Adding a resource = adding one entry.
 */
import { issueKey } from '../../src/domain/tenancy/api-keys.js';
import { DEFAULT_SCOPES } from '../../src/domain/tenancy/scopes.js';
import { recordEvent } from '../../src/domain/platform/events.js';
import type { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import type { TestGateway } from '../helpers/gateway.js';
import { authorizeCall, createCapability, newBuyer, purchaseReceipt } from '../payments/helpers.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { heldApproval } from '../policies/helpers.js';
import {
  bodyFor, devKey, devTenant, fillPath, hasBody, needsKey, pathParams, tenantKindFor, type RouteEntry, type TenantKind,
} from '../helpers/matrix.js';

export interface TenantHandle {
  id: string;
  kind: 'workspace' | 'provider';
  apiKey: string;
  client: AgentpayClient;
}

export interface ResourceFixture {
  /** the tenant kind whose records these are */
  owner: 'workspace' | 'provider';
  /**
   * Creates a record owned by `owner` (a full-scope key of that tenant) and returns a
   * value for every path param of every route under the prefix.
   */
  create(t: TestGateway, owner: TenantHandle): Promise<Record<string, string>>;
  /** the param that holds the owned record's id (default `id`) */
  recordParam?: string;
  /**
   * Routes (`METHOD /v1/...`) that other tenants may use on the record by design: read a
   * published capability, list verified sellers, rate a seller. Called with a minimal
   * body they must still change nothing.
   */
  sharedRoutes?: readonly string[];
}

export const RESOURCE_FIXTURES: Record<string, ResourceFixture> = {
  // receipts and transactions belong to the buyer's workspace (the seller sees them too)
  '/v1/receipts/:id': {
    owner: 'workspace',
    async create(t, owner) {
      return { id: (await purchaseReceipt(t, owner.client)).id };
    },
  },
  '/v1/transactions/:id': {
    owner: 'workspace',
    async create(t, owner) {
      return { id: (await purchaseReceipt(t, owner.client)).transactionId };
    },
  },
  '/v1/capabilities/:id': {
    owner: 'provider',
    async create(_t, owner) {
      const res = await owner.client.http.request<{ capability: { id: string } }>('POST', '/v1/capabilities', {
        body: { name: 'Matrix capability', description: 'a capability of the tenancy matrix', protocol: 'rest', priceMinor: '100', category: 'matrix', endpoint: 'https://example.com/matrix' },
      });
      return { id: res.capability.id };
    },
    // the market: every listing is shown to every key with discovery:read (discovery search is a POST)
    sharedRoutes: ['GET /v1/capabilities/:id', 'GET /v1/x402/discovery/resources'],
  },
  '/v1/providers/:id': {
    owner: 'provider',
    async create(_t, owner) {
      return { id: owner.id };
    },
    sharedRoutes: ['GET /v1/providers', 'GET /v1/providers/:id', 'POST /v1/providers/:id/rate', 'GET /v1/x402/discovery/resources'],
  },
  '/v1/auth/keys/:id': {
    owner: 'workspace',
    async create(t, owner) {
      // minted through the domain, so the fixture does not depend on the key routes' body shapes
      const ctx = t.gw.services.ctx;
      const issued = await t.gw.store.tx((r) => issueKey(r, ctx, { id: owner.id, kind: owner.kind }, { name: 'matrix fixture' }));
      return { id: issued.record.id };
    },
  },
  '/v1/policies/:id': {
    owner: 'workspace',
    async create(_t, owner) {
      const { policies } = await owner.client.policies.apply('deny "matrix":\n  category == "matrix-never"\n');
      return { id: policies[0]!.id };
    },
  },
  // a pending approval: a real purchase held by an "approval: always" policy
  '/v1/approvals/:id': {
    owner: 'workspace',
    async create(t, owner) {
      return { id: await heldApproval(t, owner) };
    },
  },
  // rails: a provider's payout (on a bank rail, so it stays submitted for a day), a workspace's top-up intent
  '/v1/payouts/:id': {
    owner: 'provider',
    async create(_t, owner) {
      return { id: await submittedPayout(owner) };
    },
  },
  '/v1/sandbox/payouts/:id': {
    owner: 'provider',
    async create(_t, owner) {
      return { id: await submittedPayout(owner) };
    },
  },
  // an authorized paid call of the provider's, which the sandbox may expire now
  '/v1/sandbox/transactions/:id': {
    owner: 'provider',
    async create(t, owner) {
      const capabilityId = await createCapability(t, owner.id, { priceMinor: '10' });
      const ws = await t.newWorkspace('Expiring Buyer');
      const buyer = await newBuyer(t, ws.client, '10');
      return { id: (await authorizeCall(owner.client, capabilityId, buyer)).transactionId };
    },
  },
  '/v1/sandbox/topups/:id': {
    owner: 'workspace',
    async create(t, owner) {
      const { walletId } = await t.newAgentWallet(owner.client, 'matrix-topup');
      return { id: (await owner.client.rail.topUp(walletId, { amountMinor: '500' })).transactionId };
    },
  },
  // a webhook endpoint with one delivery queued (an event recorded through the domain)
  '/v1/webhook-endpoints/:id': {
    owner: 'workspace',
    async create(t, owner) {
      const { endpoint } = await owner.client.webhooks.create({ url: 'http://127.0.0.1:9/matrix' });
      const ctx = t.gw.services.ctx;
      await t.gw.store.tx((r) => recordEvent(r, ctx, owner.id, 'payout.returned', { matrix: true }));
      const { deliveries } = await owner.client.webhooks.deliveries(endpoint.id);
      return { id: endpoint.id, deliveryId: deliveries[0]!.id };
    },
  },
  // a payment session of the provider's (the seller), opened from a buyer wallet of the dev workspace
  '/v1/sessions/:id': {
    owner: 'provider',
    async create(t, owner) {
      return { id: await openedSession(t, owner) };
    },
  },
  // the buyer's side of a session: the workspace whose wallet pays it ends it (the dev provider sells)
  '/v1/sessions/:id/end': {
    owner: 'workspace',
    async create(t, owner) {
      return { id: await openedSession(t, { id: t.creds.provider.id, kind: 'provider', apiKey: t.creds.provider.apiKey, client: t.provider }, owner.client) };
    },
  },
  '/v1/sandbox/sessions/:id': {
    owner: 'provider',
    async create(t, owner) {
      return { id: await openedSession(t, owner) };
    },
  },
  '/v1/wallets/:id': {
    owner: 'workspace',
    async create(t, owner) {
      const { walletId } = await t.newAgentWallet(owner.client, 'matrix-agent');
      // money on it, so that a leaked balance or ledger would show
      await owner.client.wallets.fund(walletId, '500');
      return { id: walletId, providerId: t.creds.provider.id };
    },
  },
};

/** An open payment session of the provider's (cap 100) from a fresh buyer wallet of the workspace (the dev workspace by default). */
async function openedSession(t: TestGateway, owner: TenantHandle, workspace: AgentpayClient = t.workspace): Promise<string> {
  const capabilityId = await createCapability(t, owner.id, { priceMinor: '10' });
  const buyer = await newBuyer(t, workspace, '100');
  const unsigned = {
    version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: owner.id, capabilityId, capMinor: '100', currency: 'USD',
    expiresAt: new Date(t.clock.now() + 3_600_000).toISOString(), sessionPublicKey: generateEd25519().publicKeyPem,
    nonce: `matrix-${Math.random().toString(36).slice(2)}-${t.clock.now()}`, signedAt: new Date(t.clock.now()).toISOString(),
  };
  const open = { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) };
  return (await owner.client.sessions.open({ open, sellerPublicKey: generateEd25519().publicKeyPem })).session.id;
}

/** A submitted bank payout of the provider's settlement wallet. */
async function submittedPayout(owner: TenantHandle): Promise<string> {
  const [wallet] = await owner.client.wallets.list();
  await owner.client.wallets.fund(wallet!.id, '500');
  await owner.client.payouts.setDestination(owner.id, { destination: 'ext_matrix_bank' });
  return (await owner.client.payouts.create({ walletId: wallet!.id, amountMinor: '100', rail: 'bank_transfer' })).id;
}

const startsWithSegments = (url: string, prefix: string) => url === prefix || url.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);

/** The fixture whose prefix is the longest one the route's URL starts with. */
export function fixtureFor(url: string): { prefix: string; fixture: ResourceFixture } | undefined {
  const prefix = Object.keys(RESOURCE_FIXTURES)
    .filter((p) => startsWithSegments(url, p))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? { prefix, fixture: RESOURCE_FIXTURES[prefix]! } : undefined;
}

/** Routes the tenancy matrix must cover: they need a key, take a path param, and are not operator-only. */
export function tenantScopedRoutes(routes: RouteEntry[]): RouteEntry[] {
  return routes.filter((r) => needsKey(r) && r.config.scope !== 'operator' && pathParams(r.url).length > 0);
}

/** A fresh tenant of a kind, with a full default-scope key. */
export async function newTenant(t: TestGateway, kind: 'workspace' | 'provider'): Promise<TenantHandle> {
  const x = kind === 'workspace' ? await t.newWorkspace('Matrix Workspace') : await t.newProvider({ name: 'Matrix Provider' });
  return { id: x.id, kind, apiKey: x.apiKey, client: x.client };
}

/** The dev bootstrap's workspace or provider as a handle. */
export function devHandle(t: TestGateway, kind: 'workspace' | 'provider'): TenantHandle {
  return { id: devTenant(t, kind).id, kind, apiKey: devKey(t, kind), client: kind === 'workspace' ? t.workspace : t.provider };
}

const recordFixture = (r: RouteEntry) => (pathParams(r.url).length > 0 ? fixtureFor(r.url) : undefined);

/**
 * The tenant kind that rightfully calls a route: none for public routes; the kind that owns
 * the route's records if it holds the scope; else the first kind whose default scopes hold
 * it (workspace, provider, operator); a workspace for routes that take any valid key.
 */
export function callerKind(r: RouteEntry): TenantKind | null {
  if (!needsKey(r)) return null;
  const scope = r.config.scope;
  const owner = recordFixture(r)?.fixture.owner;
  if (owner && (!scope || DEFAULT_SCOPES[owner].includes(scope))) return owner;
  return scope ? tenantKindFor(scope) : 'workspace';
}

/**
 * How a rightful caller reaches a route. The key is a full-scope key of the tenant kind that
 * holds the route's scope; when a fixture covers the route, a fresh tenant owns a fresh
 * record (so no call can disturb another test's tenants), the path points at it, and the
 * key is the owner's whenever the owner's kind holds the scope. Routes that take a body get
 * a minimal one with the fixture's values filled in. Public routes get no key.
 */
export async function rightfulCall(t: TestGateway, r: RouteEntry): Promise<{
  apiKey: string | null;
  tenant: { id: string; kind: TenantKind } | null;
  path: string;
  body?: Record<string, unknown>;
}> {
  const fx = recordFixture(r);
  const kind = callerKind(r);
  let tenant = kind ? devTenant(t, kind) : null;
  let apiKey = kind ? devKey(t, kind) : null;
  let params: Record<string, string> = {};
  if (fx) {
    const owner = await newTenant(t, fx.fixture.owner);
    params = await fx.fixture.create(t, owner);
    if (kind === owner.kind) {
      tenant = { id: owner.id, kind: owner.kind };
      apiKey = owner.apiKey;
    }
  }
  const path = fx ? fillPath(r.url, params) : fillPath(r.url, 'xyz_matrix');
  return { apiKey, tenant, path, ...(hasBody(r.method) ? { body: bodyFor(r, params) } : {}) };
}
