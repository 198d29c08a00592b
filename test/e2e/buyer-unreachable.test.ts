/**
 * The buyer when a seller gives no answer: before the proof (nothing charged) and after it (the
 * call may be held), each an AgentpayError SELLER_UNREACHABLE that says which, with the network
 * error as its cause. Real HTTPS gateway, a real node:http seller on 127.0.0.1.
 */
import http from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentpayError, createBuyer } from '../../packages/sdk/src/buyer/index.js';
import { paid } from '../../packages/sdk/src/seller/node.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';
import { expectLedgerConsistent, fundedAgent, publish, type AgentWallet } from './helpers.js';

const LIMIT_MS = 300;

/** A loopback port nobody listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

let t: TestGateway;
let seller: http.Server;
let sellerUrl = '';

beforeAll(async () => {
  t = await startTestGateway();
  const capabilityId = await publish(t, '100');
  // authorizes the call, then drops the connection without an answer
  seller = http.createServer(paid((req) => {
    req.socket.destroy();
  }, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, capabilityId, handlerTimeoutMs: LIMIT_MS }));
  await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
  sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
});
afterAll(async () => {
  seller?.closeAllConnections();
  await new Promise((r) => seller?.close(r));
  await t?.close();
});

const buyerFor = (a: AgentWallet) => createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem });
const untouched = { balanceMinor: '1000', availableMinor: '1000', currency: 'USD' };

describe('buyer.fetch to a seller that gives no answer', () => {
  it('before the proof: SELLER_UNREACHABLE with paid false, the network error as cause, nothing charged', async () => {
    const a = await fundedAgent(t, '1000');
    const url = `http://127.0.0.1:${await closedPort()}/forecast`;
    const e = await buyerFor(a).fetch(url).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'SELLER_UNREACHABLE', status: undefined, details: { url, paid: false } });
    expect((e as Error).message).toContain('nothing was charged');
    expect((e as Error).cause).toBeInstanceOf(TypeError); // fetch's own failure, kept
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual(untouched);
  });

  it('after the proof: SELLER_UNREACHABLE with paid true saying a hold may last until the authorization expires (no number: the gateway sets it); the seller\'s deadline then releases it', async () => {
    const a = await fundedAgent(t, '1000');
    const e = await buyerFor(a).fetch(`${sellerUrl}/forecast`).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AgentpayError);
    expect(e).toMatchObject({ code: 'SELLER_UNREACHABLE', status: undefined, details: { url: `${sellerUrl}/forecast`, paid: true } });
    expect((e as Error).message).toMatch(/after the payment proof was sent.*until the seller settles it or the gateway releases it when the authorization expires/);
    expect((e as Error).message).not.toMatch(/\d+ (seconds|minutes|hours)/);
    expect((e as Error).cause).toBeDefined();

    // the seller fails the call at handlerTimeoutMs: refunded, no hold left
    await until(async () => (await t.workspace.wallets.balance(a.walletId)).availableMinor === '1000', 'the hold released at the seller deadline');
    expect(await t.workspace.wallets.balance(a.walletId)).toEqual(untouched);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
