/**
 * The rail commands of the built `agentpay` binary against a real HTTPS gateway: a
 * top-up confirmed by hand, a deposit held and credited, a payout to the registered
 * destination returned by hand, with the ledger checked after each money path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, json, removeTempDirs, tempDir, gatewayEnv } from '../cli/helpers.js';
import { expectLedger } from '../wallets/ledger-checks.js';
import { entries, railGateway, runJobs, type TestGateway } from './helpers.js';

let t: TestGateway;
const configDir = tempDir();
let base: Record<string, string>;

beforeAll(async () => {
  t = await railGateway();
  base = gatewayEnv(t);
});
afterAll(async () => {
  await t.close();
  removeTempDirs();
});

const as = (apiKey: string) => (...args: string[]) => cli([...args, '--json'], { configDir, env: { ...base, AGENTPAY_API_KEY: apiKey } });

describe('agentpay wallets topup and sandbox confirm|decline', () => {
  it('credit a confirmed top-up once and a declined one never', async () => {
    const ws = as(t.creds.workspace.apiKey);
    const { walletId } = await t.newAgentWallet(t.workspace, 'cli-topup');
    const r = await ws('wallets', 'topup', walletId, '--amount', '1200');
    expect(r.exitCode, r.stderr).toBe(0);
    const { intent } = json(r);
    expect(intent).toMatchObject({ status: 'pending', amountMinor: '1200' });
    const c = await ws('sandbox', 'confirm', intent.transactionId);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(json(c).transaction).toMatchObject({ state: 'confirmed', creditedMinor: '1200' });
    const again = await ws('sandbox', 'confirm', intent.transactionId);
    expect(again.exitCode).toBe(1);
    expect(json(again).error.code).toBe('DUPLICATE_EXTERNAL_REF');

    const d = json(await ws('wallets', 'topup', walletId, '--amount', '300'));
    expect(json(await ws('sandbox', 'decline', d.intent.transactionId, '--reason', 'expired_card')).transaction).toMatchObject({ state: 'declined', reason: 'expired_card' });
    await expectLedger(t.workspace, walletId, ['1200']);
    const tx = json(await ws('rail', 'transactions', '--wallet', walletId));
    expect(tx.transactions.map((x: { state: string }) => x.state)).toEqual(['declined', 'confirmed']);
  });
});

describe('agentpay wallets deposit-address, sandbox deposit and sandbox price', () => {
  it('hold a deposit while the price is out of band and credit it when it is back', async () => {
    const ws = as(t.creds.workspace.apiKey);
    const op = as(t.creds.operatorKey);
    const { walletId } = await t.newAgentWallet(t.workspace, 'cli-deposit');
    const { address } = json(await ws('wallets', 'deposit-address', walletId));
    expect(json(await ws('wallets', 'deposit-address', walletId)).address.address).toBe(address.address);
    expect(json(await op('sandbox', 'price', '0.99')).settings.usdcPrice).toBe('0.99');
    const held = await ws('sandbox', 'deposit', address.address, '--amount', '2000000');
    expect(held.exitCode).toBe(1);
    expect(json(held).error.code).toBe('DEPOSIT_HELD');
    await expectLedger(t.workspace, walletId, []);
    await op('sandbox', 'price', '1.0');
    await runJobs(t);
    await expectLedger(t.workspace, walletId, ['200']);
  });
});

describe('agentpay payouts and rail providers', () => {
  it('register a destination, pay out to it, return it by hand, and list it', async () => {
    const s = await t.newProvider({ name: 'CLI payee' });
    await s.client.wallets.fund(s.walletId, '5000');
    const pv = as(s.apiKey);
    const set = await pv('payouts', 'destination', 'set', 'ext_cli_bank');
    expect(set.exitCode, set.stderr).toBe(0);
    expect(json(set)).toMatchObject({ changed: true, destination: { destination: 'ext_cli_bank', usable: true } });
    expect(json(await pv('payouts', 'destination', 'list')).destinations).toHaveLength(1);

    const created = await pv('payouts', 'create', '--amount', '2000', '--rail', 'ach', '--idempotency-key', 'cli-once');
    expect(created.exitCode, created.stderr).toBe(0);
    const { payout } = json(created);
    expect(payout).toMatchObject({ status: 'submitted', destination: 'ext_cli_bank', walletId: s.walletId });
    expect(json(await pv('payouts', 'create', '--amount', '2000', '--rail', 'ach', '--idempotency-key', 'cli-once')).payout.id).toBe(payout.id);
    expect(json(await pv('sandbox', 'return', payout.id)).payout).toMatchObject({ status: 'returned' });
    expect(entries(t, s.walletId)).toEqual([['fund', '5000'], ['payout', '-2000'], ['payout_return', '2000']]);
    expect(json(await pv('payouts', 'list')).payouts.map((p: { id: string }) => p.id)).toEqual([payout.id]);

    const providers = json(await pv('rail', 'providers'));
    expect(providers.sandbox).toBe(true);
    expect(providers.providers.map((p: { id: string }) => p.id)).toEqual(['sandbox-processor', 'sandbox-chain', 'sandbox-bank']);
  });

  it('a payout with a workspace key is a usage error naming the need for a provider key', async () => {
    const r = await as(t.creds.workspace.apiKey)('payouts', 'create', '--amount', '1', '--rail', 'ach');
    expect(r.exitCode).toBe(2);
    expect(json(r).error.message).toContain('provider');
  });
});
