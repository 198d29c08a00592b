/**
 * The buyer's side of the CLI end to end: `agentpay publish` puts a real fastify seller
 * (seller middleware, HTTPS on 127.0.0.1) on the market, `agentpay buy` pays it over
 * HTTP 402 with a funded agent wallet, and the money, the receipts and the breaker are
 * checked afterwards, failure paths included.
 */
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuyResult } from '../../../src/cli/buy.js';
import type { CheckedReceipt } from '../../../src/cli/receipts.js';
import type { BreakerState, PublishedCapability, ReceiptPage } from '../../../packages/sdk/src/types.js';
import { expectLedgerConsistent, fundedAgent, sha256, type AgentWallet } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cliFor, errorOf, publishedCliSeller, type Cli, type CliSeller } from './helpers.js';

let t: TestGateway;
let cli: Cli;
let seller: CliSeller;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  ({ seller, capabilityId } = await publishedCliSeller(t, cli, { name: 'City forecast', description: 'Weather forecast for a city', priceMinor: '100' }));
});
afterAll(async () => {
  await seller?.close();
  cli?.close();
  await t?.close();
});

const balance = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

/** A funded agent wallet whose private key is a 0600 file the CLI reads. */
async function agent(amountMinor: string): Promise<AgentWallet & { keyFile: string }> {
  const a = await fundedAgent(t, amountMinor);
  return { ...a, keyFile: cli.file(`${a.walletId}.pem`, a.privateKeyPem, 0o600) };
}

const buyArgs = (a: { walletId: string; keyFile: string }, target: string, ...extra: string[]) => ['buy', target, '--wallet', a.walletId, '--key-file', a.keyFile, ...extra];

describe('agentpay buy', () => {
  it('pays a capability by id: prints the body and the verified receipt, and moves exactly the price', async () => {
    const a = await agent('1000');
    const sellerBefore = await sellerBalance();

    const out = await cli.json<BuyResult>(buyArgs(a, capabilityId, '--data', '{"city":"Faro"}', '--max-price', '100'));

    expect(out).toMatchObject({ url: `${seller.url}/forecast`, capabilityId, status: 200, ok: true, body: { city: 'Faro', sunny: true } });
    expect(out.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, capabilityId, providerId: t.creds.provider.id, amount: { amountMinor: '100', currency: 'USD' } });
    expect(out.receipt!.responseHash).toBe(sha256(JSON.stringify({ city: 'Faro', sunny: true })));
    expect(await balance(a.walletId)).toBe('900');
    expect((await sellerBalance()) - sellerBefore).toBe(97n);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('refuses a price above --max-price with PRICE_ABOVE_CLIENT_LIMIT, exit 1, and no money moved', async () => {
    const a = await agent('1000');
    const handled = seller.handled.forecast ?? 0;

    const r = await cli.run(buyArgs(a, capabilityId, '--data', '{"city":"Faro"}', '--max-price', '99'));

    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '100', maxPriceMinor: '99', flag: '--max-price' } });
    // named as typed, not as the SDK option
    expect(errorOf(r).message).toContain('--max-price 99');
    expect(errorOf(r).message).not.toContain('maxPriceMinor');
    expect(await balance(a.walletId)).toBe('1000');
    expect(seller.handled.forecast ?? 0).toBe(handled);
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1); // the funding only
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('buys by URL with no API key (the agent key pays); INSUFFICIENT_FUNDS is exit 1 and charges nothing', async () => {
    const a = await agent('50');
    const r = await cli.run(buyArgs(a, `${seller.url}/forecast`, '--method', 'post', '--data', '{}'), { key: '' });
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(await balance(a.walletId)).toBe('50');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('checks its input before paying: a body that is not JSON, a missing key file (exit 2)', async () => {
    const a = await agent('1000');
    const badJson = await cli.run(buyArgs(a, capabilityId, '--data', '{city: Faro}'));
    expect(badJson.exitCode).toBe(2);
    expect(errorOf(badJson)).toMatchObject({ code: 'USAGE', details: { flag: '--data' } });
    const noKey = await cli.run(['buy', capabilityId, '--wallet', a.walletId, '--key-file', 'missing.pem']);
    expect(noKey.exitCode).toBe(2);
    expect(errorOf(noKey)).toMatchObject({ code: 'USAGE', details: { flag: '--key-file' } });
    expect(await balance(a.walletId)).toBe('1000');
  });
});

describe('agentpay buy from a seller that cannot be reached', () => {
  /** a loopback port nothing listens on */
  async function closedPort(): Promise<number> {
    const s = createServer();
    await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
    const { port } = s.address() as AddressInfo;
    await new Promise((res) => s.close(res));
    return port;
  }

  it('is SELLER_UNREACHABLE (exit 1) naming the seller URL and the cause, not the running gateway; nothing is paid', async () => {
    const a = await agent('1000');
    const url = `http://127.0.0.1:${await closedPort()}/x`;
    const r = await cli.run(buyArgs(a, url));
    expect(r.exitCode).toBe(1);
    const error = errorOf(r);
    expect(error).toMatchObject({ code: 'SELLER_UNREACHABLE', details: { url, cause: 'ECONNREFUSED' } });
    expect(error.message).toBe(`cannot reach the seller at ${url} (ECONNREFUSED); nothing was paid`);
    expect(error.message).not.toContain(t.baseUrl);
    expect(await balance(a.walletId)).toBe('1000');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it("names the capability's endpoint when its host does not resolve (ENOTFOUND)", async () => {
    const a = await agent('1000');
    const endpoint = 'https://no-such-seller.invalid/forecast';
    const published = await cli.json<PublishedCapability>([
      'publish', '--name', 'Nowhere forecast', '--description', 'A seller whose host does not resolve', '--protocol', 'rest',
      '--price', '100', '--category', 'weather', '--endpoint', endpoint,
    ], { key: t.creds.provider.apiKey });
    const r = await cli.run(buyArgs(a, published.capability.id, '--data', '{}'));
    expect(r.exitCode).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'SELLER_UNREACHABLE', details: { url: endpoint, cause: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)$/) } });
    expect(await balance(a.walletId)).toBe('1000');
  });
});

describe('agentpay receipts', () => {
  it('list pages newest first with nextCursor; show checks the platform signature', async () => {
    const a = await agent('1000');
    for (const city of ['Braga', 'Porto']) await cli.json<BuyResult>(buyArgs(a, capabilityId, '--data', JSON.stringify({ city })));
    const all = (await t.workspace.receipts.list({ limit: 200 })).receipts;

    const first = await cli.json<ReceiptPage>(['receipts', 'list', '--limit', '1']);
    expect(first.receipts).toHaveLength(1);
    expect(first.receipts[0]!.id).toBe(all[0]!.id);
    expect(first.nextCursor).toBe(all[0]!.id);
    const second = await cli.json<ReceiptPage>(['receipts', 'list', '--limit', '1', '--after', first.nextCursor!]);
    expect(second.receipts[0]!.id).toBe(all[1]!.id);
    expect(second.receipts[0]!.timestamp <= first.receipts[0]!.timestamp).toBe(true);

    const shown = await cli.json<CheckedReceipt>(['receipts', 'show', first.receipts[0]!.id]);
    expect(shown).toEqual({ receipt: all[0], signatureValid: true });
    // the seller sees the same receipt as a sale
    expect((await cli.json<CheckedReceipt>(['receipts', 'show', all[0]!.id], { key: t.creds.provider.apiKey })).signatureValid).toBe(true);
  });
});

describe('agentpay wallets breaker / resume-provider', () => {
  it('a seller error is refunded with a failed receipt (exit 1); three in a row pause the seller until resume-provider', async () => {
    const a = await agent('1000');
    const breaker = () => cli.json<BreakerState>(['wallets', 'breaker', a.walletId, '--provider', t.creds.provider.id]);
    expect(await breaker()).toEqual({ walletId: a.walletId, providerId: t.creds.provider.id, paused: false, consecutiveFailures: 0 });

    for (let i = 0; i < 3; i++) {
      const r = await cli.run(buyArgs(a, `${seller.url}/broken`));
      expect(r.exitCode).toBe(1);
      const out = JSON.parse(r.stdout) as BuyResult;
      expect(out).toMatchObject({ status: 503, ok: false, receipt: { status: 'failed', amount: { amountMinor: '100' } } });
      expect(r.stderr).toContain('refunded');
    }
    expect(await balance(a.walletId)).toBe('1000');
    expect(await breaker()).toMatchObject({ paused: true, consecutiveFailures: 3 });

    const paused = await cli.run(buyArgs(a, capabilityId, '--data', '{}'));
    expect(paused.exitCode).toBe(1);
    expect(errorOf(paused).code).toBe('WALLET_PROVIDER_PAUSED');

    expect(await cli.json(['wallets', 'resume-provider', a.walletId, '--provider', t.creds.provider.id])).toEqual({ ok: true, paused: false });
    expect(await t.workspace.wallets.breaker(a.walletId, t.creds.provider.id)).toMatchObject({ paused: false, consecutiveFailures: 0 });
    expect((await cli.json<BuyResult>(buyArgs(a, capabilityId, '--data', '{}'))).receipt?.status).toBe('success');
    expect(await balance(a.walletId)).toBe('900');
    await expectLedgerConsistent(t.workspace, a.walletId);
  });
});
