/**
 * What the seller middleware refuses to sell: a handler past its time limit (504, refund,
 * a provider error toward the breaker) and HEAD requests on paid routes (405, nothing
 * charged), on both HTTP adapters and for paid MCP tools, against the real HTTPS gateway.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { encodeHeader, PAYMENT_HEADER } from '../../packages/sdk/src/protocol.js';
import { payingCallTool } from '../../packages/sdk/src/mcp/buyer.js';
import { createSellerPayments, registerPaidTool } from '../../packages/sdk/src/mcp/seller.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { paid } from '../../packages/sdk/src/seller/node.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { signProof } from '../payments/helpers.js';
import { expectLedgerConsistent, fundedAgent, publish } from './helpers.js';

const LIMIT_MS = 300;
const SLOW_MS = 1200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestGateway;
let capabilityId: string;
let fastifySeller: FastifyInstance;
let nodeSeller: http.Server;
const urls: Record<'fastify' | 'node', string> = { fastify: '', node: '' };
/** handler runs that reached their end, per adapter (the slow ones finish after their timeout) */
const finished = { fastify: 0, node: 0 };

beforeAll(async () => {
  t = await startTestGateway();
  capabilityId = await publish(t, '100');
  const options = { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, handlerTimeoutMs: LIMIT_MS };

  fastifySeller = Fastify();
  await fastifySeller.register(agentpaySeller, options);
  fastifySeller.get('/slow', async () => {
    await sleep(SLOW_MS);
    finished.fastify++;
    return { late: true };
  });
  fastifySeller.get('/fast', async () => ({ fast: true }));
  await fastifySeller.listen({ host: '127.0.0.1', port: 0 });
  urls.fastify = `http://127.0.0.1:${(fastifySeller.server.address() as AddressInfo).port}`;

  nodeSeller = http.createServer(paid(async (req, res) => {
    if (req.url === '/slow') {
      res.write('{"late":');
      await sleep(SLOW_MS);
      res.end('true}'); // after the timeout: must be dropped, not crash the server
      finished.node++;
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end('{"fast":true}');
  }, options));
  await new Promise<void>((r) => nodeSeller.listen(0, '127.0.0.1', r));
  urls.node = `http://127.0.0.1:${(nodeSeller.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await fastifySeller?.close();
  await new Promise((r) => nodeSeller?.close(r));
  await t?.close();
});

describe.each(['fastify', 'node'] as const)('the %s adapter', (adapter) => {
  it('answers 504 HANDLER_TIMEOUT when the handler outlives handlerTimeoutMs, refunds the buyer and counts a provider error', async () => {
    const a = await fundedAgent(t, '1000');
    const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
    const before = finished[adapter];
    const res = await buyer.fetch(`${urls[adapter]}/slow`);
    // answered in the handler's place: a 200 would mean the response waited for the handler
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { code: 'HANDLER_TIMEOUT', details: { timeoutMs: LIMIT_MS } } });
    expect(res.receipt).toMatchObject({ status: 'failed', capabilityId });
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '1000', availableMinor: '1000', currency: 'USD' });
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ paused: false, consecutiveFailures: 1 });

    // the handler ends later: its output goes nowhere, and the seller keeps serving
    await until(() => finished[adapter] !== before, 'the timed-out handler to end');
    expect(finished[adapter]).toBe(before + 1);
    const next = await buyer.fetch(`${urls[adapter]}/fast`);
    expect(next.status).toBe(200);
    expect(next.receipt?.status).toBe('success');
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('answers HEAD on a paid route 405 without a challenge, and a proof sent with HEAD is neither used nor charged', async () => {
    const bare = await fetch(`${urls[adapter]}/fast`, { method: 'HEAD' });
    expect(bare.status).toBe(405);
    expect(bare.headers.get('allow')).toBe('GET');

    const a = await fundedAgent(t, '100');
    const challenge = await t.provider.payments.challenge(capabilityId);
    const proofHeader = encodeHeader(signProof(challenge, a));
    const head = await fetch(`${urls[adapter]}/fast`, { method: 'HEAD', headers: { [PAYMENT_HEADER]: proofHeader } });
    expect(head.status).toBe(405);
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '100', availableMinor: '100', currency: 'USD' });
    // the same proof still pays for one GET
    const get = await fetch(`${urls[adapter]}/fast`, { headers: { [PAYMENT_HEADER]: proofHeader } });
    expect(get.status).toBe(200);
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('0');
  });
});

describe('a paid MCP tool', () => {
  it('past handlerTimeoutMs is a tool error: failed receipt, buyer refunded, a provider error for the breaker', async () => {
    const seller = createSellerPayments({ gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, handlerTimeoutMs: LIMIT_MS });
    const server = new McpServer({ name: 'slow-tools', version: '1.0.0' });
    let ran = 0;
    registerPaidTool(server, 'slow', { seller, capabilityId, description: 'takes too long' }, async () => {
      await sleep(SLOW_MS);
      ran++;
      return { content: [{ type: 'text', text: 'too late' }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test-buyer', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const a = await fundedAgent(t, '500');
      const buyer = createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
      const { result, receipt } = await payingCallTool(client, buyer, { name: 'slow', arguments: {} });
      expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining(`within ${LIMIT_MS} ms`) }] });
      expect(ran).toBe(0); // the answer did not wait for the tool
      expect(receipt).toMatchObject({ status: 'failed' });
      expect(await t.workspace.wallets.balance(a.walletId)).toEqual({ balanceMinor: '500', availableMinor: '500', currency: 'USD' });
      expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ consecutiveFailures: 1 });
      await expectLedgerConsistent(t.workspace, a.walletId);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
