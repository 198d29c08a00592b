/**
 * The "Refusals while buying" table from the buyer's side, over real HTTPS: each code
 * arrives as an AgentpayError, and in every case but the last no money moves and (where
 * the refusal comes before authorization) the seller's handler never runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import { AppError } from '../../src/core/errors.js';
import { PaymentService, type PurchasePolicy } from '../../src/domain/payments/service.js';
import { createBuyer, type BuyerOptions } from '../../packages/sdk/src/buyer/index.js';
import { encodeHeader, type PriceChallenge } from '../../packages/sdk/src/protocol.js';
import { agentpaySeller } from '../../packages/sdk/src/seller/fastify.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerConsistent, fetchTrusting, fundedAgent, publish, startFastifySeller, type AgentWallet, type RunningSeller } from './helpers.js';

let t: TestGateway;
let clock: ManualClock;
let seller: RunningSeller;
let caps: { price100: string; price1: string };
let sellerFetch: typeof fetch;

beforeAll(async () => {
  clock = new ManualClock(Date.now());
  t = await startTestGateway({ clock });
  caps = { price100: await publish(t, '100'), price1: await publish(t, '1') };
  seller = await startFastifySeller(t, caps);
  sellerFetch = fetchTrusting(t.ca);
});
afterAll(async () => {
  await seller?.close();
  await t?.close();
});

const buyerFor = (a: Pick<AgentWallet, 'walletId' | 'privateKeyPem'>, extra: Partial<BuyerOptions> = {}) =>
  createBuyer({ gatewayUrl: t.baseUrl, ca: t.ca, walletId: a.walletId, privateKeyPem: a.privateKeyPem, fetch: sellerFetch, ...extra });

const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable('the purchase should have been refused'), (e: unknown) => e as { code: string; status?: number; body: Record<string, unknown> });

/** Runs `fn` and checks that the seller's handler never ran and the wallet did not change. */
async function expectNothingCharged(a: AgentWallet, fn: () => Promise<void>, opts: { proofSent: boolean }): Promise<void> {
  const [balance, handled, payments] = [await t.workspace.wallets.balance(a.walletId), { ...seller.log.handled }, seller.log.paymentsReceived];
  await fn();
  expect(await t.workspace.wallets.balance(a.walletId)).toEqual(balance);
  expect(seller.log.handled).toEqual(handled);
  expect(seller.log.paymentsReceived - payments).toBe(opts.proofSent ? 1 : 0);
  await expectLedgerConsistent(t.workspace, a.walletId);
}

describe('client-side refusals (nothing signed, nothing sent)', () => {
  it('refuses a price above maxPriceMinor with PRICE_ABOVE_CLIENT_LIMIT before signing', async () => {
    const a = await fundedAgent(t, '1000');
    await expectNothingCharged(a, async () => {
      const e = await refusal(buyerFor(a, { maxPriceMinor: '99' }).fetch(`${seller.url}/forecast`));
      expect(e).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99' } });
      // a per-call ceiling overrides the buyer's
      const e2 = await refusal(buyerFor(a, { maxPriceMinor: '1000' }).fetch(`${seller.url}/forecast`, { maxPriceMinor: '50' }));
      expect(e2.code).toBe('PRICE_ABOVE_CLIENT_LIMIT');
    }, { proofSent: false });
    // at the ceiling it pays
    expect((await buyerFor(a, { maxPriceMinor: '100' }).fetch(`${seller.url}/forecast`)).receipt?.status).toBe('success');
  });

  it('cancels with CANCELLED when aborted before the proof is sent, and nothing is charged', async () => {
    const a = await fundedAgent(t, '100');
    await expectNothingCharged(a, async () => {
      const already = new AbortController();
      already.abort();
      expect((await refusal(buyerFor(a).fetch(`${seller.url}/forecast`, { signal: already.signal }))).code).toBe('CANCELLED');

      const ac = new AbortController();
      const abortOn402: typeof fetch = async (input, init) => {
        const res = await sellerFetch(input, init);
        if (res.status === 402) ac.abort(); // the agent gives up while the challenge is being checked
        return res;
      };
      expect((await refusal(buyerFor(a, { fetch: abortOn402 }).fetch(`${seller.url}/forecast`, { signal: ac.signal }))).code).toBe('CANCELLED');
    }, { proofSent: false });
  });

  it('takes the AbortSignal of a Request as well: an aborted Request is CANCELLED and charges nothing', async () => {
    const a = await fundedAgent(t, '100');
    await expectNothingCharged(a, async () => {
      const already = new AbortController();
      already.abort();
      const request = new Request(`${seller.url}/forecast`, { signal: already.signal });
      expect((await refusal(buyerFor(a).fetch(request))).code).toBe('CANCELLED');

      const ac = new AbortController();
      const abortOn402: typeof fetch = async (input, init) => {
        const res = await sellerFetch(input, init);
        if (res.status === 402) ac.abort();
        return res;
      };
      expect((await refusal(buyerFor(a, { fetch: abortOn402 }).fetch(new Request(`${seller.url}/forecast`, { signal: ac.signal })))).code).toBe('CANCELLED');
    }, { proofSent: false });
  });

  it('answers GATEWAY_UNAVAILABLE, nothing signed or charged, when the buyer cannot reach its gateway for the platform key', async () => {
    const a = await fundedAgent(t, '100');
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r())); // nothing listens there now
    await expectNothingCharged(a, async () => {
      const e = await refusal(buyerFor(a, { gatewayUrl: `https://127.0.0.1:${port}` }).fetch(`${seller.url}/forecast`));
      expect(e).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', details: { gatewayUrl: `https://127.0.0.1:${port}` } });
    }, { proofSent: false });
  });

  it('lets the purchase proceed when aborted after the proof is sent', async () => {
    const a = await fundedAgent(t, '100');
    const ac = new AbortController();
    const abortOnProof: typeof fetch = async (input, init) => {
      if (new Headers(init?.headers).has('x-payment')) ac.abort();
      return sellerFetch(input, init);
    };
    const res = await buyerFor(a, { fetch: abortOnProof }).fetch(`${seller.url}/forecast`, { signal: ac.signal });
    expect(res.receipt?.status).toBe('success');
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('0');
  });

  it('refuses a challenge whose quote already expired with CHALLENGE_EXPIRED', async () => {
    const a = await fundedAgent(t, '100');
    await expectNothingCharged(a, async () => {
      const late = buyerFor(a, { now: () => clock.now() + 6 * 60_000 });
      expect((await refusal(late.fetch(`${seller.url}/forecast`))).code).toBe('CHALLENGE_EXPIRED');
    }, { proofSent: false });
  });
});

describe('a forged or altered challenge', () => {
  /** A fake seller that answers 402 with whatever challenge the test makes. */
  async function fakeSeller(challenge: () => Promise<PriceChallenge>) {
    let paymentsReceived = 0;
    const server = http.createServer((req, res) => {
      if (req.headers['x-payment']) paymentsReceived++;
      void challenge().then((c) => {
        res.writeHead(402, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'PAYMENT_REQUIRED', message: 'pay' }, challenge: c }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/thing`,
      payments: () => paymentsReceived,
      close: () => new Promise<void>((r) => server.close(() => r())),
    };
  }

  it('is refused with INVALID_CHALLENGE before anything is signed: another key, altered fields, an unknown key id', async () => {
    const a = await fundedAgent(t, '1000');
    const attacker = generateEd25519();
    const real = () => t.provider.payments.challenge(caps.price100);
    const variants: (() => Promise<PriceChallenge>)[] = [
      // signed by another key but naming the platform's key id
      async () => {
        const c = { ...(await real()), amountMinor: '5', payTo: 'wal_attacker' };
        return { ...c, signature: signObject(attacker.privateKeyPem, c as unknown as Record<string, unknown>) };
      },
      // the platform's signature, an altered price
      async () => ({ ...(await real()), amountMinor: '1' }),
      // a key id the gateway never issued
      async () => ({ ...(await real()), signingKeyId: 'sk_forged' }),
    ];
    for (const make of variants) {
      const fake = await fakeSeller(make);
      try {
        const before = await t.workspace.wallets.balance(a.walletId);
        const e = await refusal(buyerFor(a, { fetch: globalThis.fetch }).fetch(fake.url));
        expect(e.code).toBe('INVALID_CHALLENGE');
        expect(fake.payments()).toBe(0);
        expect(await t.workspace.wallets.balance(a.walletId)).toEqual(before);
      } finally {
        await fake.close();
      }
    }
  });
});

describe('gateway refusals passed through by the seller', () => {
  it('INSUFFICIENT_FUNDS (402) when the available balance is below the price', async () => {
    const a = await fundedAgent(t, '50');
    await expectNothingCharged(a, async () => {
      expect(await refusal(buyerFor(a).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 402 });
    }, { proofSent: true });
  });

  it('WALLET_FROZEN (403) for a frozen wallet', async () => {
    const a = await fundedAgent(t, '500');
    await t.workspace.wallets.freeze(a.walletId);
    await expectNothingCharged(a, async () => {
      expect(await refusal(buyerFor(a).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'WALLET_FROZEN', status: 403 });
    }, { proofSent: true });
    await t.workspace.wallets.unfreeze(a.walletId);
  });

  it('CHALLENGE_EXPIRED (410) when the quote expires between the buyer\'s check and authorization', async () => {
    const a = await fundedAgent(t, '500');
    const slowNetwork: typeof fetch = async (input, init) => {
      if (new Headers(init?.headers).has('x-payment')) clock.advance(6 * 60_000);
      return sellerFetch(input, init);
    };
    await expectNothingCharged(a, async () => {
      expect(await refusal(buyerFor(a, { fetch: slowNetwork }).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'CHALLENGE_EXPIRED', status: 410 });
    }, { proofSent: true });
  });

  it('REPLAY_DETECTED (409) for an x-payment sent twice by a raw client; the first use counts, charged once', async () => {
    const a = await fundedAgent(t, '500');
    const first = await sellerFetch(`${seller.url}/forecast`);
    const { challenge } = (await first.json()) as { challenge: PriceChallenge };
    const unsigned = { version: 1 as const, challenge, walletId: a.walletId, signedAt: new Date(clock.now()).toISOString() };
    const header = encodeHeader({ ...unsigned, signature: signObject(a.privateKeyPem, unsigned) });

    const paidOnce = await sellerFetch(`${seller.url}/forecast`, { headers: { 'x-payment': header } });
    expect(paidOnce.status).toBe(200);
    expect(paidOnce.headers.get('x-service-receipt')).toBeTruthy();
    const handled = seller.log.handled.forecast;
    const again = await sellerFetch(`${seller.url}/forecast`, { headers: { 'x-payment': header } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('REPLAY_DETECTED');
    expect(seller.log.handled.forecast).toBe(handled);
    expect((await t.workspace.wallets.balance(a.walletId)).balanceMinor).toBe('400');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('WALLET_NOT_FOUND (404) and FORBIDDEN (403, proof not signed by the wallet\'s key)', async () => {
    const a = await fundedAgent(t, '500');
    const stranger = generateEd25519();
    expect(await refusal(buyerFor({ walletId: 'wal_doesnotexist', privateKeyPem: stranger.privateKeyPem }).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'WALLET_NOT_FOUND', status: 404 });
    await expectNothingCharged(a, async () => {
      expect(await refusal(buyerFor({ walletId: a.walletId, privateKeyPem: stranger.privateKeyPem }).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    }, { proofSent: true });
  });

  describe('with a workspace policy installed on this gateway', () => {
    /** The gateway's routes call services.payments.authorize: swap in a service with the test's policy. */
    async function withPolicy(policy: PurchasePolicy, fn: () => Promise<void>) {
      const { ctx, signingKeys, config } = t.gw.services;
      const payments = t.gw.services.payments;
      const original = payments.authorize;
      const policed = new PaymentService({ ctx, signingKeys, settings: config, policy });
      payments.authorize = (p, input) => policed.authorize(p, input);
      try {
        await fn();
      } finally {
        payments.authorize = original;
      }
    }

    it('POLICY_DENIED (403) with the matched rule', async () => {
      const a = await fundedAgent(t, '500');
      const deny: PurchasePolicy = { async check() { throw new AppError('POLICY_DENIED', 'weather is not allowed', { matchedRule: 'deny category weather' }); } };
      await withPolicy(deny, () => expectNothingCharged(a, async () => {
        expect(await refusal(buyerFor(a).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'POLICY_DENIED', status: 403, details: { matchedRule: 'deny category weather' } });
      }, { proofSent: true }));
    });

    it('APPROVAL_REQUIRED (403) with the approvalId in the body', async () => {
      const a = await fundedAgent(t, '500');
      const hold: PurchasePolicy = { async check() { throw new AppError('APPROVAL_REQUIRED', 'a person must approve this purchase', {}, { approvalId: 'apr_test1' }); } };
      await withPolicy(hold, () => expectNothingCharged(a, async () => {
        expect(await refusal(buyerFor(a).fetch(`${seller.url}/forecast`))).toMatchObject({ code: 'APPROVAL_REQUIRED', status: 403, body: { approvalId: 'apr_test1' } });
      }, { proofSent: true }));
    });
  });
});

describe('a receipt that does not match', () => {
  it('is refused with INVALID_RECEIPT when something changed the body after it was hashed', async () => {
    // a proxy between seller and buyer that adds a byte to the paid response: the receipt's hash no longer matches
    const tampering: typeof fetch = async (input, init) => {
      const res = await sellerFetch(input, init);
      if (!res.headers.has('x-service-receipt')) return res;
      const bytes = Buffer.concat([Buffer.from(await res.arrayBuffer()), Buffer.from(' ')]);
      return new Response(bytes, { status: res.status, headers: res.headers });
    };
    const a = await fundedAgent(t, '10');
    const e = await refusal(buyerFor(a, { fetch: tampering }).fetch(`${seller.url}/cheap`));
    expect(e.code).toBe('INVALID_RECEIPT');
    expect((e.body.receipt as { status: string }).status).toBe('success');
  });
});
