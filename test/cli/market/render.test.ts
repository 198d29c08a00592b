/**
 * What a person sees on a terminal (the binary tests run piped, so they see JSON), and
 * how publish inputs are assembled from a file and flags: plain functions, no gateway.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyText, failureNote, type BuyResult } from '../../../src/cli/buy.js';
import { buildPatch, buildPublishInput, capabilityDetailText, publishedText } from '../../../src/cli/capabilities.js';
import { receiptPageText } from '../../../src/cli/receipts.js';
import { searchTable } from '../../../src/cli/search.js';
import { startProgress } from '../../../src/cli/spinner.js';
import type { Capability, CapabilityVersion, DiscoveryResult, Receipt } from '../../../packages/sdk/src/types.js';

const savedCi = process.env.CI;
beforeAll(() => {
  process.env.CI = '1'; // never prompt: missing values must be refused naming their flag
});
afterAll(() => {
  if (savedCi === undefined) delete process.env.CI;
  else process.env.CI = savedCi;
});

const fixture = (name: string) => join(import.meta.dirname, '../../../fixtures/capabilities', `${name}.json`);

const capability: Capability = {
  id: 'cap_1', providerId: 'prv_1', name: 'Summarize', description: 'summaries', protocol: 'rest', priceMinor: '25', currency: 'USD',
  category: 'text', tags: ['nlp'], schema: null, latencyP50Ms: 800, status: 'active', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
};
const version: CapabilityVersion = { id: 'cv_1', endpoint: 'https://s.example.com', address: { kind: 'url', url: 'https://s.example.com' }, version: '1', hash: `sha256:${'a'.repeat(64)}` };
const receipt = (id: string, status: Receipt['status'] = 'success'): Receipt => ({
  id, transactionId: 'txn_1', providerId: 'prv_1', consumerId: 'wal_1', capabilityId: 'cap_1', amount: { amountMinor: '100', currency: 'USD' },
  responseHash: status === 'success' ? `sha256:${'b'.repeat(64)}` : null, status, timestamp: '2026-01-01T00:00:00.000Z', signature: 'sig', signingKeyId: 'sk_1',
});

describe('publish and capability text', () => {
  it('leads with the capability id and the version hash', () => {
    const text = publishedText({ capability, version });
    expect(text.split('\n')[0]).toBe(`Published cap_1 (version 1, sha256:${'a'.repeat(64)}).`);
    expect(text).toMatch(/price:\s+25 USD minor units per call/);
  });

  it('says when an address is hidden because the capability is not discoverable', () => {
    const text = capabilityDetailText({ capability, provider: { id: 'prv_1', name: 'Acme', verified: false, reputation: 0 }, discoverable: false });
    expect(text).toMatch(/discoverable:\s+no/);
    expect(text).toMatch(/address:\s+hidden \(not discoverable\)/);
    expect(text).toContain('Acme (prv_1, unverified)');
  });
});

describe('buildPublishInput', () => {
  it('takes the file as is, with flags overriding its fields', async () => {
    const input = await buildPublishInput({ file: fixture('rest-summarize'), price: '30', tags: 'a, b,' });
    expect(input).toMatchObject({ name: 'Summarize text', protocol: 'rest', priceMinor: '30', tags: ['a', 'b'], endpoint: 'https://summarize.example.com/v1/summarize', currency: 'USD' });
    expect(input.schema).toMatchObject({ required: ['text'] });
  });

  it("replaces the file's address with the one the flags give", async () => {
    const input = await buildPublishInput({ file: fixture('mcp-weather'), packageArgs: '-y @x/weather@1.0.0', packageVersion: '1.0.0' });
    expect(input.address).toEqual({ kind: 'package', command: 'npx', args: ['-y', '@x/weather@1.0.0'], version: '1.0.0' });
    expect(input.endpoint).toBeUndefined();
  });

  it('refuses an endpoint and a package together, a decimal or numeric price, and a file that is not JSON', async () => {
    await expect(buildPublishInput({ file: fixture('rest-summarize'), endpoint: 'https://x', packageArgs: 'x@1' })).rejects.toThrow('either --endpoint or the --package-* flags');
    await expect(buildPublishInput({ file: fixture('rest-summarize'), price: '0.25' })).rejects.toThrow('integer minor units: "150" means 1.50');
    await expect(buildPublishInput({ file: join(import.meta.dirname, 'render.test.ts') })).rejects.toThrow('is not valid JSON');
  });

  it('without a terminal, names the first missing required flag', async () => {
    await expect(buildPublishInput({ name: 'x', description: 'y' })).rejects.toMatchObject({ code: 'USAGE', details: { flag: '--protocol' } });
  });

  it('buildPatch sends only what was given and refuses an empty patch', () => {
    expect(buildPatch({ price: '150', latencyP50Ms: 0 })).toEqual({ priceMinor: '150', latencyP50Ms: 0 });
    expect(() => buildPatch({})).toThrow('nothing to change');
  });
});

describe('search table', () => {
  it('shows id, name, price, protocol, provider and score, best first as given', () => {
    const results = [0.9, 0.4].map((score, i): DiscoveryResult => ({
      capability: { ...capability, id: `cap_${i}`, name: `Cap ${i}` },
      version: { endpoint: version.endpoint, address: version.address, version: '1' },
      provider: { id: 'prv_1', name: 'Acme', verified: true, reputation: 0.8 },
      score,
      scoreBreakdown: { relevance: 1, price: 1, latency: 1, reputation: 1, verification: 1 },
    }));
    const lines = searchTable(results).split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual(['ID', 'NAME', 'PRICE', 'PROTOCOL', 'PROVIDER', 'SCORE']);
    expect(lines[1]!.split(/\s{2,}/)).toEqual(['cap_0', 'Cap 0', '0.25 USD', 'rest', 'Acme (verified)', '0.900']);
    expect(lines[2]).toContain('cap_1');
    expect(searchTable([])).toBe('(no capabilities match)');
  });
});

describe('receipts list text', () => {
  it('ends a full page with nextCursor and the command for the next page', () => {
    const text = receiptPageText({ receipts: [receipt('rcp_2'), receipt('rcp_1')], nextCursor: 'rcp_1' }, 2);
    expect(text.split('\n')).toHaveLength(4);
    expect(text).toContain('nextCursor: rcp_1  (next page: agentpay receipts list --after rcp_1 --limit 2)');
    expect(receiptPageText({ receipts: [receipt('rcp_1')] }, undefined)).not.toContain('nextCursor');
  });
});

describe('buy text', () => {
  const result = (over: Partial<BuyResult>): BuyResult => ({ url: 'https://s.example.com', capabilityId: 'cap_1', status: 200, ok: true, body: { sunny: true }, receipt: receipt('rcp_1'), ...over });

  it('prints the body, then the verified receipt', () => {
    const text = buyText(result({}));
    expect(text.startsWith('{\n  "sunny": true\n}\n')).toBe(true);
    expect(text).toContain('receipt (signature and response hash verified):');
    expect(text).toMatch(/id:\s+rcp_1/);
    expect(failureNote(result({}))).toBeUndefined();
  });

  it('explains a failed, refunded call', () => {
    expect(failureNote(result({ status: 503, ok: false, receipt: receipt('rcp_9', 'failed') }))).toBe('The seller answered 503; the call failed and the hold was refunded (receipt rcp_9): nothing was paid.');
  });

  it('says nothing was paid when the seller refused the call without charging (no receipt)', () => {
    expect(failureNote(result({ status: 400, ok: false, receipt: null }))).toBe('The seller answered 400; nothing was paid.');
  });
});

describe('startProgress', () => {
  const stream = (isTTY: boolean) => {
    const writes: string[] = [];
    return { writes, s: { isTTY, write: (c: string) => writes.push(c) } as unknown as NodeJS.WriteStream };
  };

  it('draws on a terminal and clears its line when stopped', () => {
    const { writes, s } = stream(true);
    const p = startProgress('calling', s);
    p.update('paying 100 USD minor units');
    p.stop();
    p.stop();
    expect(writes[0]).toContain('calling');
    expect(writes.some((w) => w.includes('paying 100 USD minor units'))).toBe(true);
    expect(writes.at(-1)).toBe('\r\x1b[2K');
    expect(writes.filter((w) => w === '\r\x1b[2K')).toHaveLength(1);
  });

  it('writes nothing when stderr is not a terminal', () => {
    const { writes, s } = stream(false);
    const p = startProgress('calling', s);
    p.update('x');
    p.stop();
    expect(writes).toEqual([]);
  });
});
