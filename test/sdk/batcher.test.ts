/**
 * GatewayBatcher, the seller middleware's way to the gateway, against the real HTTPS test
 * gateway: operations that find a free slot go alone on their own route, those that wait
 * share one batch request, and each settles on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import { GatewayBatcher } from '../../packages/sdk/src/seller/batcher.js';
import type { Challenge } from '../../packages/sdk/src/types.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publish, recordingFetch } from '../e2e/helpers.js';

let t: TestGateway;
let capabilityId: string;
beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
});
afterAll(async () => {
  await t?.close();
});

/** A client whose requests are recorded by path, and whose batch requests fail while `failBatches` is set. */
function recordingClient() {
  const state = { failBatches: false, noBatchRoute: false };
  const { fetch, log } = recordingFetch(t.ca, ({ operations }) => {
    if (operations === undefined) return undefined;
    if (state.failBatches) throw new TypeError('fetch failed');
    // what a gateway older than the batch route answers
    if (state.noBatchRoute) return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route POST /v1/x402/batch', details: {} } }), { status: 404, headers: { 'content-type': 'application/json' } });
    return undefined;
  });
  return { client: new AgentpayClient({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, fetch }), log, state };
}

describe('GatewayBatcher', () => {
  it('sends an operation alone while a slot is free, and the ones that waited together in one batch', async () => {
    const { client, log } = recordingClient();
    const batcher = new GatewayBatcher(client, { maxInFlight: 1 });
    const first = batcher.run({ op: 'challenge', capabilityId });
    const waiting = Array.from({ length: 5 }, () => batcher.run({ op: 'challenge', capabilityId }));
    const bodies = (await Promise.all([first, ...waiting])) as Array<{ challenge: Challenge }>;
    expect(log).toEqual([{ path: '/v1/x402/challenge' }, { path: '/v1/x402/batch', operations: 5 }]);
    expect(new Set(bodies.map((b) => b.challenge.nonce)).size).toBe(6);
    for (const b of bodies) expect(b.challenge).toMatchObject({ capabilityId, amountMinor: '100' });
  });

  it('rejects each operation with its own refusal, and all of a batch with the error of a request that failed as a whole', async () => {
    const { client, log, state } = recordingClient();
    const batcher = new GatewayBatcher(client, { maxInFlight: 1, maxOperations: 2 });
    const first = batcher.run({ op: 'challenge', capabilityId });
    const mixed = [batcher.run({ op: 'challenge', capabilityId: 'cap_unknown' }), batcher.run({ op: 'challenge', capabilityId })];
    const [, unknown, ok] = await Promise.allSettled([first, ...mixed]);
    expect(unknown).toMatchObject({ status: 'rejected', reason: { code: 'CAPABILITY_NOT_FOUND', status: 404 } });
    expect((unknown as PromiseRejectedResult).reason).toBeInstanceOf(AgentpayError);
    expect(ok?.status).toBe('fulfilled');

    state.failBatches = true;
    const lead = batcher.run({ op: 'challenge', capabilityId });
    const doomed = [batcher.run({ op: 'challenge', capabilityId }), batcher.run({ op: 'challenge', capabilityId }), batcher.run({ op: 'challenge', capabilityId })];
    const outcomes = await Promise.allSettled([lead, ...doomed]);
    // at most maxOperations per request: the three that waited went as a batch of 2, then 1 alone
    expect(log.slice(-3)).toEqual([{ path: '/v1/x402/challenge' }, { path: '/v1/x402/batch', operations: 2 }, { path: '/v1/x402/challenge' }]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    for (const o of outcomes.slice(1, 3)) expect(o).toMatchObject({ reason: { name: 'AgentpayError', code: 'GATEWAY_UNAVAILABLE', status: undefined } });
  });

  it('falls back to one request per operation, for good, when the gateway has no batch route', async () => {
    const { client, log, state } = recordingClient();
    state.noBatchRoute = true;
    const batcher = new GatewayBatcher(client, { maxInFlight: 1 });
    const first = [batcher.run({ op: 'challenge', capabilityId }), batcher.run({ op: 'challenge', capabilityId }), batcher.run({ op: 'challenge', capabilityId })];
    expect((await Promise.allSettled(first)).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(log).toEqual([{ path: '/v1/x402/challenge' }, { path: '/v1/x402/batch', operations: 2 }, { path: '/v1/x402/challenge' }, { path: '/v1/x402/challenge' }]);
    const later = await Promise.all([batcher.run({ op: 'challenge', capabilityId }), batcher.run({ op: 'challenge', capabilityId })]);
    expect(later).toHaveLength(2);
    expect(log.slice(4)).toEqual([{ path: '/v1/x402/challenge' }, { path: '/v1/x402/challenge' }]);
  });
});
