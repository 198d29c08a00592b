/** Builders and assertions shared by the marketplace tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AgentpayError, type CapabilityAddress, type PublishCapabilityInput } from '../../packages/sdk/src/client/index.js';
import type { TestGateway } from '../helpers/gateway.js';

let n = 0;

/** A valid REST capability; every call gets its own name and endpoint. */
export function restInput(over: Partial<PublishCapabilityInput> = {}): PublishCapabilityInput {
  n += 1;
  return {
    name: `Test capability ${n}`,
    description: 'does a test thing',
    protocol: 'rest',
    priceMinor: '100',
    category: 'testing',
    endpoint: `https://seller.example.com/cap/${n}`,
    ...over,
  };
}

/** A valid package address pinned to `version`. */
export const packageAddress = (pkg = '@example/tool', version = '1.2.3'): CapabilityAddress => ({ kind: 'package', command: 'npx', args: ['-y', `${pkg}@${version}`], version });

/** The sample capabilities under fixtures/capabilities/. */
export function sampleCapability(file: 'rest-summarize' | 'mcp-weather' | 'package-pdf-tools'): PublishCapabilityInput {
  return JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/capabilities', `${file}.json`), 'utf8')) as PublishCapabilityInput;
}

/** The AgentpayError a call was refused with (fails if it succeeded). */
export async function refusal(p: Promise<unknown>): Promise<AgentpayError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AgentpayError) return e;
    throw e;
  }
  throw new Error('expected the gateway to refuse, but the call succeeded');
}

/** Refused with this status and code; with `field`, the message and details name it. */
export async function expectRefused(p: Promise<unknown>, status: number, code: string, field?: string): Promise<AgentpayError> {
  const e = await refusal(p);
  expect({ status: e.status, code: e.code }, e.message).toEqual({ status, code });
  if (field !== undefined) {
    expect(e.details.field, e.message).toBe(field);
    expect(e.message).toContain(field);
  }
  return e;
}

/** Ratings straight into the store: the rating route belongs to the payments work and needs receipts. */
export async function addRatings(t: TestGateway, providerId: string, stars: number[]): Promise<void> {
  const ctx = t.gw.services.ctx;
  await ctx.store.tx(async (r) => {
    for (const rating of stars) {
      const id = ctx.ids.next('transaction');
      await r.ratings.insert({ id: `rat_${id}`, providerId, transactionId: id, walletId: 'wal_rater', workspaceId: 'wsp_rater', agentId: null, rating, createdAt: ctx.clock.now() });
    }
  });
}
