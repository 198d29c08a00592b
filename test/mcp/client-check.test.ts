/**
 * The client-side output check of a paid tool (src/sdk/mcp/client-check.ts) as a stateless
 * streamable-HTTP server uses it: paidToolCallback is built anew per request, with output schema
 * objects that are new each time but the same schema. Compiled only when a structured result is
 * checked, once per distinct schema, and the cache stays bounded. The seller here is a stand-in
 * that authorizes every call and records the settlement (the gateway plays no part in the check).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { SellerPayments } from '../../packages/sdk/src/mcp/seller.js';
import { paidToolCallback } from '../../packages/sdk/src/mcp/seller.js';
import { CLIENT_CHECKS_MAX } from '../../packages/sdk/src/mcp/client-check.js';

const settled: { isError: boolean }[] = [];
const seller = {
  handlerTimeoutMs: 0,
  admit: async () => ({ kind: 'admitted', call: {} }),
  settle: async (_call: unknown, outcome: { isError: boolean }) => {
    settled.push({ isError: outcome.isError });
    return {};
  },
} as unknown as SellerPayments;
const extra = { _meta: { 'agentpay/payment': { proof: 'stand-in' } } };

/** The schema as a request builds it: new objects every time, the same schema. */
const freshStats = () => ({ words: z.number().int(), readingMinutes: z.number() });
const stats = (words: unknown) => async () => ({ content: [{ type: 'text' as const, text: 'stats' }], structuredContent: { words, readingMinutes: 0.1 } });

let compiles: MockInstance;
beforeEach(() => {
  settled.length = 0;
  compiles = vi.spyOn(AjvJsonSchemaValidator.prototype, 'getValidator');
});
afterEach(() => compiles.mockRestore());

describe('paidToolCallback output checks', () => {
  it('compiles nothing when the callback is built, nor for calls that return no structured result to check', async () => {
    for (let i = 0; i < 50; i++) paidToolCallback(stats(1) as never, { seller, capabilityId: 'cap_x', outputSchema: freshStats() });
    const failing = paidToolCallback((async () => ({ content: [{ type: 'text', text: 'no' }], isError: true })) as never, { seller, capabilityId: 'cap_x', outputSchema: freshStats() });
    expect(await (failing as (e: unknown) => Promise<{ isError?: boolean }>)(extra)).toMatchObject({ isError: true });
    expect(compiles).not.toHaveBeenCalled();
  });

  it('compiles one validator for the same schema from fresh objects across many built callbacks, and still refuses what it refuses', async () => {
    for (let i = 0; i < 200; i++) {
      const shape = { words: z.number().int().describe('cached across requests'), readingMinutes: z.number() };
      const cb = paidToolCallback(stats(i) as never, { seller, capabilityId: 'cap_x', outputSchema: shape }) as (e: unknown) => Promise<{ isError?: boolean }>;
      expect((await cb(extra)).isError).toBeUndefined();
    }
    expect(compiles).toHaveBeenCalledTimes(1);

    // a result zod accepts but the advertised schema refuses (an extra key): still failed, with the cached validator
    const extraKey = async () => ({ content: [{ type: 'text', text: 'x' }], structuredContent: { words: 1, readingMinutes: 0.1, source: 'x' } });
    const cb = paidToolCallback(extraKey as never, { seller, capabilityId: 'cap_x', outputSchema: { words: z.number().int().describe('cached across requests'), readingMinutes: z.number() } });
    expect(await (cb as (e: unknown) => Promise<unknown>)(extra)).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/advertised output schema/) }] });
    expect(compiles).toHaveBeenCalledTimes(1);
    expect(settled.filter((s) => s.isError)).toHaveLength(1);
  });

  it(`keeps at most ${CLIENT_CHECKS_MAX} compiled schemas: the least recently used is compiled again after that many others`, async () => {
    const check = async (n: number) => {
      const shape = { [`field${n}`]: z.number() };
      const cb = paidToolCallback((async () => ({ content: [], structuredContent: { [`field${n}`]: n } })) as never, { seller, capabilityId: 'cap_x', outputSchema: shape });
      expect((await (cb as (e: unknown) => Promise<{ isError?: boolean }>)(extra)).isError).toBeUndefined();
    };
    await check(-1);
    expect(compiles).toHaveBeenCalledTimes(1);
    await check(-1);
    expect(compiles).toHaveBeenCalledTimes(1); // cached
    for (let n = 0; n < CLIENT_CHECKS_MAX; n++) await check(n);
    expect(compiles).toHaveBeenCalledTimes(1 + CLIENT_CHECKS_MAX);
    await check(-1); // dropped to stay within the bound
    expect(compiles).toHaveBeenCalledTimes(2 + CLIENT_CHECKS_MAX);
  });

  it("fails a paid call as a provider error (refunded) when the outputSchema cannot be advertised as JSON Schema", async () => {
    const cb = paidToolCallback((async () => ({ content: [], structuredContent: { at: new Date(0) } })) as never, { seller, capabilityId: 'cap_x', outputSchema: { at: z.date() } });
    expect(await (cb as (e: unknown) => Promise<unknown>)(extra)).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/outputSchema cannot be converted/) }] });
    expect(settled).toEqual([{ isError: true }]);
  });
});
