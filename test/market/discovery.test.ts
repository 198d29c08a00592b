import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MATCH_CEILING, WEIGHTS } from '../../src/domain/market/discovery.js';
import type { DiscoveryResult } from '../../packages/sdk/src/client/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addRatings, expectRefused, packageAddress, restInput, sampleCapability } from './helpers.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

/** A category of its own per test, so that tests sharing the gateway do not see each other's listings. */
const freshCategory = () => `cat-${randomBytes(4).toString('hex')}`;
const ids = (results: DiscoveryResult[]) => results.map((r) => r.capability.id);

describe('POST /v1/discovery/search', () => {
  it('accepts no body at all and returns only discoverable capabilities', async () => {
    const res = await t.workspace.http.raw<{ results: DiscoveryResult[] }>('POST', '/v1/discovery/search');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.results)).toBe(true);
  });

  it('returns results best first, each with its version, seller, score and score breakdown', async () => {
    const category = freshCategory();
    const { capability, version } = await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 50, schema: { type: 'object' }, tags: ['x'] }));
    await t.provider.capabilities.publish(restInput({ category, priceMinor: '300' }));
    const results = await t.workspace.discovery.search({ category });
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({
      capability: {
        id: capability.id, name: capability.name, description: capability.description, protocol: 'rest', priceMinor: '100', currency: 'USD',
        category, tags: ['x'], schema: { type: 'object' }, latencyP50Ms: 50, status: 'active',
      },
      version: { endpoint: version.endpoint, address: version.address, version: '1' },
      provider: { id: t.creds.provider.id, name: 'Dev Provider', verified: true, reputation: 0.5 },
      score: expect.any(Number),
      scoreBreakdown: { relevance: 0.5, price: 1, latency: 1, reputation: 0.5, verification: 1 },
    });
    for (const r of results) {
      const weighted = (Object.keys(WEIGHTS) as (keyof typeof WEIGHTS)[]).reduce((s, k) => s + WEIGHTS[k] * r.scoreBreakdown[k], 0);
      expect(r.score).toBeCloseTo(weighted, 3);
    }
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    // unknown latency is neutral, a triple price a third
    expect(results[1]!.scoreBreakdown).toMatchObject({ latency: 0.5, price: 0.3333 });
  });

  it('returns MCP tool names and package addresses', async () => {
    const category = freshCategory();
    const pkg = await t.provider.capabilities.publish({ ...sampleCapability('package-pdf-tools'), category });
    const mcp = await t.provider.capabilities.publish({ ...sampleCapability('mcp-weather'), category });
    const results = await t.workspace.discovery.search({ category });
    const byId = new Map(results.map((r) => [r.capability.id, r]));
    expect(byId.get(pkg.capability.id)!.capability.toolName).toBe('extract_pdf_text');
    expect(byId.get(pkg.capability.id)!.version).toEqual({ endpoint: null, address: { kind: 'package', command: 'npx', args: ['-y', '@example/pdf-tools-mcp@2.4.1'], version: '2.4.1' }, version: '2.4.1' });
    expect(byId.get(mcp.capability.id)!.capability.toolName).toBe('get_forecast');
    expect(byId.get(mcp.capability.id)!.version.address).toEqual({ kind: 'url', url: 'https://weather.example.com/mcp' });
  });

  describe('filters', () => {
    it('category matches exactly', async () => {
      const category = freshCategory();
      const { capability } = await t.provider.capabilities.publish(restInput({ category }));
      await t.provider.capabilities.publish(restInput({ category: `${category}-other` }));
      expect(ids(await t.workspace.discovery.search({ category }))).toEqual([capability.id]);
      expect(await t.workspace.discovery.search({ category: category.toUpperCase() })).toEqual([]);
      expect(await t.workspace.discovery.search({ category: category.slice(0, -1) })).toEqual([]);
    });

    it('protocol keeps only rest or only mcp', async () => {
      const category = freshCategory();
      const rest = await t.provider.capabilities.publish(restInput({ category }));
      const mcp = await t.provider.capabilities.publish(restInput({ category, protocol: 'mcp', toolName: 'tool' }));
      expect(ids(await t.workspace.discovery.search({ category, protocol: 'rest' }))).toEqual([rest.capability.id]);
      expect(ids(await t.workspace.discovery.search({ category, protocol: 'mcp' }))).toEqual([mcp.capability.id]);
    });

    it('maxPriceMinor keeps prices at or below it', async () => {
      const category = freshCategory();
      const cheap = await t.provider.capabilities.publish(restInput({ category, priceMinor: '50' }));
      const exact = await t.provider.capabilities.publish(restInput({ category, priceMinor: '100' }));
      await t.provider.capabilities.publish(restInput({ category, priceMinor: '101' }));
      expect(ids(await t.workspace.discovery.search({ category, maxPriceMinor: '100' })).sort()).toEqual([cheap.capability.id, exact.capability.id].sort());
      expect(await t.workspace.discovery.search({ category, maxPriceMinor: '0' })).toEqual([]);
    });

    it('maxLatencyMs keeps advertised latencies at or below it and leaves out unknown ones', async () => {
      const category = freshCategory();
      const fast = await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 100 }));
      await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 101 }));
      await t.provider.capabilities.publish(restInput({ category }));
      expect(ids(await t.workspace.discovery.search({ category, maxLatencyMs: 100 }))).toEqual([fast.capability.id]);
      expect(ids(await t.workspace.discovery.search({ category, maxLatencyMs: 100.9 }))).toEqual([fast.capability.id]);
    });

    it('limit caps the results: default 20, at most 100', async () => {
      const category = freshCategory();
      for (let i = 0; i < 105; i++) await t.provider.capabilities.publish(restInput({ category }));
      expect(await t.workspace.discovery.search({ category })).toHaveLength(20);
      expect(await t.workspace.discovery.search({ category, limit: 3 })).toHaveLength(3);
      expect(await t.workspace.discovery.search({ category, limit: 1000 })).toHaveLength(100);
      // the first page is the start of the longer one
      expect(ids(await t.workspace.discovery.search({ category, limit: 3 }))).toEqual(ids(await t.workspace.discovery.search({ category })).slice(0, 3));
    });

    it('refuses malformed filters with 400 VALIDATION_FAILED naming the field', async () => {
      await expectRefused(t.workspace.discovery.search({ maxPriceMinor: 100 } as never), 400, 'VALIDATION_FAILED', 'maxPriceMinor');
      await expectRefused(t.workspace.discovery.search({ maxPriceMinor: '1.5' }), 400, 'VALIDATION_FAILED', 'maxPriceMinor');
      await expectRefused(t.workspace.discovery.search({ protocol: 'grpc' as never }), 400, 'VALIDATION_FAILED', 'protocol');
      await expectRefused(t.workspace.discovery.search({ limit: 0 }), 400, 'VALIDATION_FAILED', 'limit');
      await expectRefused(t.workspace.discovery.search({ limit: 2.5 }), 400, 'VALIDATION_FAILED', 'limit');
      await expectRefused(t.workspace.discovery.search({ maxLatencyMs: -1 }), 400, 'VALIDATION_FAILED', 'maxLatencyMs');
      await expectRefused(t.workspace.discovery.search({ sort: 'price' } as never), 400, 'VALIDATION_FAILED');
      const empty = await t.workspace.http.raw('POST', '/v1/discovery/search', { headers: { 'content-type': 'application/json' } });
      expect(empty.status).toBe(400);
    });
  });

  describe('relevance from the full-text index (BM25)', () => {
    it('ranks a capability that mentions the query words more often above one that mentions them less', async () => {
      const w = `kw${randomBytes(3).toString('hex')}`;
      const once = await t.provider.capabilities.publish(restInput({ name: 'Helper', description: `Handles ${w} requests and other things, quickly and well` }));
      const often = await t.provider.capabilities.publish(restInput({ name: `${w} engine`, description: `The ${w} service: ${w} in, ${w} out` }));
      const results = await t.workspace.discovery.search({ query: w });
      expect(ids(results)).toEqual([often.capability.id, once.capability.id]);
      expect(results[0]!.scoreBreakdown.relevance).toBe(1);
      expect(results[1]!.scoreBreakdown.relevance).toBeLessThan(1);
      expect(results[1]!.scoreBreakdown.relevance).toBeGreaterThan(0);
    });

    it('ranks a match on a rare word above a match on a common one', async () => {
      const common = `kc${randomBytes(3).toString('hex')}`;
      const rare = `kr${randomBytes(3).toString('hex')}`;
      for (let i = 0; i < 6; i++) await t.provider.capabilities.publish(restInput({ description: `generic ${common} filler` }));
      const commonHit = await t.provider.capabilities.publish(restInput({ description: `only ${common} here` }));
      const rareHit = await t.provider.capabilities.publish(restInput({ description: `only ${rare} here` }));
      const results = ids(await t.workspace.discovery.search({ query: `${common} ${rare}`, limit: 100 }));
      expect(results[0]).toBe(rareHit.capability.id);
      expect(results).toContain(commonHit.capability.id);
      expect(results).toHaveLength(8);
    });

    it('matches a word that appears only in the description, and whole words rather than substrings', async () => {
      const w = `kd${randomBytes(3).toString('hex')}`;
      const { capability } = await t.provider.capabilities.publish(restInput({ name: 'Plain name', description: `Turns ${w}weather into text` }));
      expect(ids(await t.workspace.discovery.search({ query: `${w}weather` }))).toEqual([capability.id]);
      // a word's prefix finds it ("forecast" finds "forecasting"); a piece from its middle does not
      expect(await t.workspace.discovery.search({ query: `${w.slice(2)}weather` })).toEqual([]);
      expect(await t.workspace.discovery.search({ query: 'eather' })).toEqual([]);
    });

    it('treats punctuation and FTS syntax in the query as plain words', async () => {
      const w = `kp${randomBytes(3).toString('hex')}`;
      const { capability } = await t.provider.capabilities.publish(restInput({ description: `Converts ${w} files` }));
      for (const query of [`"${w}" OR (NEAR AND -x*`, `${w}:*^ "unterminated`, `${w}'); DROP TABLE capabilities; --`, `{${w}} [] \\ /`]) {
        expect(ids(await t.workspace.discovery.search({ query })), query).toContain(capability.id);
      }
      // a query with no words at all searches nothing and filters nothing
      const category = freshCategory();
      const own = await t.provider.capabilities.publish(restInput({ category }));
      expect(ids(await t.workspace.discovery.search({ query: '"*()^:', category }))).toEqual([own.capability.id]);
      expect(await t.workspace.discovery.search({ query: `nomatch${randomBytes(3).toString('hex')}` })).toEqual([]);
    });
  });

  describe('ranking', () => {
    it('ranks the cheaper of two equally relevant capabilities higher', async () => {
      const w = `kq${randomBytes(3).toString('hex')}`;
      const dear = await t.provider.capabilities.publish(restInput({ name: 'Same', description: `Same ${w} text`, priceMinor: '200' }));
      const cheap = await t.provider.capabilities.publish(restInput({ name: 'Same', description: `Same ${w} text`, priceMinor: '100' }));
      const results = await t.workspace.discovery.search({ query: w });
      expect(ids(results)).toEqual([cheap.capability.id, dear.capability.id]);
      expect(results.map((r) => r.scoreBreakdown.relevance)).toEqual([1, 1]);
      expect(results.map((r) => r.scoreBreakdown.price)).toEqual([1, 0.5]);
    });

    it('ranks a faster and a better-rated seller higher, all else equal', async () => {
      const category = freshCategory();
      const slow = await t.provider.capabilities.publish(restInput({ category, name: 'Same', description: 'same', latencyP50Ms: 400 }));
      const fast = await t.provider.capabilities.publish(restInput({ category, name: 'Same', description: 'same', latencyP50Ms: 100 }));
      expect(ids(await t.workspace.discovery.search({ category }))).toEqual([fast.capability.id, slow.capability.id]);

      const loved = await t.newProvider({ name: 'Loved' });
      const meh = await t.newProvider({ name: 'Meh' });
      await addRatings(t, loved.id, [5, 5, 5, 5]);
      await addRatings(t, meh.id, [2, 2]);
      const category2 = freshCategory();
      const a = await meh.client.capabilities.publish(restInput({ category: category2, name: 'Same', description: 'same' }));
      const b = await loved.client.capabilities.publish(restInput({ category: category2, name: 'Same', description: 'same' }));
      const results = await t.workspace.discovery.search({ category: category2 });
      expect(ids(results)).toEqual([b.capability.id, a.capability.id]);
      expect(results[0]!.provider.reputation).toBeGreaterThan(results[1]!.provider.reputation);
    });

    it('breaks equal scores by capability id, the same on every call', async () => {
      const category = freshCategory();
      const made = [];
      for (let i = 0; i < 4; i++) made.push((await t.provider.capabilities.publish(restInput({ category, name: 'Twin', description: 'twin' }))).capability.id);
      const results = await t.workspace.discovery.search({ category });
      expect(new Set(results.map((r) => r.score)).size).toBe(1);
      expect(ids(results)).toEqual([...made].sort());
    });

    it('shows price edits at once, in the filter and in the ranking', async () => {
      const category = freshCategory();
      const a = await t.provider.capabilities.publish(restInput({ category, name: 'Same', description: 'same', priceMinor: '100' }));
      const b = await t.provider.capabilities.publish(restInput({ category, name: 'Same', description: 'same', priceMinor: '200' }));
      expect(ids(await t.workspace.discovery.search({ category }))).toEqual([a.capability.id, b.capability.id]);
      await t.provider.capabilities.edit(b.capability.id, { priceMinor: '50' });
      expect(ids(await t.workspace.discovery.search({ category }))).toEqual([b.capability.id, a.capability.id]);
      expect(ids(await t.workspace.discovery.search({ category, maxPriceMinor: '60' }))).toEqual([b.capability.id]);
    });
  });

  it('leaves out unverified, suspended and deprecated listings', async () => {
    const category = freshCategory();
    const live = await t.provider.capabilities.publish(restInput({ category }));
    const pending = await t.newProvider({ verified: false });
    await pending.client.capabilities.publish(restInput({ category }));
    const suspended = await t.newProvider();
    await suspended.client.capabilities.publish(restInput({ category }));
    await t.operator.providers.suspend(suspended.id);
    const old = await t.provider.capabilities.publish(restInput({ category }));
    await t.provider.capabilities.deprecate(old.capability.id);
    expect(ids(await t.workspace.discovery.search({ category }))).toEqual([live.capability.id]);
    // the same for a seller's own key
    expect(ids(await pending.client.discovery.search({ category }))).toEqual([live.capability.id]);
  });

  it('counts only listings it could show toward the best 1000 matches: a crowd of stuffed listings hides no real one', async () => {
    const word = `zq${randomBytes(4).toString('hex')}`;
    const category = freshCategory();
    const real = await t.provider.capabilities.publish(restInput({ category, name: `${word} service`, description: 'the real one' }));
    /** 1000 listings that match the word far better than the real one (MATCH_CEILING is 1000). */
    const crowd = async (seller: { client: TestGateway['provider'] }, over: Partial<Parameters<typeof restInput>[0]>) => {
      for (let i = 0; i < MATCH_CEILING; i += 50) {
        await Promise.all(Array.from({ length: 50 }, () => seller.client.capabilities.publish(restInput({ name: `${word} ${word} ${word}`, description: `${word} ${word}`, tags: [word], ...over }))));
      }
    };
    // an unverified seller's listings are not shown, so they cannot take the real one's place
    await crowd(await t.newProvider({ verified: false }), { category });
    expect(ids(await t.workspace.discovery.search({ query: word }))).toEqual([real.capability.id]);
    // neither can listings the filters leave out (another category), though their seller is verified
    await crowd(await t.newProvider(), { category: freshCategory() });
    expect(ids(await t.workspace.discovery.search({ query: word, category }))).toEqual([real.capability.id]);
  }, 60_000);

  it('treats a price ceiling above the largest amount as no ceiling, and refuses one that is not an amount', async () => {
    const category = freshCategory();
    const { capability } = await t.provider.capabilities.publish(restInput({ category }));
    expect(ids(await t.workspace.discovery.search({ category, maxPriceMinor: '9999999999999999' }))).toEqual([capability.id]);
    await expectRefused(t.workspace.discovery.search({ category, maxPriceMinor: '1.5' }), 400, 'VALIDATION_FAILED');
  });

  it('counts advertised latencies under 1 ms as 1 ms when it compares them', async () => {
    const category = freshCategory();
    const zero = await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 0 }));
    const half = await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 0.5 }));
    const two = await t.provider.capabilities.publish(restInput({ category, latencyP50Ms: 2 }));
    const latency = new Map((await t.workspace.discovery.search({ category })).map((r) => [r.capability.id, r.scoreBreakdown.latency]));
    expect([latency.get(zero.capability.id), latency.get(half.capability.id), latency.get(two.capability.id)]).toEqual([1, 1, 0.5]);
  });

  it('is open to provider keys too (discovery:read), and refuses a key without the scope', async () => {
    const category = freshCategory();
    const { capability } = await t.provider.capabilities.publish(restInput({ category, address: packageAddress(), endpoint: undefined, protocol: 'mcp', toolName: 't' }));
    expect(ids(await t.provider.discovery.search({ category }))).toEqual([capability.id]);
    const { apiKey } = await t.workspace.keys.create({ scopes: ['wallets:read'] });
    await expectRefused(t.client(apiKey.key).discovery.search({ category }), 403, 'FORBIDDEN');
  });
});
