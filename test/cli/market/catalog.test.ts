/**
 * The seller's side of the CLI against a real gateway: publish (flags, fixture files,
 * prompts-as-flags), capabilities list/show/edit/deprecate, search, and the provider
 * verification and suspension an operator decides.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapabilityDetail, CapabilityEdit, DiscoveryResult, Provider, PublishedCapability } from '../../../packages/sdk/src/types.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cliFor, errorOf, type Cli } from './helpers.js';

let t: TestGateway;
let cli: Cli;
let provider: string;
let operator: string;

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  provider = t.creds.provider.apiKey;
  operator = t.creds.operatorKey;
});
afterAll(async () => {
  cli?.close();
  await t?.close();
});

const fixture = (name: string) => join(import.meta.dirname, '../../../fixtures/capabilities', `${name}.json`);

const restFlags = (name: string, price = '25') => [
  '--name', name, '--description', `${name}: summarizes documents into a few sentences`, '--protocol', 'rest',
  '--price', price, '--category', 'text', '--endpoint', 'https://summarize.example.com/v1/summarize',
];

/** state is checked through the SDK: one CLI run costs a Node start-up */
const myCapabilityIds = async () => (await t.provider.capabilities.list()).map((c) => c.capability.id);
const discoverable = async (id: string) => (await t.workspace.capabilities.get(id)).discoverable;

describe('agentpay publish', () => {
  it('publishes from flags and prints the capability id and version hash', async () => {
    const schema = cli.file('schema.json', JSON.stringify({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }));
    const out = await cli.json<PublishedCapability>(
      ['publish', ...restFlags('Flag Summarizer'), '--tags', 'summarization, nlp', '--schema-file', schema, '--latency-p50-ms', '800', '--version', '1.0'],
      { key: provider },
    );
    expect(out.capability).toMatchObject({
      name: 'Flag Summarizer', protocol: 'rest', priceMinor: '25', currency: 'USD', category: 'text',
      tags: ['summarization', 'nlp'], latencyP50Ms: 800, status: 'active', providerId: t.creds.provider.id,
      schema: { required: ['text'] },
    });
    expect(out.capability.id).toMatch(/^cap_/);
    expect(out.version).toMatchObject({ version: '1.0', endpoint: 'https://summarize.example.com/v1/summarize', address: { kind: 'url' } });
    expect(out.version.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await myCapabilityIds()).toContain(out.capability.id);
  });

  it('publishes fixture files as they are: a REST endpoint and a pinned npx package', async () => {
    const rest = await cli.json<PublishedCapability>(['publish', '--file', fixture('rest-summarize')], { key: provider });
    expect(rest.capability).toMatchObject({ name: 'Summarize text', protocol: 'rest', priceMinor: '25', tags: ['summarization', 'nlp'] });
    expect(rest.version.endpoint).toBe('https://summarize.example.com/v1/summarize');

    const pkg = await cli.json<PublishedCapability>(['publish', '--file', fixture('package-pdf-tools')], { key: provider });
    expect(pkg.version).toMatchObject({ endpoint: null, version: '2.4.1', address: { kind: 'package', command: 'npx', args: ['-y', '@example/pdf-tools-mcp@2.4.1'] } });
  });

  it('lets flags override the file, and builds a package address from the --package flags', async () => {
    const out = await cli.json<PublishedCapability>(['publish', '--file', fixture('mcp-weather'), '--price', '7', '--name', 'Weather, cheaper'], { key: provider });
    expect(out.capability).toMatchObject({ name: 'Weather, cheaper', priceMinor: '7', protocol: 'mcp', toolName: 'get_forecast', latencyP50Ms: 300 });
    expect(out.version.address).toEqual({ kind: 'url', url: 'https://weather.example.com/mcp' });

    const pkg = await cli.json<PublishedCapability>([
      'publish', '--name', 'PDF tools', '--description', 'Extracts PDF text', '--protocol', 'mcp', '--tool-name', 'extract',
      '--price', '10', '--category', 'documents', '--package-args=-y @example/pdf@3.0.0', '--package-version', '3.0.0',
    ], { key: provider });
    expect(pkg.version.address).toEqual({ kind: 'package', command: 'npx', args: ['-y', '@example/pdf@3.0.0'], version: '3.0.0' });
  });

  it('refuses "1.50" with exit 1 and a message that amounts are integer minor units, publishing nothing', async () => {
    const before = await myCapabilityIds();
    const r = await cli.run(['publish', ...restFlags('Decimal', '1.50')], { key: provider });
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: '--price' } });
    expect(errorOf(r).message).toContain('integer minor units: "150" means 1.50');
    expect(await myCapabilityIds()).toEqual(before);
  });

  it('names the missing flag instead of prompting when there is no terminal (exit 2)', async () => {
    const noAddress = await cli.run(['publish', ...restFlags('No address').slice(0, -2)], { key: provider });
    expect(noAddress.exitCode).toBe(2);
    expect(errorOf(noAddress).message).toContain('--endpoint');

    const noTool = await cli.run(['publish', ...restFlags('No tool').map((a) => (a === 'rest' ? 'mcp' : a))], { key: provider });
    expect(noTool.exitCode).toBe(2);
    expect(errorOf(noTool)).toMatchObject({ code: 'USAGE', details: { flag: '--tool-name' } });
  });

  it('passes on the gateway refusal for a workspace key (403 FORBIDDEN, exit 1)', async () => {
    const r = await cli.run(['publish', ...restFlags('Not a seller')]);
    expect(r.exitCode).toBe(1);
    expect(errorOf(r).code).toBe('FORBIDDEN');
  });
});

describe('agentpay capabilities', () => {
  let id: string;
  beforeAll(async () => {
    id = (await cli.json<PublishedCapability>(['publish', ...restFlags('Editable')], { key: provider })).capability.id;
  });

  it('show returns the capability with its seller and address', async () => {
    const d = await cli.json<CapabilityDetail>(['capabilities', 'show', id]);
    expect(d).toMatchObject({ capability: { id, name: 'Editable' }, provider: { id: t.creds.provider.id, verified: true }, discoverable: true, version: { address: { kind: 'url' } } });
  });

  it('edit sends only what changes and prints `changed`; a schema edit publishes a new version', async () => {
    const price = await cli.json<CapabilityEdit>(['capabilities', 'edit', id, '--price', '150', '--tags', 'fast,cheap'], { key: provider });
    expect([...price.changed].sort()).toEqual(['priceMinor', 'tags']);
    expect(price.capability).toMatchObject({ priceMinor: '150', tags: ['fast', 'cheap'], name: 'Editable' });
    expect(price.version).toBeUndefined();

    const schema = cli.file('schema-v2.json', JSON.stringify({ type: 'object', properties: { text: { type: 'string' }, lang: { type: 'string' } } }));
    const v2 = await cli.json<CapabilityEdit>(['capabilities', 'edit', id, '--schema-file', schema, '--version', '2'], { key: provider });
    expect(v2.changed).toContain('schema');
    expect(v2.version).toMatchObject({ version: '2' });
  });

  it('edit refuses an empty patch (exit 2) and a decimal price (exit 1) without calling the gateway', async () => {
    const empty = await cli.run(['capabilities', 'edit', id], { key: provider });
    expect(empty.exitCode).toBe(2);
    expect(errorOf(empty).message).toContain('nothing to change');
    const decimal = await cli.run(['capabilities', 'edit', id, '--price', '0.99'], { key: provider });
    expect(decimal.exitCode).toBe(1);
    expect(errorOf(decimal).code).toBe('VALIDATION_FAILED');
    expect((await t.workspace.capabilities.get(id)).capability.priceMinor).toBe('150');
  });

  it('deprecate takes it out of discovery; it still resolves and stays in the seller\'s list', async () => {
    const { capability } = await cli.json<{ capability: { status: string } }>(['capabilities', 'deprecate', id], { key: provider });
    expect(capability.status).toBe('deprecated');
    expect(await t.workspace.capabilities.get(id)).toMatchObject({ discoverable: false, capability: { status: 'deprecated' } });
    expect((await t.workspace.discovery.search({ query: 'Editable' })).map((r) => r.capability.id)).not.toContain(id);
  });

  it("list shows the seller's own capabilities, deprecated ones included; a workspace key is refused with FORBIDDEN (exit 1)", async () => {
    const { capabilities } = await cli.json<{ capabilities: PublishedCapability[] }>(['capabilities', 'list'], { key: provider });
    expect(capabilities.map((c) => c.capability.id).sort()).toEqual((await myCapabilityIds()).sort());
    expect(capabilities.find((c) => c.capability.id === id)?.capability.status).toBe('deprecated');
    expect(capabilities.every((c) => c.capability.providerId === t.creds.provider.id)).toBe(true);

    const r = await cli.run(['capabilities', 'list']);
    expect(r.exitCode).toBe(1);
    expect(errorOf(r).code).toBe('FORBIDDEN');
  });
});

describe('agentpay search', () => {
  it('finds a capability of the verified dev provider, with price, protocol, provider and score', async () => {
    const { capability } = await cli.json<PublishedCapability>([
      'publish', '--name', 'Tide tables', '--description', 'Tide tables and harbour times for coastal towns', '--protocol', 'rest',
      '--price', '12', '--category', 'marine', '--endpoint', 'https://tides.example.com/v1', '--latency-p50-ms', '200',
    ], { key: provider });
    const { results } = await cli.json<{ results: DiscoveryResult[] }>(['search', 'tide tables harbour']);
    const hit = results.find((r) => r.capability.id === capability.id);
    expect(hit).toMatchObject({ capability: { name: 'Tide tables', priceMinor: '12', protocol: 'rest' }, provider: { id: t.creds.provider.id, verified: true } });
    expect(hit!.score).toBeGreaterThan(0);
    expect(results[0]!.capability.id).toBe(capability.id);
  });

  it('applies --max-price, --protocol, --category, --max-latency and --limit', async () => {
    const names = async (args: string[]) => (await cli.json<{ results: DiscoveryResult[] }>(['search', 'tide', ...args])).results.map((r) => r.capability.name);
    // every filter at its boundary lets it through; one step past any of them does not
    expect(await names(['--category', 'marine', '--max-price', '12', '--protocol', 'rest', '--max-latency', '200', '--limit', '1'])).toEqual(['Tide tables']);
    expect(await names(['--category', 'marine', '--max-price', '11'])).toEqual([]);
    expect(await names(['--category', 'marine', '--protocol', 'mcp', '--max-latency', '199'])).toEqual([]);
  });

  it('refuses a decimal --max-price before searching (exit 1)', async () => {
    const r = await cli.run(['search', 'tide', '--max-price', '0.5']);
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: '--max-price' } });
  });
});

describe('agentpay providers', () => {
  it('request-verification defaults to the key\'s own provider; the operator lists, approves, and the seller becomes discoverable', async () => {
    const p = await t.newProvider({ name: 'Fresh Seller', verified: false });
    const { capability: { id: cap } } = await p.client.capabilities.publish({ name: 'Fresh summarizer', description: 'summaries', protocol: 'rest', priceMinor: '5', category: 'text', endpoint: 'https://fresh.example.com' });
    expect(await discoverable(cap)).toBe(false);

    const asked = await cli.json<{ provider: Provider }>(['providers', 'request-verification', '--note', 'we run summarizers', '--contact', 'ops@fresh.test'], { key: p.apiKey });
    expect(asked.provider).toMatchObject({ id: p.id, verified: false, verification: { status: 'requested', note: 'we run summarizers', contact: 'ops@fresh.test' } });

    const queue = await cli.json<{ providers: Provider[] }>(['providers', 'list', '--verification', 'requested'], { key: operator });
    expect(queue.providers.map((x) => x.id)).toContain(p.id);

    const denied = await cli.run(['providers', 'verify', p.id, '--decision', 'approved'], { key: p.apiKey });
    expect(denied.exitCode).toBe(1);
    expect(errorOf(denied).code).toBe('FORBIDDEN');

    const approved = await cli.json<{ provider: Provider }>(['providers', 'verify', p.id, '--decision', 'approved'], { key: operator });
    expect(approved.provider).toMatchObject({ id: p.id, verified: true, status: 'active', verification: { status: 'approved' } });
    expect(await discoverable(cap)).toBe(true);
  });

  it('verify without --decision and without a terminal names the flag (exit 2)', async () => {
    const r = await cli.run(['providers', 'verify', t.creds.provider.id], { key: operator });
    expect(r.exitCode).toBe(2);
    expect(errorOf(r)).toMatchObject({ code: 'USAGE', details: { flag: '--decision' } });
  });

  it('request-verification with a workspace key and no id says to name the provider (exit 2)', async () => {
    const r = await cli.run(['providers', 'request-verification']);
    expect(r.exitCode).toBe(2);
    expect(errorOf(r).message).toContain('not a provider');
  });

  it('suspend takes a seller out of discovery at once; unsuspend brings it back (operator key)', async () => {
    const p = await t.newProvider({ name: 'Suspendable Seller' });
    const { capability: { id: cap } } = await p.client.capabilities.publish({ name: 'Glacier melt forecast', description: 'melt', protocol: 'rest', priceMinor: '5', category: 'ice', endpoint: 'https://ice.example.com' });
    const found = async () => (await t.workspace.discovery.search({ query: 'Glacier melt forecast' })).some((r) => r.capability.id === cap);
    expect(await found()).toBe(true);

    const refused = await cli.run(['providers', 'suspend', p.id]);
    expect(errorOf(refused).code).toBe('FORBIDDEN');

    const suspended = await cli.json<{ provider: Provider }>(['providers', 'suspend', p.id], { key: operator });
    expect(suspended.provider.status).toBe('suspended');
    expect(await found()).toBe(false);

    const back = await cli.json<{ provider: Provider }>(['providers', 'unsuspend', p.id], { key: operator });
    expect(back.provider.status).toBe('active');
    expect(await found()).toBe(true);
  });

  it('list and show: a workspace key sees verified sellers', async () => {
    const { providers } = await cli.json<{ providers: Provider[] }>(['providers', 'list']);
    expect(providers.map((p) => p.id)).toContain(t.creds.provider.id);
    expect(providers.every((p) => p.verified)).toBe(true);
    const { provider: shown } = await cli.json<{ provider: Provider }>(['providers', 'show', t.creds.provider.id]);
    expect(shown).toMatchObject({ id: t.creds.provider.id, name: 'Dev Provider', verified: true });
  });
});
