/**
 * The USDC adapter against a real local EVM (Hardhat's EDR engine over HTTP) with OpenZeppelin's ERC-20 of
 * 6 decimals and a Chainlink-style aggregator: deposits credited after the confirmations, the
 * price band, a reorg before confirmation, payouts confirmed, reverted and re-credited once,
 * restarts in the middle of each, and reconciliation pausing payouts while the chain holds
 * less than the ledger owes. The ledger is checked after each.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, getAddress, http, type Address } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { depositPath } from '../../src/rails/usdc/adapter.js';
import { expectLedger } from '../wallets/ledger-checks.js';
import { expectConserved, refusedWith } from './helpers.js';
import { compileTestContracts } from './usdc/compile.js';
import { CHAIN_ID, CONFIRMATIONS, startChain, usdcGateway, type Chain, type UsdcGateway } from './usdc/chain.js';

const USDC = 1_000_000n;
let chain: Chain;
let t: UsdcGateway;
const cut = { on: false };

beforeAll(async () => {
  chain = await startChain();
  await chain.send(chain.owner, chain.token, 'mint', [chain.payer.address, 100_000n * USDC]);
  await chain.send(chain.owner, chain.token, 'mint', [chain.treasury, 1_000n * USDC]);
  t = await usdcGateway(chain, { cut });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await chain?.close();
  if (t) rmSync(t.dataDir, { recursive: true, force: true });
});

const runJobs = () => t.gw.services.rails.jobs.runOnce();
const randomAddress = () => privateKeyToAccount(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`).address;

/** A provider with a deposit address for its settlement wallet. */
async function seller() {
  const s = await t.newProvider({ name: `USDC seller ${Math.random().toString(36).slice(2, 7)}` });
  const { address } = await s.client.rail.depositAddress(s.walletId);
  return { ...s, address: address as Address };
}

/** Restarts the gateway over the same data with a new adapter instance. */
async function restart(o: { gasCeiling?: bigint } = {}) {
  const { dataDir, clock } = t;
  await t.close();
  t = await usdcGateway(chain, { dataDir, clock, cut, ...o });
}

/** Pays `units` of USDC to `to` and credits it: N confirmations, then the rail job. */
async function deposit(to: Address, units: bigint) {
  const hash = await chain.send(chain.payer, chain.token, 'transfer', [to, units]);
  await chain.mine(CONFIRMATIONS - 1);
  await runJobs();
  return hash;
}

describe('USDC deposits on a real chain', () => {
  it('gives each wallet one deterministic address, and credits a transfer once after the confirmations', async () => {
    const s = await seller();
    expect(await s.client.rail.depositAddress(s.walletId)).toMatchObject({ address: s.address });
    // derived from the wallet id alone: another instance derives the same
    expect(s.address).toBe(mnemonicToAccount(chain.depositMnemonic, { path: depositPath(s.walletId) }).address.toLowerCase());

    const hash = await chain.send(chain.payer, chain.token, 'transfer', [s.address, 5n * USDC]);
    expect((await runJobs()).depositsObserved).toBe(0); // 1 confirmation
    await chain.mine(CONFIRMATIONS - 2);
    expect((await runJobs()).depositsObserved).toBe(0); // N-1
    await expectLedger(s.client, s.walletId, []);
    await chain.mine(1);
    expect((await runJobs()).depositsObserved).toBe(1);
    expect((await runJobs()).depositsObserved).toBe(0);
    const [entry] = await expectLedger(s.client, s.walletId, ['500']);
    const receipt = await chain.pub.getTransactionReceipt({ hash });
    const log = receipt.logs.find((l) => getAddress(l.address) === getAddress(chain.token))!;
    expect(entry!.reference).toBe(`deposit:${hash}:${log.logIndex}`);
    expect(await t.adapter.deposits.lookupDeposit(`${hash}:${log.logIndex}`)).toMatchObject({ address: s.address, amountMinor: 5n * USDC });
    expectConserved(t);
  });

  it('holds deposits below and above the ±0.5% band and credits them when the on-chain price is back', async () => {
    const s = await seller();
    await chain.setPrice(99_400_000n); // 0.994
    expect(await t.gw.services.rails.registry.pricing!.usdcPriceMicros()).toBe(994_000n);
    await deposit(s.address, 2n * USDC);
    await chain.setPrice(100_600_000n); // 1.006
    expect(await t.gw.services.rails.registry.pricing!.usdcPriceMicros()).toBe(1_006_000n);
    await deposit(s.address, 3n * USDC);
    await expectLedger(s.client, s.walletId, []);
    await runJobs();
    await expectLedger(s.client, s.walletId, []);

    await chain.setPrice(100_400_000n); // 1.004: in band
    const r = await runJobs();
    expect(r.heldCredited).toBe(2);
    expect(await t.gw.services.rails.registry.pricing!.usdcPriceMicros()).toBe(1_004_000n);
    // 2 and 3 USDC at 1.004, rounded down to the cent
    const credited = (await t.client(s.apiKey).wallets.ledger(s.walletId)).map((e) => e.amountMinor).sort();
    expect(credited).toEqual(['200', '301']);
    await chain.setPrice(100_000_000n);
    expectConserved(t);
  });

  it('never credits a deposit lost to a reorg before its confirmations', async () => {
    const s = await seller();
    const snap = await chain.rpc('evm_snapshot');
    await chain.send(chain.payer, chain.token, 'transfer', [s.address, 7n * USDC]);
    await chain.mine(CONFIRMATIONS - 2);
    expect((await runJobs()).depositsObserved).toBe(0);
    expect(await chain.rpc('evm_revert', [snap])).toBe(true);
    expect(await chain.usdcOf(s.address)).toBe(0n);
    await chain.mine(CONFIRMATIONS + 2);
    expect((await runJobs()).depositsObserved).toBe(0);
    await expectLedger(s.client, s.walletId, []);
    expectConserved(t);
  });

  it('holds a deposit while the on-chain price is stale (older than priceMaxAgeMs against the chain) and credits it once fresh', async () => {
    const s = await seller();
    await chain.rpc('evm_increaseTime', [27 * 3600]);
    await chain.mine(1);
    await deposit(s.address, 6n * USDC);
    const [held] = await t.gw.services.ctx.store.read((r) => r.railTransactions.listByState('deposit', ['held'], 10));
    expect(held).toMatchObject({ walletId: s.walletId, reason: 'the USDC price feed is unavailable', railAmountMinor: 6n * USDC });
    await expectLedger(s.client, s.walletId, []);
    await chain.setPrice(100_000_000n);
    expect((await runJobs()).heldCredited).toBe(1);
    await expectLedger(s.client, s.walletId, ['600']);
    expectConserved(t);
  });

  it('credits a deposit once across a restart in the middle (seen unconfirmed, then confirmed by a new instance)', async () => {
    const s = await seller();
    await chain.send(chain.payer, chain.token, 'transfer', [s.address, 4n * USDC]);
    await runJobs();
    await restart();
    await chain.mine(CONFIRMATIONS);
    expect((await runJobs()).depositsObserved).toBe(1);
    // and a restart after it was credited: the stored scan position may replay it; it is not credited again
    await restart();
    await runJobs();
    await runJobs();
    await expectLedger(t.client(s.apiKey), s.walletId, ['400']);
    expectConserved(t);
  });
});

describe('USDC payouts on a real chain', () => {
  async function funded(units: bigint) {
    const s = await seller();
    await deposit(s.address, units);
    const dest = randomAddress();
    await s.client.payouts.setDestination(s.id, { destination: dest });
    return { ...s, dest };
  }

  it('sends an ERC-20 transfer from the treasury, follows it to confirmed, and answers a replay with the same payout', async () => {
    const s = await funded(50n * USDC);
    const before = await chain.usdcOf(chain.treasury);
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'usdc_base' }, { idempotencyKey: 'usdc-1' });
    expect(p.status).toBe('submitted');
    expect(await chain.usdcOf(s.dest)).toBe(10n * USDC);
    expect(await chain.usdcOf(chain.treasury)).toBe(before - 10n * USDC);
    await runJobs();
    expect((await s.client.payouts.get(p.id)).status).toBe('submitted'); // 1 confirmation
    await chain.mine(CONFIRMATIONS);
    await runJobs();
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    const again = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1000', rail: 'usdc_base' }, { idempotencyKey: 'usdc-1' });
    expect(again.id).toBe(p.id);
    expect(await chain.usdcOf(s.dest)).toBe(10n * USDC);
    expect(await t.adapter.payouts.lookup(p.id)).toMatchObject({ state: 'confirmed', amountMinor: 10n * USDC });
    await expectLedger(s.client, s.walletId, ['5000', '-1000']);
    expectConserved(t);
  });

  it('refuses (503) and re-credits at once a transfer the chain would revert (token paused), sending nothing', async () => {
    const s = await funded(20n * USDC);
    await chain.send(chain.owner, chain.token, 'pause' as never, []);
    try {
      await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '500', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE');
    } finally {
      await chain.send(chain.owner, chain.token, 'unpause' as never, []);
    }
    expect(await chain.usdcOf(s.dest)).toBe(0n);
    await expectLedger(s.client, s.walletId, ['2000', '-500', '500']);
    expectConserved(t);
  });

  it('refuses (503) and re-credits at once a transfer whose gas estimate is over the ceiling', async () => {
    await restart({ gasCeiling: 30_000n });
    try {
      const s = await funded(5n * USDC);
      const e = await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'TREASURY_UNAVAILABLE');
      expect(e.message).toContain('over the ceiling of 30000');
      expect(await chain.usdcOf(s.dest)).toBe(0n);
      await expectLedger(s.client, s.walletId, ['500', '-100', '100']);
    } finally {
      await restart();
    }
    expectConserved(t);
  });

  it('re-credits once a payout whose transaction reverts on chain', async () => {
    const s = await funded(20n * USDC);
    await chain.rpc('evm_setAutomine', [false]);
    let payoutId: string;
    try {
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '700', rail: 'usdc_base' });
      payoutId = p.id;
      // the token is paused in the same block, before the transfer runs (a higher tip goes first)
      const { TestUSDC } = compileTestContracts();
      await chain.wallet.writeContract({
        address: chain.token, abi: TestUSDC.abi, functionName: 'pause', args: [], account: chain.owner, chain: null, maxPriorityFeePerGas: 50_000_000_000n, maxFeePerGas: 100_000_000_000n,
      } as never);
    } finally {
      await chain.rpc('evm_setAutomine', [true]);
    }
    await chain.mine(CONFIRMATIONS);
    await chain.send(chain.owner, chain.token, 'unpause' as never, []);
    await runJobs();
    await runJobs();
    const p = await s.client.payouts.get(payoutId);
    expect(p.status).toBe('returned');
    expect(await chain.usdcOf(s.dest)).toBe(0n);
    await expectLedger(s.client, s.walletId, ['2000', '-700', '700']);
    expectConserved(t);
  });

  it('sends a payout once across a restart in the middle (signed and recorded, the connection lost as it went out)', async () => {
    const s = await funded(30n * USDC);
    cut.on = true;
    let id: string;
    try {
      const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '1200', rail: 'usdc_base' });
      id = p.id;
      expect(p.status).toBe('submitted');
    } finally {
      cut.on = false;
    }
    expect(await chain.usdcOf(s.dest)).toBe(0n);
    await restart();
    await runJobs(); // submitted again: the recorded transaction, not a new one
    await runJobs();
    await chain.mine(CONFIRMATIONS);
    await runJobs();
    const client = t.client(s.apiKey);
    expect((await client.payouts.get(id)).status).toBe('confirmed');
    expect(await chain.usdcOf(s.dest)).toBe(12n * USDC);
    await expectLedger(client, s.walletId, ['3000', '-1200']);
    expectConserved(t);
  });
});

describe('conservation against the chain', () => {
  it('pauses payouts with COVERAGE_SHORTFALL while the chain holds less than the ledger owes, and resumes when refilled', async () => {
    const s = await (async () => {
      const x = await seller();
      await deposit(x.address, 10n * USDC);
      await x.client.payouts.setDestination(x.id, { destination: randomAddress() });
      return x;
    })();
    const ok = await t.operator.rail.reconcile();
    expect(ok.status).toBe('ok');

    // the USDC leaves outside the platform (leaked keys): the treasury's, and every deposit address's (not swept)
    const { TestUSDC } = compileTestContracts();
    let taken = 0n;
    const takeAll = async (account: ReturnType<typeof privateKeyToAccount>) => {
      const units = await chain.usdcOf(account.address);
      if (units === 0n) return;
      await chain.pub.waitForTransactionReceipt({ hash: await chain.wallet.sendTransaction({ account: chain.owner, to: account.address, value: 10n ** 16n, chain: null }) });
      const w = createWalletClient({ account, transport: http(chain.url) });
      const hash = await w.writeContract({ address: chain.token, abi: TestUSDC.abi, functionName: 'transfer', args: [chain.owner.address, units], chain: null, gas: 300_000n } as never);
      expect((await chain.pub.waitForTransactionReceipt({ hash })).status).toBe('success');
      taken += units;
    };
    await takeAll(privateKeyToAccount(chain.treasuryKey));
    for (const d of await t.adapter.depositAddresses()) {
      const account = mnemonicToAccount(chain.depositMnemonic, { path: d.path as `m/44'/60'/${string}` });
      expect(account.address.toLowerCase()).toBe(d.address);
      await takeAll(account as never);
    }
    const short = await t.operator.rail.reconcile();
    expect(short.status).toBe('shortfall');
    expect(BigInt(short.holdingsMinor as string)).toBeLessThan(BigInt(short.obligationsMinor as string));
    await refusedWith(s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' }), 503, 'COVERAGE_SHORTFALL');
    await expectLedger(s.client, s.walletId, ['1000']);

    await chain.send(chain.owner, chain.token, 'transfer', [chain.treasury, taken]);
    expect((await t.operator.rail.reconcile()).status).toBe('ok');
    const p = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '100', rail: 'usdc_base' });
    await chain.mine(CONFIRMATIONS);
    await runJobs();
    expect((await s.client.payouts.get(p.id)).status).toBe('confirmed');
    await expectLedger(s.client, s.walletId, ['1000', '-100']);
    expectConserved(t);
  });
});

describe('one sender at a time, and dropped transactions', () => {
  it('two adapter instances over one store send distinct payouts with distinct nonces and one payout id once', async () => {
    const { UsdcBaseAdapter } = await import('../../src/rails/usdc/adapter.js');
    const make = () => {
      const a = new UsdcBaseAdapter({
        chainId: CHAIN_ID, transport: http(chain.url), usdcAddress: chain.token, confirmations: CONFIRMATIONS,
        treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic, clock: t.clock,
      });
      a.attach(t.gw.services.ctx.store);
      return a;
    };
    const [one, two] = [make(), make()];
    const dest = [randomAddress(), randomAddress(), randomAddress()];
    const p = (i: number) => ({ payoutId: `pay_fleet_${i}_${Date.now()}`, rail: 'usdc_base' as const, destination: dest[i]!, amountMinor: BigInt(i + 1) * USDC, asset: 'USDC' as const });
    const [p0, p1, p2] = [p(0), p(1), p(2)];
    const sent = await Promise.all([one.payouts.submit(p0), two.payouts.submit(p1), one.payouts.submit(p2), two.payouts.submit(p0)]);
    expect(sent[3]!.externalRef).toBe(sent[0]!.externalRef);
    expect(new Set(sent.map((s) => s.externalRef)).size).toBe(3);
    const nonces = await Promise.all(sent.slice(0, 3).map(async (s) => (await chain.pub.getTransaction({ hash: s.externalRef as `0x${string}` })).nonce));
    expect(new Set(nonces).size).toBe(3);
    await chain.mine(CONFIRMATIONS);
    for (const [i, s] of sent.slice(0, 3).entries()) {
      expect(await two.payouts.status(s.externalRef)).toMatchObject({ state: 'confirmed', amountMinor: BigInt(i + 1) * USDC });
      expect(await chain.usdcOf(dest[i]!)).toBe(BigInt(i + 1) * USDC);
    }
  });

  it('re-credits once a payout whose signed transaction never got out and whose nonce another payout then used (dropped)', async () => {
    const s = await seller();
    await deposit(s.address, 20n * USDC);
    const dest = randomAddress();
    await s.client.payouts.setDestination(s.id, { destination: dest });
    cut.on = true;
    let lost: string;
    try {
      lost = (await s.client.payouts.create({ walletId: s.walletId, amountMinor: '300', rail: 'usdc_base' })).id;
    } finally {
      cut.on = false;
    }
    // the next payout takes the chain's pending nonce: the one the lost transaction was signed with
    const next = await s.client.payouts.create({ walletId: s.walletId, amountMinor: '400', rail: 'usdc_base' });
    await chain.mine(CONFIRMATIONS);
    await runJobs(); // the lost one is submitted again: the node refuses its used nonce; it is followed by its hash
    await runJobs();
    await runJobs();
    expect((await s.client.payouts.get(next.id)).status).toBe('confirmed');
    const p = await s.client.payouts.get(lost);
    expect(p.status).toBe('returned');
    expect(await chain.usdcOf(dest)).toBe(4n * USDC);
    await expectLedger(s.client, s.walletId, ['2000', '-300', '-400', '300']);
    expectConserved(t);
  });
});
