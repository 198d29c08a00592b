/**
 * The `agentpay publish` and `agentpay capabilities` commands' work: a publish input
 * built from a JSON file and/or flags (missing required values asked for on a
 * terminal), edit patches, and how a person sees capabilities. Prices stay strings of
 * integer minor units; "1.50" is refused, never rounded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseMinor } from '../core/money.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type {
  Capability,
  CapabilityAddress,
  CapabilityDetail,
  CapabilityEdit,
  CapabilityPatch,
  CapabilityProtocol,
  CapabilityVersion,
  PublishCapabilityInput,
  PublishedCapability,
} from 'agentpay-sdk/types';
import type { Metering } from 'agentpay-sdk/contract';
import { usageError } from './errors/index.js';
import { moneyText, renderFields, renderTable } from './output.js';
import { askChoice, askText, canPrompt } from './prompts.js';

export const PROTOCOLS = ['rest', 'mcp'] as const satisfies readonly CapabilityProtocol[];

/** A JSON file the person named with `flag`; errors say which file and what is wrong. */
export function readJsonFile(path: string, flag: string): unknown {
  const full = resolve(path);
  if (!existsSync(full)) throw usageError(`${flag}: ${full} does not exist`, undefined, { flag });
  try {
    return JSON.parse(readFileSync(full, 'utf8'));
  } catch (e) {
    throw usageError(`${flag}: ${full} is not valid JSON (${(e as Error).message})`, undefined, { flag });
  }
}

function readJsonObject(path: string, flag: string): Record<string, unknown> {
  const value = readJsonFile(path, flag);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw usageError(`${flag}: ${resolve(path)} must hold a JSON object`, undefined, { flag });
  return value as Record<string, unknown>;
}

/** A price as typed: integer minor units only ("150" is 1.50 USD). */
export function parsePrice(value: unknown, field = '--price'): string {
  return parseMinor(value, field).toString();
}

function priceValid(v: string): true | string {
  try {
    parsePrice(v);
    return true;
  } catch (e) {
    return (e as Error).message;
  }
}

/** "a, b,c" → ["a","b","c"]. */
export function parseTags(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

const notEmpty = (v: string) => (v.trim() ? true : 'required');

/** The metering flags as typed: --unit, --unit-price and --max-units, all three or none. */
export interface MeteringFlags {
  unit?: string | undefined;
  unitPrice?: string | undefined;
  maxUnits?: string | undefined;
}

/**
 * A metered price from its flags (docs/protocol.md § Metered prices), undefined when none is given;
 * counts and amounts stay strings (the gateway checks them and names the field at fault).
 */
export function meteringOf(o: MeteringFlags): Metering | undefined {
  const given = [o.unit, o.unitPrice, o.maxUnits].filter((v) => v !== undefined).length;
  if (given === 0) return undefined;
  if (given < 3) throw usageError('a metered price needs all three of --unit, --unit-price and --max-units', 'agentpay publish ... --unit token --unit-price 2 --max-units 5000', { flag: o.unit === undefined ? '--unit' : o.unitPrice === undefined ? '--unit-price' : '--max-units' });
  if (!/^(0|[1-9][0-9]*)$/.test(o.maxUnits!)) throw usageError(`--max-units: must be a whole number of units, e.g. 5000; got ${JSON.stringify(o.maxUnits)}`, undefined, { flag: '--max-units' });
  return { unit: o.unit!, unitPriceMinor: parsePrice(o.unitPrice, '--unit-price'), maxUnits: o.maxUnits! };
}

/** The most one call of a metered capability can cost: unitPriceMinor × maxUnits (its priceMinor). */
const maximumOf = (m: Metering) => (BigInt(m.unitPriceMinor) * BigInt(m.maxUnits)).toString();

export interface PublishOptions {
  /** a capability JSON file (fixtures/capabilities/*.json); flags override its fields */
  file?: string | undefined;
  name?: string | undefined;
  description?: string | undefined;
  protocol?: CapabilityProtocol | undefined;
  price?: string | undefined;
  category?: string | undefined;
  endpoint?: string | undefined;
  packageCommand?: string | undefined;
  /** the package's npx arguments, separated by spaces, e.g. "-y @acme/tool@1.2.3" */
  packageArgs?: string | undefined;
  packageVersion?: string | undefined;
  toolName?: string | undefined;
  tags?: string | undefined;
  schemaFile?: string | undefined;
  latencyP50Ms?: number | undefined;
  version?: string | undefined;
  /** a metered price: --unit, --unit-price, --max-units (the price is then their product unless --price is given) */
  metering?: MeteringFlags | undefined;
}

const usesPackage = (o: PublishOptions) => o.packageArgs !== undefined || o.packageVersion !== undefined || o.packageCommand !== undefined;

/** The address a publish uses: flags win over the file's `endpoint` or `address`. */
async function addressOf(o: PublishOptions, base: Partial<PublishCapabilityInput>): Promise<{ endpoint: string } | { address: CapabilityAddress }> {
  if (o.endpoint !== undefined && usesPackage(o)) {
    throw usageError('pass either --endpoint or the --package-* flags, not both', undefined, { flag: '--endpoint' });
  }
  if (o.endpoint !== undefined) return { endpoint: o.endpoint };
  if (usesPackage(o)) {
    const args = (o.packageArgs ?? (await askText({ flag: '--package-args', message: 'npx arguments, e.g. -y @acme/tool@1.2.3', validate: notEmpty }))).split(/\s+/).filter(Boolean);
    const version = await askText({ flag: '--package-version', message: 'Exact package version, e.g. 1.2.3', value: o.packageVersion, validate: notEmpty });
    // only npx is approved; another launcher is the gateway's to refuse, naming the field
    return { address: { kind: 'package', command: (o.packageCommand ?? 'npx') as 'npx', args, version } };
  }
  if (base.address) return { address: base.address };
  if (base.endpoint !== undefined) return { endpoint: base.endpoint };
  if (!canPrompt()) {
    throw usageError(
      'a capability needs an address: pass --endpoint URL, or --package-args and --package-version for an npx package',
      'agentpay publish --endpoint https://api.example.com/summarize ...',
      { flag: '--endpoint' },
    );
  }
  return { endpoint: await askText({ flag: '--endpoint', message: 'Endpoint URL buyers call', validate: notEmpty }) };
}

/**
 * The body of POST /v1/capabilities from `--file` and flags. Required values that
 * neither gives are asked for on a terminal, or refused naming their flag.
 */
export async function buildPublishInput(o: PublishOptions): Promise<PublishCapabilityInput> {
  const base = (o.file ? readJsonObject(o.file, '--file') : {}) as Partial<PublishCapabilityInput>;
  const name = await askText({ flag: '--name', message: 'Name shown in discovery', value: o.name ?? base.name, validate: notEmpty });
  const description = await askText({ flag: '--description', message: 'Description (searched and ranked on)', value: o.description ?? base.description, validate: notEmpty });
  const protocol = await askChoice({ flag: '--protocol', message: 'Protocol', value: o.protocol ?? base.protocol, choices: PROTOCOLS });
  const metering = (o.metering ? meteringOf(o.metering) : undefined) ?? base.metering;
  // a metered capability's price is its maximum per call: derived unless given (the gateway checks they agree)
  const price = o.price ?? base.priceMinor ?? (metering ? maximumOf(metering) : undefined);
  const priceMinor = price === undefined
    ? parsePrice(await askText({ flag: '--price', message: 'Price per call in integer minor units (150 = 1.50 USD)', validate: priceValid }))
    : parsePrice(price, o.price !== undefined ? '--price' : `priceMinor in ${o.file}`);
  const category = await askText({ flag: '--category', message: 'Category (exact match in search)', value: o.category ?? base.category, validate: notEmpty });
  const address = await addressOf(o, base);
  const toolName = protocol === 'mcp'
    ? await askText({ flag: '--tool-name', message: 'MCP tool name', value: o.toolName ?? base.toolName, validate: notEmpty })
    : (o.toolName ?? base.toolName); // the gateway refuses a tool name on rest and says so

  const { endpoint: _e, address: _a, ...rest } = base;
  return {
    ...rest,
    name,
    description,
    protocol,
    priceMinor,
    category,
    ...address,
    ...(toolName !== undefined ? { toolName } : {}),
    ...(metering ? { metering } : {}),
    ...(o.tags !== undefined ? { tags: parseTags(o.tags) } : {}),
    ...(o.schemaFile !== undefined ? { schema: readJsonObject(o.schemaFile, '--schema-file') } : {}),
    ...(o.latencyP50Ms !== undefined ? { latencyP50Ms: o.latencyP50Ms } : {}),
    ...(o.version !== undefined ? { version: o.version } : {}),
  };
}

export async function publishCapability(client: AgentpayClient, o: PublishOptions): Promise<PublishedCapability> {
  return client.capabilities.publish(await buildPublishInput(o));
}

export interface EditOptions {
  name?: string | undefined;
  description?: string | undefined;
  category?: string | undefined;
  tags?: string | undefined;
  price?: string | undefined;
  schemaFile?: string | undefined;
  latencyP50Ms?: number | undefined;
  version?: string | undefined;
  /** a new metered price (the gateway derives the price from it unless --price is given) */
  metering?: MeteringFlags | undefined;
  /** back to a flat price per call (metering: null) */
  flat?: boolean | undefined;
}

/** Only what changes; an empty patch is refused here rather than sent. */
export function buildPatch(o: EditOptions): CapabilityPatch {
  const patch: CapabilityPatch = {
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.category !== undefined ? { category: o.category } : {}),
    ...(o.tags !== undefined ? { tags: parseTags(o.tags) } : {}),
    ...(o.price !== undefined ? { priceMinor: parsePrice(o.price) } : {}),
    ...(o.schemaFile !== undefined ? { schema: readJsonObject(o.schemaFile, '--schema-file') } : {}),
    ...(o.latencyP50Ms !== undefined ? { latencyP50Ms: o.latencyP50Ms } : {}),
    ...(o.version !== undefined ? { version: o.version } : {}),
  };
  const metering = o.metering ? meteringOf(o.metering) : undefined;
  if (metering && o.flat) throw usageError('pass either --flat or a new metered price (--unit, --unit-price, --max-units), not both', undefined, { flag: '--flat' });
  if (metering) patch.metering = metering;
  if (o.flat) patch.metering = null;
  if (Object.keys(patch).length === 0) {
    throw usageError('nothing to change: pass at least one of --name, --description, --category, --tags, --price, --unit/--unit-price/--max-units, --flat, --schema-file, --latency-p50-ms', 'agentpay capabilities edit CAP_ID --price 150');
  }
  return patch;
}

export async function editCapability(client: AgentpayClient, id: string, o: EditOptions): Promise<CapabilityEdit> {
  return client.capabilities.edit(id, buildPatch(o));
}

// ---- how a person sees capabilities ----

export function addressText(a: CapabilityAddress): string {
  return a.kind === 'url' ? a.url : [a.command, ...a.args].join(' ');
}

const price = (c: Pick<Capability, 'priceMinor' | 'currency'>) => `${c.priceMinor} ${c.currency}`;

function capabilityLines(c: Capability): Array<readonly [string, unknown]> {
  return [
    ['id', c.id],
    ['name', c.name],
    ['description', c.description],
    ['protocol', c.toolName ? `${c.protocol} (tool ${c.toolName})` : c.protocol],
    ['price', c.metering ? `${price(c)} minor units per call at most (metered)` : `${price(c)} minor units per call`],
    ...(c.metering ? [['metering', `${c.metering.unitPriceMinor} ${c.currency} minor units per ${c.metering.unit}, at most ${c.metering.maxUnits} ${c.metering.unit} a call`] as const] : []),
    ['category', c.category],
    ['tags', c.tags],
    ['latency p50', c.latencyP50Ms === null ? null : `${c.latencyP50Ms} ms`],
    ['status', c.status],
  ];
}

function versionLines(v: CapabilityVersion | undefined): Array<readonly [string, unknown]> {
  if (!v) return [['address', 'hidden (not discoverable)']];
  return [
    ['address', addressText(v.address)],
    ['version', v.version],
    ['version hash', v.hash],
  ];
}

export function publishedText(p: PublishedCapability): string {
  return [`Published ${p.capability.id} (version ${p.version.version}, ${p.version.hash}).`, renderFields([...capabilityLines(p.capability), ...versionLines(p.version)])].join('\n');
}

export function capabilityDetailText(d: CapabilityDetail): string {
  return renderFields([
    ...capabilityLines(d.capability),
    ['provider', `${d.provider.name} (${d.provider.id}${d.provider.verified ? ', verified' : ', unverified'})`],
    ['discoverable', d.discoverable ? 'yes' : 'no'],
    ...versionLines(d.version),
    ['created', d.capability.createdAt],
    ['updated', d.capability.updatedAt],
  ]);
}

export function capabilityEditText(e: CapabilityEdit): string {
  return [
    `changed: ${e.changed.length ? e.changed.join(', ') : '(nothing)'}`,
    ...(e.version ? [`new version ${e.version.version} (${e.version.hash})`] : []),
    renderFields(capabilityLines(e.capability)),
  ].join('\n');
}

export function capabilityText(c: Capability): string {
  return renderFields(capabilityLines(c));
}

export function capabilityTable(list: readonly PublishedCapability[]): string {
  return renderTable(list, [
    { header: 'ID', get: (p) => p.capability.id },
    { header: 'NAME', get: (p) => p.capability.name },
    { header: 'PROTOCOL', get: (p) => p.capability.protocol },
    { header: 'PRICE', get: (p) => moneyText(p.capability.priceMinor, p.capability.currency) },
    { header: 'CATEGORY', get: (p) => p.capability.category },
    { header: 'STATUS', get: (p) => p.capability.status },
    { header: 'VERSION', get: (p) => p.version.version },
    { header: 'ADDRESS', get: (p) => addressText(p.version.address) },
  ], '(no capabilities: publish one with agentpay publish)');
}
