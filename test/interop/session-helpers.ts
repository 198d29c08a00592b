/**
 * What the stock-client session tests share (x402-session.test.ts, mppx-session.test.ts): a
 * fastify seller over HTTPS on 127.0.0.1 (the test gateway's certificate) whose middleware takes
 * sessions, a fetch that trusts the test CA, and the ledger check after the sessions are closed.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { MemoryVoucherStore } from '../../packages/sdk/src/seller/sessions.js';
import type { Session } from '../../packages/sdk/src/contract/sessions.js';
import { verifyLedger } from '../../src/domain/wallets/verify.js';
import type { TestGateway } from '../helpers/gateway.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { expectLedgerConsistent, platformRevenue, publish } from '../e2e/helpers.js';

export const PRICE = 10n;
/** 3% rounded down over what a session paid in all */
export const fee = (n: bigint) => (n * 300n) / 10_000n;

export interface SessionSeller {
  app: FastifyInstance;
  url: string;
  capabilityId: string;
  /** the paid calls the handler answered */
  handled: { calls: number };
  fetch: typeof fetch;
  /** where the seller keeps its vouchers (a test may lose them, as a restart with a memory store would) */
  store: MemoryVoucherStore;
}

/** GET /forecast/:city (500 with ?fail=1), priced PRICE, sessions on with claims every `claimEvery` vouchers. */
export async function startSessionSeller(t: TestGateway, name: string, claimEvery = 10): Promise<SessionSeller> {
  const handled = { calls: 0 };
  const capabilityId = await publish(t, PRICE.toString(), name);
  const app = Fastify({ https: { cert: t.gw.tls!.cert, key: t.gw.tls!.key } });
  const store = new MemoryVoucherStore();
  await app.register(agentpaySeller, { gatewayUrl: t.baseUrl, apiKey: t.creds.provider.apiKey, ca: t.ca, onError: () => {}, capabilityId, sessions: { claimEvery, store } });
  app.get('/forecast/:city', async (req, reply) => {
    handled.calls++;
    if ((req.query as { fail?: string }).fail) return reply.code(500).send({ error: 'the forecast service is down' });
    return { city: (req.params as { city: string }).city, sunny: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: `https://127.0.0.1:${(app.server.address() as AddressInfo).port}`, capabilityId, handled, fetch: trustingFetch(t.ca), store };
}

/**
 * A fetch that trusts the test CA and takes what the stock clients send: a Request (its method,
 * headers and body handed over as they are), or a URL and init.
 */
export function trustingFetch(ca: string): typeof fetch {
  const dispatcher = new Agent({ connect: { ca }, connections: 16 });
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    if (typeof Request !== 'undefined' && input instanceof Request) {
      const body = input.body ? new Uint8Array(await input.arrayBuffer()) : undefined;
      return undiciFetch(input.url, { method: input.method, headers: Object.fromEntries(input.headers as unknown as Iterable<[string, string]>), ...(body ? { body } : {}), ...(init as object), dispatcher } as never);
    }
    return undiciFetch(input as never, { ...(init as object), dispatcher } as never);
  }) as unknown as typeof fetch;
}

export const balanceOf = async (t: TestGateway, walletId: string) => {
  const b = await t.workspace.wallets.balance(walletId);
  return { balance: BigInt(b.balanceMinor), held: BigInt(b.balanceMinor) - BigInt(b.availableMinor) };
};
export const sellerBalance = async (t: TestGateway) => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);
export const sessionsOf = async (t: TestGateway, walletId: string): Promise<Session[]> => (await t.workspace.sessions.list({ limit: 100 })).sessions.filter((s) => s.walletId === walletId);

export async function snapshot(t: TestGateway, walletId: string) {
  return { buyer: (await balanceOf(t, walletId)).balance, seller: await sellerBalance(t), platform: await platformRevenue(t) };
}

/** The closed sessions moved `paid` from the buyer: the seller got it less each session's fee, the platform the fees, nothing held. */
export async function expectSettled(t: TestGateway, walletId: string, before: Awaited<ReturnType<typeof snapshot>>, paid: bigint): Promise<void> {
  const sessions = await sessionsOf(t, walletId);
  const fees = sessions.reduce((sum, s) => sum + fee(BigInt(s.claimedMinor)), 0n);
  expect(sessions.reduce((sum, s) => sum + BigInt(s.claimedMinor), 0n)).toBe(paid);
  for (const s of sessions) {
    expect(s.status).toBe('closed');
    expect(s.heldMinor).toBe('0');
    expect(s.feeMinor).toBe(fee(BigInt(s.claimedMinor)).toString());
  }
  expect(await balanceOf(t, walletId)).toEqual({ balance: before.buyer - paid, held: 0n });
  expect(await sellerBalance(t)).toBe(before.seller + paid - fees);
  expect(await platformRevenue(t)).toBe(before.platform + fees);
  await expectLedgerConsistent(t.workspace, walletId);
  expect((await verifyLedger(t.gw.store)).problems).toEqual([]);
}
