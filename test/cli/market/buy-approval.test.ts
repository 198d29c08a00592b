/**
 * `agentpay buy --wait-approval`: a purchase an approval rule holds waits for a person's
 * decision, then is bought once (approved), refused with APPROVAL_DENIED (denied) or with
 * APPROVAL_REQUIRED (no decision in time). A real fastify seller over HTTPS, a real gateway,
 * the built binary; the money is checked after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuyResult } from '../../../src/cli/buy.js';
import { cli as runCli, gatewayEnv, spawnCli } from '../helpers.js';
import { expectLedgerConsistent, fundedAgent, type AgentWallet } from '../../e2e/helpers.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { cliFor, errorOf, publishedCliSeller, type Cli, type CliSeller } from './helpers.js';

let t: TestGateway;
let cli: Cli;
let seller: CliSeller;
let capabilityId: string;

beforeAll(async () => {
  t = await startTestGateway();
  cli = cliFor(t);
  ({ seller, capabilityId } = await publishedCliSeller(t, cli, { name: 'Premium forecast', description: 'Weather forecast, held for a person over 5.00', priceMinor: '600' }));
  await t.workspace.policies.apply('approval "over 500":\n  price > 500\n');
});
afterAll(async () => {
  await seller?.close();
  cli?.close();
  await t?.close();
});

const balance = async (walletId: string) => (await t.workspace.wallets.balance(walletId)).balanceMinor;
const sellerBalance = async () => BigInt((await t.provider.wallets.balance(t.creds.provider.walletId)).balanceMinor);

async function agent(): Promise<AgentWallet & { keyFile: string }> {
  const a = await fundedAgent(t, '1000');
  return { ...a, keyFile: cli.file(`${a.walletId}.pem`, a.privateKeyPem, 0o600) };
}

// 600 is above the default ceiling (100): these purchases raise it
const buyArgs = (a: { walletId: string; keyFile: string }, ...extra: string[]) =>
  ['buy', capabilityId, '--wallet', a.walletId, '--key-file', a.keyFile, '--data', '{"city":"Porto"}', '--max-price', '600', ...extra];
const env = () => gatewayEnv(t, t.creds.workspace.apiKey);

/** Starts a buy that will be held, and returns it with the approval id it printed on stderr. */
async function heldBuy(a: { walletId: string; keyFile: string }, seconds: string) {
  const run = spawnCli([...buyArgs(a, '--wait-approval', seconds), '--json'], { configDir: cli.dir, env: env() });
  await run.waitFor('stderr', 'waiting up to');
  const approvalId = /held for a person: approval (apr_\w+)/.exec(run.stderr())![1]!;
  return { run, approvalId };
}

describe('agentpay buy: the default price ceiling', () => {
  it('refuses 600 without --max-price (the default limit is 100): PRICE_ABOVE_CLIENT_LIMIT naming --max-price, exit 1, nothing held or paid', async () => {
    const a = await agent();
    const handled = seller.handled.forecast ?? 0;
    const r = await cli.run(['buy', capabilityId, '--wallet', a.walletId, '--key-file', a.keyFile, '--data', '{"city":"Porto"}']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'PRICE_ABOVE_CLIENT_LIMIT', details: { amountMinor: '600', maxPriceMinor: '100', defaultLimit: true, flag: '--max-price' } });
    expect(errorOf(r).message).toContain('the default limit of 100 (--max-price was not given)');
    expect(await balance(a.walletId)).toBe('1000');
    expect(seller.handled.forecast ?? 0).toBe(handled);
    expect((await t.workspace.approvals.list()).approvals.filter((x) => x.walletId === a.walletId)).toEqual([]);
  });
});

describe('agentpay buy --wait-approval', () => {
  it('waits while the purchase is held, buys it once a person approves, and pays exactly the price', async () => {
    const a = await agent();
    const sellerBefore = await sellerBalance();
    const handled = seller.handled.forecast ?? 0;
    const { run, approvalId } = await heldBuy(a, '60');
    expect(run.stderr()).toContain(`agentpay approvals approve ${approvalId}`);
    // held: nothing paid, the seller's handler never ran
    expect(await balance(a.walletId)).toBe('1000');
    expect(seller.handled.forecast ?? 0).toBe(handled);

    await t.workspace.approvals.approve(approvalId, { resolvedBy: 'alice' });
    const r = await run.done;
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as BuyResult;
    expect(out).toMatchObject({ capabilityId, status: 200, ok: true, body: { city: 'Porto', sunny: true } });
    expect(out.receipt).toMatchObject({ status: 'success', consumerId: a.walletId, amount: { amountMinor: '600', currency: 'USD' } });
    expect(await balance(a.walletId)).toBe('400');
    expect((await sellerBalance()) - sellerBefore).toBe(582n);
    expect(seller.handled.forecast).toBe(handled + 1);
    await expectLedgerConsistent(t.workspace, a.walletId);
  });

  it('exits 1 with APPROVAL_DENIED when a person denies, and pays nothing', async () => {
    const a = await agent();
    const { run, approvalId } = await heldBuy(a, '60');
    await t.workspace.approvals.deny(approvalId, { resolvedBy: 'bob' });
    const r = await run.done;
    expect(r.exitCode).toBe(1);
    // how long the denial stands is the approval's, read from the gateway, not a number the CLI knows
    const { approval } = await t.workspace.approvals.get(approvalId);
    expect(approval.standsUntil).toBeDefined();
    expect(errorOf(r)).toMatchObject({ code: 'APPROVAL_DENIED', details: { approvalId, resolvedBy: 'bob', standsUntil: approval.standsUntil } });
    expect(await balance(a.walletId)).toBe('1000');
    expect(await t.workspace.wallets.ledger(a.walletId)).toHaveLength(1); // the funding only
  });

  it('exits 1 with APPROVAL_REQUIRED and the approval id when no decision comes in time, leaving it pending', async () => {
    const a = await agent();
    const r = await cli.run(buyArgs(a, '--wait-approval', '1'));
    expect(r.exitCode).toBe(1);
    const e = errorOf(r);
    expect(e.code).toBe('APPROVAL_REQUIRED');
    const approvalId = String(e.details.approvalId);
    expect((await t.workspace.approvals.get(approvalId)).approval.status).toBe('pending');
    expect(await balance(a.walletId)).toBe('1000');
  });

  it('without it, the refusal says how to wait next time', async () => {
    const a = await agent();
    const r = await runCli(buyArgs(a), { configDir: cli.dir, env: env() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error APPROVAL_REQUIRED');
    expect(r.stderr).toContain('--wait-approval SECONDS');
    expect(await balance(a.walletId)).toBe('1000');
  });
});
