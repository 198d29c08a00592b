/**
 * A real local EVM for the USDC adapter tests: Hardhat's EDR engine served on 127.0.0.1 (a random
 * port, reached over HTTP as a Base node is; ./node.ts), with OpenZeppelin's ERC-20 (6 decimals, pausable)
 * and a Chainlink-style aggregator deployed, and a gateway running the USDC adapter over it.
 */
import {
  createPublicClient, createWalletClient, custom, http, HttpRequestError, parseEther, type Address, type Hex, type PublicClient, type WalletClient,
} from 'viem';
import { english, generateMnemonic, generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import type { RailAdapters } from '../../../src/domain/rails/adapters.js';
import { usdcBaseRails, type UsdcBaseAdapter } from '../../../src/rails/usdc/adapter.js';
import { ManualClock, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { compileTestContracts } from './compile.js';
import { startLocalNode } from './node.js';

export const CHAIN_ID = 31337;
/** Hardhat's default test wallet; its first accounts are funded in the genesis block */
const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
export const CONFIRMATIONS = 3;

export interface Chain {
  url: string;
  pub: PublicClient;
  wallet: WalletClient;
  /** the chain's funded accounts (signed here): [0] owns the token and the aggregator, [1] pays deposits */
  owner: LocalAccount;
  payer: LocalAccount;
  token: Address;
  aggregator: Address;
  treasuryKey: Hex;
  treasury: Address;
  depositMnemonic: string;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  mine(blocks: number): Promise<void>;
  send(from: LocalAccount, to: Address, functionName: 'transfer' | 'mint', args: readonly unknown[]): Promise<Hex>;
  usdcOf(a: Address | string): Promise<bigint>;
  setPrice(answer8: bigint): Promise<void>;
  close(): Promise<void>;
}

export async function startChain(chainId = CHAIN_ID): Promise<Chain> {
  const compiled = compileTestContracts();
  const accounts = [0, 1, 2].map((i) => mnemonicToAccount(TEST_MNEMONIC, { addressIndex: i }));
  const owner: LocalAccount = accounts[0]!;
  const payer: LocalAccount = accounts[1]!;
  const node = await startLocalNode({ chainId, funded: accounts.map((a) => a.address) });
  const { url } = node;
  const pub = createPublicClient({ transport: http(url), cacheTime: 0 }) as PublicClient;
  const wallet = createWalletClient({ transport: http(url), cacheTime: 0 });
  const rpc = (method: string, params: unknown[] = []) => pub.request({ method, params } as never) as Promise<unknown>;

  const deploy = async (c: { abi: unknown; bytecode: Hex }, args: unknown[]) => {
    const hash = await wallet.deployContract({ abi: c.abi as never, bytecode: c.bytecode, args: args as never, account: owner, chain: null });
    return (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
  };
  const token = await deploy(compiled.TestUSDC, []);
  const aggregator = await deploy(compiled.MockAggregator, [8, 100_000_000n]);
  const treasuryKey = generatePrivateKey();
  const treasury = privateKeyToAccount(treasuryKey).address;
  await pub.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ account: owner, to: treasury, value: parseEther('10'), chain: null }) });

  const send = async (from: LocalAccount, to: Address, functionName: 'transfer' | 'mint', args: readonly unknown[]) => {
    const hash = await wallet.writeContract({ address: to, abi: compiled.TestUSDC.abi, functionName, args: args as never, account: from, chain: null, gas: 300_000n } as never);
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
    return hash;
  };
  return {
    url, pub, wallet, owner, payer, token, aggregator, treasuryKey, treasury, depositMnemonic: generateMnemonic(english), rpc, send,
    mine: async (blocks) => { for (let i = 0; i < blocks; i += 1) await rpc('evm_mine'); },
    usdcOf: async (a) => pub.readContract({ address: token, abi: compiled.TestUSDC.abi, functionName: 'balanceOf', args: [a] }) as Promise<bigint>,
    setPrice: async (answer8) => {
      const hash = await wallet.writeContract({ address: aggregator, abi: compiled.MockAggregator.abi, functionName: 'set', args: [answer8], account: owner, chain: null, gas: 300_000n } as never);
      const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error('set reverted');
    },
    close: () => node.close(),
  };
}

/** Sends eth_sendRawTransaction nowhere while `cut` is true: the connection is lost as the transfer goes out. */
export function flakyTransport(url: string, cut: { on: boolean }) {
  const inner = http(url);
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      if (cut.on && method === 'eth_sendRawTransaction') throw new HttpRequestError({ url, details: 'socket hang up' });
      return inner({}).request({ method, params } as never);
    },
  });
}

export type UsdcGateway = TestGateway & { clock: ManualClock; adapter: UsdcBaseAdapter };

/**
 * A PRODUCTION-mode gateway running the USDC adapter over the chain (no sandbox adapter, no fund shortcut),
 * its sanctions screening clear. Pass `dataDir` to restart over the same data.
 */
export async function usdcGateway(chain: Chain, o: { dataDir?: string; cut?: { on: boolean }; clock?: ManualClock; gasCeiling?: bigint } = {}): Promise<UsdcGateway> {
  const clock = o.clock ?? new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
  const { adapter, pricing } = usdcBaseRails({
    chainId: CHAIN_ID, usdcAddress: chain.token, confirmations: CONFIRMATIONS, treasuryKey: chain.treasuryKey, depositMnemonic: chain.depositMnemonic,
    clock, priceFeed: chain.aggregator, ...(o.gasCeiling !== undefined ? { gasCeiling: o.gasCeiling } : {}), transport: o.cut ? flakyTransport(chain.url, o.cut) : http(chain.url),
  });
  const adapters: RailAdapters = { providers: [adapter], screening: { screen: async () => 'clear' }, pricing };
  const t = await startTestGateway({
    clock, ...(o.dataDir ? { dataDir: o.dataDir, keepDataDir: true } : { keepDataDir: true }),
    config: { mode: 'production', rails: { adapters, pollIntervalMs: 0, reconcileIntervalMs: 0 } },
  });
  return Object.assign(t, { clock, adapter });
}
