import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../packages/sdk/src/contract/canonical-json.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectRefused, packageAddress, restInput, sampleCapability } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

const sha256 = (x: unknown) => `sha256:${createHash('sha256').update(canonicalize(x)).digest('hex')}`;

describe('POST /v1/capabilities', () => {
  it('publishes an active REST capability with a first version whose hash covers address and schema', async () => {
    const schema = { type: 'object', properties: { text: { type: 'string' } } };
    const { capability, version } = await t.provider.capabilities.publish(
      restInput({ name: 'Summarize', endpoint: 'https://sum.example.com/run', schema, tags: ['nlp', 'nlp', ' text '], latencyP50Ms: 120 }),
    );
    expect(capability).toMatchObject({
      id: expect.stringMatching(/^cap_/),
      providerId: t.creds.provider.id,
      name: 'Summarize',
      protocol: 'rest',
      priceMinor: '100',
      currency: 'USD',
      tags: ['nlp', 'text'],
      schema,
      latencyP50Ms: 120,
      status: 'active',
    });
    expect(capability).not.toHaveProperty('toolName');
    const address = { kind: 'url', url: 'https://sum.example.com/run' };
    expect(version).toEqual({ id: expect.stringMatching(/^ver_/), endpoint: 'https://sum.example.com/run', address, version: '1', hash: sha256({ address, schema }) });
  });

  it('takes a fractional latency (the spec\'s number), keeps it exactly, and discovery filters on it', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput({ name: 'Quick fractional latency', latencyP50Ms: 12.5 }));
    expect(capability.latencyP50Ms).toBe(12.5);
    expect((await t.provider.capabilities.get(capability.id)).capability.latencyP50Ms).toBe(12.5);
    const edited = await t.provider.capabilities.edit(capability.id, { latencyP50Ms: 7.25 });
    expect(edited.capability.latencyP50Ms).toBe(7.25);
    const ids = async (maxLatencyMs: number) => (await t.workspace.discovery.search({ query: 'fractional latency', maxLatencyMs })).map((r) => r.capability.id);
    expect(await ids(7.25)).toContain(capability.id);
    expect(await ids(7.2)).not.toContain(capability.id);
  });

  it('publishes an MCP capability with its tool name and a caller-chosen version label', async () => {
    const { capability, version } = await t.provider.capabilities.publish(
      restInput({ protocol: 'mcp', toolName: 'get_forecast', endpoint: undefined, address: { kind: 'url', url: 'https://mcp.example.com/mcp' }, version: '2026.1' }),
    );
    expect(capability.toolName).toBe('get_forecast');
    expect(version).toMatchObject({ endpoint: 'https://mcp.example.com/mcp', address: { kind: 'url', url: 'https://mcp.example.com/mcp' }, version: '2026.1' });
    expect(version.hash).toBe(sha256({ address: version.address, schema: null }));
  });

  it('publishes a package capability with its pinned npx address and no endpoint', async () => {
    for (const pkg of ['plain-tool', '@scope/tool']) {
      const { version } = await t.provider.capabilities.publish(restInput({ protocol: 'mcp', toolName: 'run', endpoint: undefined, address: packageAddress(pkg, '1.2.3') }));
      expect(version.endpoint).toBeNull();
      expect(version.address).toEqual({ kind: 'package', command: 'npx', args: ['-y', `${pkg}@1.2.3`], version: '1.2.3' });
    }
  });

  it('accepts a loopback http endpoint for a seller running on this machine', async () => {
    for (const endpoint of ['http://127.0.0.1:8080/x', 'http://localhost:3000/x']) {
      const { version } = await t.provider.capabilities.publish(restInput({ endpoint }));
      expect(version.endpoint).toBe(endpoint);
    }
  });

  it('publishes the sample capabilities in fixtures/capabilities', async () => {
    for (const file of ['rest-summarize', 'mcp-weather', 'package-pdf-tools'] as const) {
      const input = sampleCapability(file);
      const { capability, version } = await t.provider.capabilities.publish(input);
      expect(capability).toMatchObject({ name: input.name, protocol: input.protocol, priceMinor: input.priceMinor, status: 'active' });
      expect(version.address.kind).toBe(file === 'package-pdf-tools' ? 'package' : 'url');
    }
  });

  it('creates a second capability when the same body is published again', async () => {
    const input = restInput();
    const a = await t.provider.capabilities.publish(input);
    const b = await t.provider.capabilities.publish(input);
    expect(a.capability.id).not.toBe(b.capability.id);
  });

  it('ignores a providerId in the body: the provider is the key\'s tenant', async () => {
    const other = await t.newProvider();
    const { capability } = await t.provider.capabilities.publish({ ...restInput(), providerId: other.id } as never);
    expect(capability.providerId).toBe(t.creds.provider.id);
  });

  it('lets an unverified provider publish, but keeps the capability out of discovery', async () => {
    const pending = await t.newProvider({ verified: false });
    const { capability } = await pending.client.capabilities.publish(restInput({ description: 'pendingonlyword' }));
    expect(capability.status).toBe('active');
    expect(await t.workspace.discovery.search({ query: 'pendingonlyword' })).toEqual([]);
  });

  it('refuses a workspace key and the operator key with 403 FORBIDDEN', async () => {
    await expectRefused(t.workspace.capabilities.publish(restInput()), 403, 'FORBIDDEN');
    await expectRefused(t.operator.capabilities.publish(restInput()), 403, 'FORBIDDEN');
  });

  describe('refuses with 400 VALIDATION_FAILED naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['both endpoint and address', { address: { kind: 'url', url: 'https://a.example.com' } }, 'endpoint'],
      ['neither endpoint nor address', { endpoint: undefined }, 'endpoint'],
      ['an http endpoint that is not loopback', { endpoint: 'http://seller.example.com/x' }, 'endpoint'],
      ['a non-http endpoint', { endpoint: 'ftp://seller.example.com/x' }, 'endpoint'],
      ['an endpoint that is not a URL', { endpoint: 'seller.example.com/x' }, 'endpoint'],
      ['credentials in the endpoint', { endpoint: 'https://user:pw@seller.example.com/x' }, 'endpoint'],
      ['a url address that is not https', { endpoint: undefined, address: { kind: 'url', url: 'http://seller.example.com' } }, 'address.url'],
      ['an unknown address kind', { endpoint: undefined, address: { kind: 'git', url: 'https://a.example.com' } }, 'address.kind'],
      ['a url address with a stray field', { endpoint: undefined, address: { kind: 'url', url: 'https://a.example.com', version: '1.0.0' } }, 'address.version'],
      ['a protocol other than rest or mcp', { protocol: 'grpc' }, 'protocol'],
      ['an mcp capability without toolName', { protocol: 'mcp' }, 'toolName'],
      ['a rest capability with toolName', { toolName: 'run' }, 'toolName'],
      ['a tool name with spaces', { protocol: 'mcp', toolName: 'run it' }, 'toolName'],
      ['priceMinor as a JSON number', { priceMinor: 100 }, 'priceMinor'],
      ['priceMinor with a decimal point', { priceMinor: '1.50' }, 'priceMinor'],
      ['a zero price', { priceMinor: '0' }, 'priceMinor'],
      ['a currency other than USD', { currency: 'EUR' }, 'currency'],
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a missing category', { category: undefined }, 'category'],
      ['a schema that is not an object', { schema: ['type', 'object'] }, 'schema'],
      // 40,000 characters but 80,000 bytes: the 64 KiB limit counts bytes
      ['a schema over 64 KiB of UTF-8', { schema: { type: 'object', description: 'é'.repeat(40_000) } }, 'schema'],
      ['a negative latency', { latencyP50Ms: -1 }, 'latencyP50Ms'],
      ['a latency over an hour', { latencyP50Ms: 3_600_000.5 }, 'latencyP50Ms'],
      ['an unknown field', { priceMinorr: '100' }, 'priceMinorr'],
    ];
    for (const [what, patch, field] of cases) {
      it(`for ${what}`, async () => {
        await expectRefused(t.provider.capabilities.publish({ ...restInput(), ...patch } as never), 400, 'VALIDATION_FAILED', field);
      });
    }
  });

  describe('refuses a package address that does not pin one exact version with npx', () => {
    const pkg = (address: Record<string, unknown>) => ({ ...restInput({ protocol: 'mcp', toolName: 'run' }), endpoint: undefined, address });
    const cases: [string, Record<string, unknown>, string][] = [
      ['a launcher other than npx', { ...packageAddress(), command: 'node' }, 'address.command'],
      ['a launcher given as a path', { ...packageAddress(), command: '/usr/bin/npx' }, 'address.command'],
      ['a missing version', { kind: 'package', command: 'npx', args: ['-y', 'tool@1.2.3'] }, 'address.version'],
      ['a caret range as version', { ...packageAddress('tool', '^1.2.3') }, 'address.version'],
      ['a tilde range as version', { ...packageAddress('tool', '~1.2.3') }, 'address.version'],
      ['a comparator as version', { ...packageAddress('tool', '>1.0.0') }, 'address.version'],
      ['a less-than comparator as version', { ...packageAddress('tool', '<2.0.0') }, 'address.version'],
      ['a star as version', { ...packageAddress('tool', '*') }, 'address.version'],
      ['an x wildcard as version', { ...packageAddress('tool', '1.x') }, 'address.version'],
      ['the latest tag as version', { ...packageAddress('tool', 'latest') }, 'address.version'],
      ['the next tag as version', { ...packageAddress('tool', 'next') }, 'address.version'],
      ['a partial version', { ...packageAddress('tool', '1.2') }, 'address.version'],
      ['args naming the package without a version', { kind: 'package', command: 'npx', args: ['-y', 'tool'], version: '1.2.3' }, 'address.args'],
      ['args naming a scoped package without a version', { kind: 'package', command: 'npx', args: ['-y', '@scope/tool'], version: '1.2.3' }, 'address.args'],
      ['args pinning a range', { kind: 'package', command: 'npx', args: ['-y', 'tool@^1.2.3'], version: '1.2.3' }, 'address.args'],
      ['args pinning a tag', { kind: 'package', command: 'npx', args: ['-y', 'tool@latest'], version: '1.2.3' }, 'address.args'],
      ['args pinning an x wildcard', { kind: 'package', command: 'npx', args: ['-y', '@scope/tool@1.x'], version: '1.2.3' }, 'address.args'],
      ['args and version that disagree', { kind: 'package', command: 'npx', args: ['-y', 'tool@1.2.4'], version: '1.2.3' }, 'address.args'],
      ['args with no package at all', { kind: 'package', command: 'npx', args: ['-y'], version: '1.2.3' }, 'address.args'],
      ['empty args', { kind: 'package', command: 'npx', args: [], version: '1.2.3' }, 'address.args'],
      ['a flag that installs another package first', { kind: 'package', command: 'npx', args: ['-p', 'evil@1.0.0', 'tool@1.2.3'], version: '1.2.3' }, 'address.args'],
      ['a git spec instead of a package name', { kind: 'package', command: 'npx', args: ['-y', 'github:someone/tool@1.2.3'], version: '1.2.3' }, 'address.args'],
      ['an npm alias', { kind: 'package', command: 'npx', args: ['-y', 'npm:tool@1.2.3'], version: '1.2.3' }, 'address.args'],
      ['a stray field', { ...packageAddress(), url: 'https://a.example.com' }, 'address.url'],
    ];
    for (const [what, address, field] of cases) {
      it(`for ${what}`, async () => {
        await expectRefused(t.provider.capabilities.publish(pkg(address) as never), 400, 'VALIDATION_FAILED', field);
      });
    }
  });

  it('refuses an empty body with a JSON content type, and a JSON number for the price, naming the field', async () => {
    const http = t.provider.http;
    const empty = await http.raw('POST', '/v1/capabilities', { headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
    const numeric = await http.raw<{ error: { code: string; message: string } }>('POST', '/v1/capabilities', { body: { ...restInput(), priceMinor: 100 } });
    expect(numeric.status).toBe(400);
    expect(numeric.body.error.message).toMatch(/^priceMinor/);
  });
});

describe('GET /v1/capabilities', () => {
  it("lists the provider's own capabilities with their current versions, deprecated ones included", async () => {
    const seller = await t.newProvider();
    const a = await seller.client.capabilities.publish(restInput());
    const b = await seller.client.capabilities.publish(restInput());
    await seller.client.capabilities.deprecate(b.capability.id);
    const other = await t.newProvider();
    await other.client.capabilities.publish(restInput());

    const list = await seller.client.capabilities.list();
    expect(list.map((x) => [x.capability.id, x.capability.status, x.version.id])).toEqual([
      [a.capability.id, 'active', a.version.id],
      [b.capability.id, 'deprecated', b.version.id],
    ]);
  });

  it('refuses a workspace key with 403 FORBIDDEN', async () => {
    await expectRefused(t.workspace.capabilities.list(), 403, 'FORBIDDEN');
  });
});

describe('GET /v1/capabilities/:id', () => {
  it('shows a discoverable capability to a buyer with its seller, the discoverable flag and the version', async () => {
    const { capability, version } = await t.provider.capabilities.publish(restInput());
    const d = await t.workspace.capabilities.get(capability.id);
    expect(d).toEqual({
      capability,
      provider: { id: t.creds.provider.id, name: 'Dev Provider', verified: true, reputation: 0.5 },
      discoverable: true,
      version,
    });
  });

  it("hides the address of an unverified seller's capability from buyers but not from its seller or the operator", async () => {
    const pending = await t.newProvider({ verified: false });
    const { capability, version } = await pending.client.capabilities.publish(restInput());
    const forBuyer = await t.workspace.capabilities.get(capability.id);
    expect(forBuyer.discoverable).toBe(false);
    expect(forBuyer).not.toHaveProperty('version');
    expect(forBuyer.provider).toMatchObject({ id: pending.id, verified: false });
    expect((await pending.client.capabilities.get(capability.id)).version).toEqual(version);
    expect((await t.operator.capabilities.get(capability.id)).version).toEqual(version);
    // another seller is not its seller
    expect(await t.provider.capabilities.get(capability.id)).not.toHaveProperty('version');
  });

  it('answers 404 CAPABILITY_NOT_FOUND for an unknown id', async () => {
    await expectRefused(t.workspace.capabilities.get('cap_nope'), 404, 'CAPABILITY_NOT_FOUND');
  });
});

describe('POST /v1/capabilities/:id (edit)', () => {
  it('edits the price in place, keeping the version, and reports what changed', async () => {
    const { capability, version } = await t.provider.capabilities.publish(restInput({ priceMinor: '100' }));
    const edit = await t.provider.capabilities.edit(capability.id, { priceMinor: '150', latencyP50Ms: 90 });
    expect(edit.changed.sort()).toEqual(['latencyP50Ms', 'priceMinor']);
    expect(edit).not.toHaveProperty('version');
    expect(edit.capability).toMatchObject({ id: capability.id, priceMinor: '150', latencyP50Ms: 90 });
    const d = await t.workspace.capabilities.get(capability.id);
    expect(d.capability.priceMinor).toBe('150');
    expect(d.version).toEqual(version);
  });

  it('publishes a new version for a schema edit: new hash, same address, next label', async () => {
    const { capability, version } = await t.provider.capabilities.publish(restInput({ schema: { type: 'object' } }));
    const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const edit = await t.provider.capabilities.edit(capability.id, { schema });
    expect(edit.changed).toEqual(['schema']);
    expect(edit.version).toMatchObject({ address: version.address, endpoint: version.endpoint, version: '2' });
    expect(edit.version!.id).not.toBe(version.id);
    expect(edit.version!.hash).not.toBe(version.hash);
    expect(edit.version!.hash).toBe(sha256({ address: version.address, schema }));
    const d = await t.workspace.capabilities.get(capability.id);
    expect(d.capability.schema).toEqual(schema);
    expect(d.version).toEqual(edit.version);
  });

  it('labels a schema version as asked, and refuses a label already used', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput());
    const edit = await t.provider.capabilities.edit(capability.id, { schema: { type: 'object', title: 'v2' }, version: '2.0.0' });
    expect(edit.version!.version).toBe('2.0.0');
    await expectRefused(t.provider.capabilities.edit(capability.id, { schema: { type: 'object', title: 'v3' }, version: '2.0.0' }), 400, 'VALIDATION_FAILED', 'version');
    await expectRefused(t.provider.capabilities.edit(capability.id, { version: '3.0.0' }), 400, 'VALIDATION_FAILED', 'version');
  });

  it('changes nothing, and reports nothing changed, for a patch equal to the current values', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput({ priceMinor: '100', schema: { type: 'object' } }));
    const edit = await t.provider.capabilities.edit(capability.id, { priceMinor: '100', schema: { type: 'object' }, name: capability.name });
    expect(edit.changed).toEqual([]);
    expect(edit.capability.updatedAt).toBe(capability.updatedAt);
  });

  it('re-indexes edited wording for discovery at once', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput({ name: 'Oldwordalpha service' }));
    expect((await t.workspace.discovery.search({ query: 'oldwordalpha' })).map((x) => x.capability.id)).toEqual([capability.id]);
    await t.provider.capabilities.edit(capability.id, { name: 'Newwordbeta service', tags: ['tagwordgamma'] });
    expect(await t.workspace.discovery.search({ query: 'oldwordalpha' })).toEqual([]);
    expect((await t.workspace.discovery.search({ query: 'newwordbeta' })).map((x) => x.capability.id)).toEqual([capability.id]);
    expect((await t.workspace.discovery.search({ query: 'tagwordgamma' })).map((x) => x.capability.id)).toEqual([capability.id]);
  });

  for (const [field, value] of [
    ['address', { kind: 'url', url: 'https://elsewhere.example.com' }],
    ['endpoint', 'https://elsewhere.example.com'],
    ['protocol', 'mcp'],
    ['toolName', 'other_tool'],
  ] as const) {
    it(`refuses to edit ${field} with 400 VALIDATION_FAILED telling to publish a new capability`, async () => {
      const { capability } = await t.provider.capabilities.publish(restInput());
      const e = await expectRefused(t.provider.capabilities.edit(capability.id, { [field]: value, priceMinor: '5' } as never), 400, 'VALIDATION_FAILED', field);
      expect(e.message).toContain('publish a new capability and deprecate this one');
      expect((await t.provider.capabilities.get(capability.id)).capability.priceMinor).toBe('100');
    });
  }

  it('refuses an empty patch and a missing body with 400 VALIDATION_FAILED', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput());
    await expectRefused(t.provider.capabilities.edit(capability.id, {}), 400, 'VALIDATION_FAILED', 'body');
    const none = await t.provider.http.raw('POST', `/v1/capabilities/${capability.id}`);
    expect(none.status).toBe(400);
  });

  it('refuses a JSON number for the price and an unknown enum currency', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput());
    await expectRefused(t.provider.capabilities.edit(capability.id, { priceMinor: 150 } as never), 400, 'VALIDATION_FAILED', 'priceMinor');
    await expectRefused(t.provider.capabilities.edit(capability.id, { currency: 'EUR' } as never), 400, 'VALIDATION_FAILED', 'currency');
  });

  it("refuses another provider with 403 FORBIDDEN and changes nothing", async () => {
    const { capability } = await t.provider.capabilities.publish(restInput({ priceMinor: '100' }));
    const other = await t.newProvider();
    await expectRefused(other.client.capabilities.edit(capability.id, { priceMinor: '1' }), 403, 'FORBIDDEN');
    await expectRefused(other.client.capabilities.deprecate(capability.id), 403, 'FORBIDDEN');
    const d = await t.provider.capabilities.get(capability.id);
    expect(d.capability).toEqual(capability);
  });

  it('refuses a workspace key with 403 FORBIDDEN and an unknown id with 404 CAPABILITY_NOT_FOUND', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput());
    await expectRefused(t.workspace.capabilities.edit(capability.id, { priceMinor: '1' }), 403, 'FORBIDDEN');
    await expectRefused(t.provider.capabilities.edit('cap_nope', { priceMinor: '1' }), 404, 'CAPABILITY_NOT_FOUND');
  });
});

describe('POST /v1/capabilities/:id/deprecate', () => {
  it('takes the capability out of discovery at once, keeps the id resolving, and refuses later edits with 409', async () => {
    const { capability } = await t.provider.capabilities.publish(restInput({ description: 'deprecationwordzeta' }));
    expect(await t.workspace.discovery.search({ query: 'deprecationwordzeta' })).toHaveLength(1);

    const deprecated = await t.provider.capabilities.deprecate(capability.id);
    expect(deprecated).toMatchObject({ id: capability.id, status: 'deprecated' });
    expect(await t.workspace.discovery.search({ query: 'deprecationwordzeta' })).toEqual([]);
    expect((await t.workspace.discovery.search({ limit: 100 })).map((x) => x.capability.id)).not.toContain(capability.id);

    const d = await t.workspace.capabilities.get(capability.id);
    expect(d).toMatchObject({ capability: { status: 'deprecated' }, discoverable: false });
    expect(d).not.toHaveProperty('version');
    expect((await t.provider.capabilities.get(capability.id)).version).toBeDefined();

    await expectRefused(t.provider.capabilities.edit(capability.id, { priceMinor: '1' }), 409, 'CONFLICT');
    // deprecating again changes nothing
    expect(await t.provider.capabilities.deprecate(capability.id)).toEqual(deprecated);
  });

  it('answers 404 CAPABILITY_NOT_FOUND for an unknown id', async () => {
    await expectRefused(t.provider.capabilities.deprecate('cap_nope'), 404, 'CAPABILITY_NOT_FOUND');
  });
});
