/**
 * The `rails.usdc` section of `agentpay gateway start --config`: a production gateway built
 * from it over a local chain that answers as Base (chain id 8453), keys from 0600 files,
 * takes a deposit and pays out; keys written in the file, files others can read, a missing
 * key and a testnet in production are refused naming the key, never showing its value.
 */
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../src/cli/gateway-config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { removeTempDirs, tempDir } from '../cli/helpers.js';
import { expectLedger } from '../wallets/ledger-checks.js';
import { expectConserved } from './helpers.js';
import { startChain, type Chain } from './usdc/chain.js';

const SDN = new URL('./screening/sdn.csv', import.meta.url);
let chain: Chain;
beforeAll(async () => {
  chain = await startChain(8453);
  await chain.send(chain.owner, chain.token, 'mint', [chain.payer.address, 1_000_000_000n]);
  await chain.send(chain.owner, chain.token, 'mint', [chain.treasury, 1_000_000_000n]);
}, 120_000);
afterAll(async () => {
  await chain?.close();
  removeTempDirs();
});

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as { code: string; message: string; details: Record<string, unknown>; tryNext?: string };
  }
  throw new Error('expected a refusal');
};

function setup(usdc: Record<string, unknown>, mode = 'production') {
  const dir = tempDir();
  const file = join(dir, 'agentpay.json');
  writeFileSync(file, JSON.stringify({ mode, rails: { usdc, screening: { ofacSdn: { path: 'sdn.csv' } }, pollIntervalMs: 0 } }));
  copyFileSync(SDN, join(dir, 'sdn.csv'));
  writeFileSync(join(dir, 'treasury-key'), `${chain.treasuryKey}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'deposit-seed'), `${chain.depositMnemonic}\n`, { mode: 0o600 });
  return { dir, file };
}

const base = () => ({
  chainId: 8453, rpcUrl: chain.url, usdcAddress: chain.token, priceFeed: chain.aggregator, confirmations: 2,
  treasuryKeyFile: 'treasury-key', depositMnemonicFile: 'deposit-seed',
});

describe('the rails.usdc section', () => {
  it('builds the USDC adapter and its price feed; a production gateway takes a deposit and pays out with them', async () => {
    const { dir, file } = setup(base());
    const opts = gatewayStartOptions({ config: file }, dir, {});
    // the keys are held in closures only: nothing that prints the configuration shows them
    const shown = inspect(opts.config, { depth: 12, showHidden: true, getters: false });
    expect(shown).toContain('usdc-base');
    expect(shown.toLowerCase()).not.toContain(chain.treasuryKey.slice(2).toLowerCase());
    expect(shown).not.toContain(chain.depositMnemonic);
    let t: TestGateway | undefined;
    try {
      t = await startTestGateway({ config: opts.config });
      const res = await t.provider.rail.providers();
      expect(res.sandbox).toBe(false);
      expect(res.providers.map((p) => [p.id, p.adapterType, p.status, p.rails])).toEqual([['usdc-base', 'usdc-base', 'operational', ['usdc_base']]]);
      const s = await t.newProvider({ name: 'USDC production seller' });
      const { address } = await s.client.rail.depositAddress(s.walletId);
      await chain.send(chain.payer, chain.token, 'transfer', [address, 3_000_000n]);
      await chain.mine(1);
      await t.gw.services.rails.jobs.runOnce();
      await expectLedger(s.client, s.walletId, ['300']);
      const dest = `0x${'5a'.repeat(20)}`;
      await s.client.payouts.setDestination(s.id, { destination: dest });
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '120', rail: 'usdc_base' });
      await chain.mine(2);
      await t.gw.services.rails.jobs.runOnce();
      expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
      expect(await chain.usdcOf(dest)).toBe(1_200_000n);
      await expectLedger(s.client, s.walletId, ['300', '-120']);
      expectConserved(t);
      expect((await t.operator.rail.reconcile()).status).toBe('ok');
    } finally {
      await t?.close();
    }
  });

  it('refuses keys in the config file, a key file others can read, a missing key, a bad key, and a testnet in production, never showing a key', () => {
    const inline = setup({ ...base(), treasuryKey: chain.treasuryKey });
    const e1 = refusal(() => gatewayStartOptions({ config: inline.file }, inline.dir, {}));
    expect(e1).toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'rails.usdc.treasuryKey' } });
    expect(e1.message).not.toContain(chain.treasuryKey);

    const open = setup(base());
    chmodSync(join(open.dir, 'treasury-key'), 0o644);
    const e2 = refusal(() => gatewayStartOptions({ config: open.file }, open.dir, {}));
    expect(e2).toMatchObject({ details: { field: 'usdc.treasuryKeyFile' }, tryNext: `chmod 600 ${join(open.dir, 'treasury-key')}` });
    expect(e2.message).not.toContain(chain.treasuryKey);

    const { treasuryKeyFile: _t, ...noKey } = base();
    const missing = setup(noKey);
    expect(refusal(() => gatewayStartOptions({ config: missing.file }, missing.dir, {})).message).toContain('AGENTPAY_USDC_TREASURY_KEY');
    // the environment serves instead of the file
    expect(gatewayStartOptions({ config: missing.file }, missing.dir, { AGENTPAY_USDC_TREASURY_KEY: chain.treasuryKey }).config.mode).toBe('production');

    const badKey = setup(base());
    writeFileSync(join(badKey.dir, 'treasury-key'), 'not-a-key-but-secret\n', { mode: 0o600 });
    const e3 = refusal(() => gatewayStartOptions({ config: badKey.file }, badKey.dir, {}));
    expect(e3.message).toContain('not a private key');
    expect(e3.message).not.toContain('not-a-key-but-secret');

    const sepolia = setup({ ...base(), chainId: 84532 });
    expect(refusal(() => gatewayStartOptions({ config: sepolia.file }, sepolia.dir, {}))).toMatchObject({ details: { field: 'rails.usdc.chainId' }, message: expect.stringContaining('refused in production mode') });
    // Base Sepolia on a sandbox gateway: Circle's test USDC by default
    const sandbox = setup({ ...base(), chainId: 84532, usdcAddress: undefined }, 'sandbox');
    expect(gatewayStartOptions({ config: sandbox.file }, sandbox.dir, {}).config.mode).toBe('sandbox');

    const unknown = setup({ ...base(), confirmation: 3 });
    expect(refusal(() => gatewayStartOptions({ config: unknown.file }, unknown.dir, {})).message).toContain('rails.usdc.confirmation is not a setting');
    const local = setup({ ...base(), chainId: 31337, usdcAddress: undefined }, 'sandbox');
    expect(refusal(() => gatewayStartOptions({ config: local.file }, local.dir, {})).details).toMatchObject({ field: 'rails.usdc.usdcAddress' });
  });
});
