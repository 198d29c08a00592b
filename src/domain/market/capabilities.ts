/**
 * Capabilities: what sellers publish and buyers discover and pay for.
 *
 * - Publishing creates the capability (`active`), its first version and its search entry in one
 *   transaction. Only provider keys publish; an unverified seller may publish, but its
 *   capabilities stay out of discovery until it is verified and active.
 * - Price and wording are edited in place (a price edit applies from the next quote); a schema
 *   edit publishes a new version, because the version hash covers the schema. Address,
 *   protocol and tool name never change for one capability id.
 * - Any key with capabilities:read resolves any capability id (deprecated ones too), but sees
 *   the address only while discovery would show it, or as its seller or the operator.
 * - Editing or deprecating another seller's capability is 403 FORBIDDEN: capability ids are
 *   public, so refusing does not disclose anything.
 */
import { createHash } from 'node:crypto';
import { AppError, forbidden, notFound, validationError, wrongKeyKind } from '../../core/errors.js';
import { AddressError, canonicalize, CanonicalJsonError, checkAddressUrl, checkCapabilityAddress, MAX_LATENCY_MS, type CapabilityPatchBody, type Capability as CapabilityView, type CapabilityVersion as VersionView, type PublishCapabilityBody } from 'agentpay-sdk/contract';
import { parseMinor } from '../../core/money.js';
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { Capability, CapabilityVersion } from '../../store/repos/market.js';
import type { CapabilityAddress } from '../../store/tables/market.js';
import type { Tenant } from '../../store/repos/tenancy.js';
import type { DomainContext } from '../platform/context.js';
import type { Principal } from '../tenancy/api-keys.js';
import { reputations } from './reputation.js';
import { providerSummary } from './providers.js';
import { checkPriceIsMaximum, maximumOf, parseMetering } from './metering.js';

export type { CapabilityAddress };
export type Protocol = Capability['protocol'];

export const CAPABILITY_CURRENCIES = ['USD'] as const;
/** MCP tool names. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const IMMUTABLE_FIELDS = ['address', 'endpoint', 'protocol', 'toolName'] as const;
/** The largest advertised median latency: an hour (the wire's limit). */
export { MAX_LATENCY_MS };

const EDITABLE_FIELDS = ['name', 'description', 'category', 'tags', 'priceMinor', 'currency', 'metering', 'schema', 'latencyP50Ms', 'version'] as const;
const MAX_SCHEMA_BYTES = 64 * 1024;

/** What publish takes: the contract's request body (agentpay-sdk/contract); the domain checks the address and price itself. */
export type PublishInput = PublishCapabilityBody;
/** A patch: only what changes. The immutable fields are in the body so that they can be refused by name. */
export type CapabilityPatch = CapabilityPatchBody;

export function capabilityView(c: Capability): CapabilityView {
  return {
    id: c.id,
    providerId: c.providerId,
    name: c.name,
    description: c.description,
    protocol: c.protocol,
    priceMinor: c.priceMinor.toString(),
    currency: c.currency,
    category: c.category,
    tags: c.tags,
    schema: c.schema,
    latencyP50Ms: c.latencyP50Ms,
    ...(c.protocol === 'mcp' && c.toolName !== null ? { toolName: c.toolName } : {}),
    ...(c.metering ? { metering: c.metering } : {}),
    status: c.status,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}

export function versionView(v: CapabilityVersion): VersionView {
  return { id: v.id, endpoint: v.endpoint, address: v.address, version: v.version, hash: v.hash };
}

/** A capability and a version as answered: the contract's resources. */
export type { CapabilityView, VersionView };

/** `sha256:` + hex SHA-256 of the canonical JSON of {address, schema}: a schema edit changes it. */
export function versionHash(address: CapabilityAddress, schema: Record<string, unknown> | null): string {
  let text: string;
  try {
    text = canonicalize({ address, schema });
  } catch (e) {
    if (e instanceof CanonicalJsonError) throw validationError('schema', `cannot be hashed: ${e.message}`);
    throw e;
  }
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** What discovery shows: an active capability of a verified, unsuspended seller. */
export function isDiscoverable(c: Capability, provider: Tenant | undefined): boolean {
  return c.status === 'active' && provider?.kind === 'provider' && provider.verified && provider.status === 'active';
}

// ---- validation of what a seller sends -------------------------------------------------

function text(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string') throw validationError(field, 'must be a string');
  const s = value.trim();
  if (!s) throw validationError(field, 'must not be empty');
  if (s.length > max) throw validationError(field, `must be at most ${max} characters`);
  return s;
}

function tagsOf(value: unknown): string[] {
  if (!Array.isArray(value)) throw validationError('tags', 'must be an array of strings');
  const out: string[] = [];
  for (const [i, t] of value.entries()) {
    const tag = text(t, `tags[${i}]`, 50);
    if (!out.includes(tag)) out.push(tag);
  }
  if (out.length > 32) throw validationError('tags', 'must hold at most 32 tags');
  return out;
}

/** The spec's `number`: fractions allowed (12.5 ms), at most an hour. */
function latencyOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_LATENCY_MS) {
    throw validationError('latencyP50Ms', `must be a number of milliseconds from 0 to ${MAX_LATENCY_MS}`);
  }
  return value;
}

function schemaOf(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError('schema', 'must be a JSON Schema object (of the request body or the tool arguments)');
  }
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > MAX_SCHEMA_BYTES) throw validationError('schema', `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON`);
  return value as Record<string, unknown>;
}

function currencyOf(value: unknown): string {
  if (value === undefined) return 'USD';
  if (!(CAPABILITY_CURRENCIES as readonly unknown[]).includes(value)) throw validationError('currency', 'must be "USD"');
  return value as string;
}

function versionLabel(value: unknown): string {
  return text(value, 'version', 64);
}

/** A capability address checked by the contract's rules; a refusal names the field. */
export function parseAddress(input: { endpoint?: unknown; address?: unknown }): CapabilityAddress {
  return asValidation(() => checkCapabilityAddress(input));
}

/** An endpoint URL checked by the contract's rules (https, or http on loopback; no credentials). */
export function checkEndpointUrl(value: unknown, field: string): string {
  return asValidation(() => checkAddressUrl(value, field));
}

function asValidation<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof AddressError) throw validationError(e.field, e.reason);
    throw e;
  }
}

const endpointOf = (a: CapabilityAddress) => (a.kind === 'url' ? a.url : null);

function searchDoc(c: Capability) {
  return { capabilityId: c.id, name: c.name, description: c.description, tags: c.tags, category: c.category };
}

// ---- the service ----------------------------------------------------------------------

export class CapabilityService {
  constructor(private ctx: DomainContext) {}

  private requireProvider(p: Principal, what: string): void {
    if (p.tenantKind !== 'provider') throw wrongKeyKind(['provider'], `only a provider key can ${what}; this is a ${p.tenantKind} key`);
  }

  /** The capability, if the caller is its seller: 404 for an unknown id, 403 for another seller's. */
  private async owned(r: Repos, p: Principal, id: string): Promise<Capability> {
    const c = await r.capabilities.get(id);
    if (!c) throw notFound('CAPABILITY_NOT_FOUND', 'capability', id);
    if (c.providerId !== p.tenantId) throw forbidden(`capability ${id} belongs to another provider; only its seller can change it`, { id });
    return c;
  }

  async publish(p: Principal, input: PublishInput): Promise<{ capability: Capability; version: CapabilityVersion }> {
    this.requireProvider(p, 'publish capabilities');
    if (input.protocol !== 'rest' && input.protocol !== 'mcp') throw validationError('protocol', 'must be "rest" or "mcp"');
    let toolName: string | null = null;
    if (input.protocol === 'mcp') {
      if (input.toolName === undefined) throw validationError('toolName', 'is required for protocol "mcp": the name of the MCP tool buyers call');
      if (typeof input.toolName !== 'string' || !TOOL_NAME.test(input.toolName)) {
        throw validationError('toolName', 'must be 1 to 128 letters, digits, "_", "-" or "."');
      }
      toolName = input.toolName;
    } else if (input.toolName !== undefined) {
      throw validationError('toolName', 'is refused for protocol "rest"; only MCP capabilities name a tool');
    }
    const address = parseAddress(input);
    if (address.kind === 'package' && input.protocol !== 'mcp') {
      // nothing answers HTTP there: the buyer launches the package and talks MCP to it over stdio
      throw validationError('protocol', 'is "rest", but a package address is an MCP server the buyer runs itself (over stdio); publish it with protocol "mcp" and the toolName it sells, or give a REST capability a URL endpoint', { addressKind: 'package' });
    }
    const schema = input.schema === undefined ? null : schemaOf(input.schema);
    const priceMinor = parseMinor(input.priceMinor, 'priceMinor');
    const metering = input.metering === undefined ? null : parseMetering(input.metering);
    if (metering) checkPriceIsMaximum(priceMinor, metering);
    const now = this.ctx.clock.now();
    const id = this.ctx.ids.next('capability');
    const version: CapabilityVersion = {
      id: this.ctx.ids.next('capabilityVersion'),
      capabilityId: id,
      version: input.version === undefined ? '1' : versionLabel(input.version),
      endpoint: endpointOf(address),
      address,
      schema,
      hash: versionHash(address, schema),
      createdAt: now,
    };
    const capability: Capability = {
      id,
      providerId: p.tenantId,
      name: text(input.name, 'name', 200),
      description: text(input.description, 'description', 5000),
      protocol: input.protocol,
      priceMinor,
      currency: currencyOf(input.currency),
      category: text(input.category, 'category', 100),
      tags: input.tags === undefined ? [] : tagsOf(input.tags),
      schema,
      latencyP50Ms: input.latencyP50Ms === undefined ? null : latencyOf(input.latencyP50Ms),
      toolName,
      metering,
      status: 'active',
      currentVersionId: version.id,
      createdAt: now,
      updatedAt: now,
      deprecatedAt: null,
    };
    await this.ctx.store.tx(async (r) => {
      await r.capabilities.insert(capability);
      await r.capabilityVersions.insert(version);
      await r.capabilitySearch.upsert(searchDoc(capability));
    });
    return { capability, version };
  }

  /** The caller's own capabilities, deprecated ones included, each with its current version. */
  async listOwn(p: Principal): Promise<{ capability: Capability; version: CapabilityVersion }[]> {
    this.requireProvider(p, 'list its capabilities (buyers search with POST /v1/discovery/search)');
    return this.ctx.store.read(async (r) => {
      const caps = await r.capabilities.listByProvider(p.tenantId);
      const versions = new Map((await r.capabilityVersions.getMany(caps.map((c) => c.currentVersionId))).map((v) => [v.id, v]));
      return caps.map((capability) => ({ capability, version: versions.get(capability.currentVersionId)! }));
    });
  }

  async get(p: Principal, id: string) {
    return this.ctx.store.read(async (r) => {
      const capability = await r.capabilities.get(id);
      if (!capability) throw notFound('CAPABILITY_NOT_FOUND', 'capability', id);
      const seller = await r.tenants.get(capability.providerId);
      if (!seller) throw notFound('PROVIDER_NOT_FOUND', 'provider', capability.providerId);
      const discoverable = isDiscoverable(capability, seller);
      const reputation = (await reputations(r, [seller.id])).get(seller.id)!;
      const showAddress = discoverable || p.tenantId === seller.id || p.tenantKind === 'operator';
      const version = showAddress ? await r.capabilityVersions.get(capability.currentVersionId) : undefined;
      return { capability, provider: providerSummary(seller, reputation), discoverable, ...(version ? { version } : {}) };
    });
  }

  async edit(p: Principal, id: string, patch: CapabilityPatch): Promise<{ capability: Capability; changed: string[]; version?: CapabilityVersion }> {
    this.requireProvider(p, 'edit capabilities');
    for (const field of IMMUTABLE_FIELDS) {
      if (patch[field] !== undefined) throw validationError(field, 'cannot be edited; publish a new capability and deprecate this one');
    }
    if (!EDITABLE_FIELDS.some((f) => patch[f] !== undefined)) {
      throw validationError('body', `send at least one field to change: ${EDITABLE_FIELDS.join(', ')}`);
    }
    if (patch.version !== undefined && patch.schema === undefined) {
      throw validationError('version', 'labels the new version a schema edit publishes; send it together with schema');
    }
    // everything that can be checked without the record, before the transaction
    const next: Partial<Capability> = {};
    if (patch.name !== undefined) next.name = text(patch.name, 'name', 200);
    if (patch.description !== undefined) next.description = text(patch.description, 'description', 5000);
    if (patch.category !== undefined) next.category = text(patch.category, 'category', 100);
    if (patch.tags !== undefined) next.tags = tagsOf(patch.tags);
    if (patch.priceMinor !== undefined) next.priceMinor = parseMinor(patch.priceMinor, 'priceMinor');
    if (patch.currency !== undefined) next.currency = currencyOf(patch.currency);
    if (patch.latencyP50Ms !== undefined) next.latencyP50Ms = patch.latencyP50Ms === null ? null : latencyOf(patch.latencyP50Ms);
    if (patch.metering !== undefined) next.metering = patch.metering === null ? null : parseMetering(patch.metering);
    // a new metered price brings its maximum as the price, unless the price is sent too (then it must agree)
    if (next.metering && next.priceMinor === undefined) next.priceMinor = maximumOf(next.metering);
    const schema = patch.schema === undefined ? undefined : schemaOf(patch.schema);
    const label = patch.version === undefined ? undefined : versionLabel(patch.version);

    return this.ctx.store.tx(async (r) => {
      const c = await this.owned(r, p, id);
      if (c.status !== 'active') throw new AppError('CONFLICT', `capability ${id} is ${c.status}; a capability that is not active refuses edits`, { id, status: c.status });
      // a metered capability's price stays its maximum: a price edit alone must agree with the metering kept
      const metering = next.metering === undefined ? c.metering : next.metering;
      if (metering && next.priceMinor !== undefined) checkPriceIsMaximum(next.priceMinor, metering, patch.priceMinor === undefined ? 'metering' : 'priceMinor');
      const same = (a: unknown, b: unknown) => canonicalize(a) === canonicalize(b);
      const changed = (Object.keys(next) as (keyof Capability)[]).filter((k) =>
        k === 'priceMinor' ? next.priceMinor !== c.priceMinor : !same(next[k] ?? null, c[k] ?? null),
      );
      const update: Partial<Capability> = Object.fromEntries(changed.map((k) => [k, next[k]]));
      let version: CapabilityVersion | undefined;
      if (schema !== undefined && !same(schema, c.schema)) {
        const current = await r.capabilityVersions.get(c.currentVersionId);
        const versions = await r.capabilityVersions.listByCapability(c.id);
        const used = new Set(versions.map((v) => v.version));
        if (label !== undefined && used.has(label)) throw validationError('version', `${JSON.stringify(label)} is already a version of this capability; choose a new label`);
        let n = versions.length + 1;
        while (used.has(String(n))) n += 1;
        const address = current!.address;
        version = {
          id: this.ctx.ids.next('capabilityVersion'),
          capabilityId: c.id,
          version: label ?? String(n),
          endpoint: endpointOf(address),
          address,
          schema,
          hash: versionHash(address, schema),
          createdAt: this.ctx.clock.now(),
        };
        await r.capabilityVersions.insert(version);
        update.schema = schema;
        update.currentVersionId = version.id;
        changed.push('schema');
      } else if (label !== undefined) {
        throw validationError('version', 'labels a new version, but the schema sent is the current one; nothing to publish');
      }
      if (changed.length === 0) return { capability: c, changed };
      update.updatedAt = this.ctx.clock.now();
      await r.capabilities.update(c.id, update);
      const capability = { ...c, ...update };
      if (changed.some((k) => k === 'name' || k === 'description' || k === 'category' || k === 'tags')) {
        await r.capabilitySearch.upsert(searchDoc(capability));
      }
      return { capability, changed, ...(version ? { version } : {}) };
    });
  }

  /** Leaves discovery at once; the id keeps resolving. Deprecating again changes nothing. */
  async deprecate(p: Principal, id: string): Promise<Capability> {
    this.requireProvider(p, 'deprecate capabilities');
    return this.ctx.store.tx(async (r) => {
      const c = await this.owned(r, p, id);
      if (c.status === 'deprecated') return c;
      const now = this.ctx.clock.now();
      const update = { status: 'deprecated' as const, deprecatedAt: now, updatedAt: now };
      await r.capabilities.update(c.id, update);
      await r.capabilitySearch.remove(c.id);
      return { ...c, ...update };
    });
  }
}
