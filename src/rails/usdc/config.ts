/**
 * The `rails.usdc` section of a gateway config file: the chain, its node, the USDC contract,
 * the price feed, and where the treasury key and the deposit mnemonic come from (files of mode
 * 0600 or the environment; never the config file). docs/rails.md § USDC on Base.
 *
 *   "usdc": { "chainId": 8453, "rpcUrl": "https://…", "priceFeed": "0x…", "confirmations": 10,
 *             "treasuryKeyFile": "/etc/agentpay/usdc-treasury-key",
 *             "depositMnemonicFile": "/etc/agentpay/usdc-deposit-seed" }
 */
import { isAddress, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import type { Clock } from '../../core/clock.js';
import { RailsConfigError, secret } from '../secrets.js';
import { BASE_CHAINS, USDC_CONTRACTS, usdcBaseRails } from './adapter.js';

export interface UsdcSection {
  /** 8453 Base, 84532 Base Sepolia, or a local chain's id (sandbox mode only) */
  chainId: number;
  /** the node's JSON-RPC URL; else AGENTPAY_BASE_RPC_URL (a URL with an API key in it belongs there) */
  rpcUrl?: string;
  /** the USDC contract; default Circle's on Base and Base Sepolia */
  usdcAddress?: string;
  /** the USDC/USD aggregator (Chainlink's AggregatorV3Interface) on the same chain */
  priceFeed: string;
  /** how old the feed's answer may be, against the chain's latest block; default 26 h */
  priceMaxAgeMs?: number;
  /** default 10 */
  confirmations?: number;
  /** gas units a payout may take; default 120000 */
  gasCeiling?: number;
  /** wei per gas a payout may pay at most, as a decimal string (none by default) */
  maxFeePerGasWei?: string;
  /** blocks per eth_getLogs request; default 2000 (lower it for a provider with a smaller limit) */
  maxBlockRange?: number;
  /** the adapter id; default usdc-base */
  id?: string;
  /** a 0600 file holding the treasury's private key (0x + 64 hex); else AGENTPAY_USDC_TREASURY_KEY */
  treasuryKeyFile?: string;
  /** a 0600 file holding the deposit addresses' BIP-39 mnemonic; else AGENTPAY_USDC_DEPOSIT_MNEMONIC */
  depositMnemonicFile?: string;
}

const KEYS = ['chainId', 'rpcUrl', 'usdcAddress', 'priceFeed', 'priceMaxAgeMs', 'confirmations', 'gasCeiling', 'maxFeePerGasWei', 'maxBlockRange', 'id', 'treasuryKeyFile', 'depositMnemonicFile'];
const INLINE_SECRETS = ['treasuryKey', 'privateKey', 'depositMnemonic', 'mnemonic', 'seed', 'key', 'secret'];

const posInt = (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0;

export function checkUsdcSection(v: unknown, bad: (key: string, problem: string, hint?: string) => RailsConfigError): UsdcSection {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad('usdc', 'must be an object: {"chainId": 8453, "priceFeed": "0x…", …}');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (INLINE_SECRETS.includes(k)) {
      throw bad(`usdc.${k}`, 'is refused: keys never go in the config file', 'set AGENTPAY_USDC_TREASURY_KEY and AGENTPAY_USDC_DEPOSIT_MNEMONIC, or name 0600 files with treasuryKeyFile and depositMnemonicFile');
    }
    if (!KEYS.includes(k)) throw bad(`usdc.${k}`, `is not a setting (known: ${KEYS.join(', ')})`);
  }
  if (!posInt(o.chainId)) throw bad('usdc.chainId', 'must be the chain id: 8453 (Base), 84532 (Base Sepolia) or a local chain\'s');
  for (const k of ['rpcUrl', 'id', 'treasuryKeyFile', 'depositMnemonicFile'] as const) {
    if (o[k] !== undefined && (typeof o[k] !== 'string' || o[k] === '')) throw bad(`usdc.${k}`, 'must be a non-empty string');
  }
  if (o.rpcUrl !== undefined && !/^(https?|wss?):\/\//.test(o.rpcUrl as string)) throw bad('usdc.rpcUrl', 'must be an http(s) URL of the node');
  if (typeof o.priceFeed !== 'string' || !isAddress(o.priceFeed, { strict: false })) throw bad('usdc.priceFeed', 'must be the address of the USDC/USD aggregator on the chain (0x…)');
  if (o.usdcAddress !== undefined && (typeof o.usdcAddress !== 'string' || !isAddress(o.usdcAddress, { strict: false }))) throw bad('usdc.usdcAddress', 'must be an address (0x…)');
  if (o.usdcAddress === undefined && !USDC_CONTRACTS[o.chainId as number]) throw bad('usdc.usdcAddress', `is required on chain ${o.chainId as number} (only Base's and Base Sepolia's USDC are known)`);
  for (const k of ['priceMaxAgeMs', 'confirmations', 'gasCeiling', 'maxBlockRange'] as const) if (o[k] !== undefined && !posInt(o[k])) throw bad(`usdc.${k}`, 'must be a positive integer');
  if (o.maxFeePerGasWei !== undefined && (typeof o.maxFeePerGasWei !== 'string' || !/^[1-9][0-9]*$/.test(o.maxFeePerGasWei))) throw bad('usdc.maxFeePerGasWei', 'must be a positive integer of wei, as a string');
  return o as unknown as UsdcSection;
}

/** The adapter and price feed of a checked section, keys read (never put in a message). */
export function usdcFromSection(s: UsdcSection, o: { mode: 'sandbox' | 'production'; env: NodeJS.ProcessEnv; clock: Clock; baseDir: string }) {
  if (o.mode === 'production' && s.chainId !== 8453) {
    throw new RailsConfigError('rails.usdc.chainId', `rails.usdc.chainId ${s.chainId} (${BASE_CHAINS[s.chainId] ?? 'not Base'}) is refused in production mode: its USDC is not money`, 'use 8453 (Base) in production; try Base Sepolia (84532) on a sandbox gateway');
  }
  const rpcUrl = s.rpcUrl ?? o.env.AGENTPAY_BASE_RPC_URL?.trim();
  if (!rpcUrl) throw new RailsConfigError('rails.usdc.rpcUrl', 'the USDC adapter needs the node\'s URL: rails.usdc.rpcUrl or AGENTPAY_BASE_RPC_URL', 'export AGENTPAY_BASE_RPC_URL=https://…');
  const who = 'the USDC adapter';
  const treasuryKey = secret('usdc.treasuryKeyFile', s.treasuryKeyFile, 'AGENTPAY_USDC_TREASURY_KEY', o.env, o.baseDir, who);
  if (!/^0x[0-9a-fA-F]{64}$/.test(treasuryKey)) {
    throw new RailsConfigError('rails.usdc.treasuryKeyFile', 'the USDC treasury key is not a private key (0x followed by 64 hex digits)', 'put the key alone in the file (or AGENTPAY_USDC_TREASURY_KEY)');
  }
  const depositMnemonic = secret('usdc.depositMnemonicFile', s.depositMnemonicFile, 'AGENTPAY_USDC_DEPOSIT_MNEMONIC', o.env, o.baseDir, who);
  try {
    mnemonicToAccount(depositMnemonic);
  } catch {
    throw new RailsConfigError('rails.usdc.depositMnemonicFile', 'the USDC deposit mnemonic is not a BIP-39 mnemonic', 'put the 12 or 24 words alone in the file (or AGENTPAY_USDC_DEPOSIT_MNEMONIC)');
  }
  return usdcBaseRails({
    chainId: s.chainId, rpcUrl, treasuryKey: treasuryKey as Hex, depositMnemonic, clock: o.clock, priceFeed: s.priceFeed as Address,
    ...(s.usdcAddress ? { usdcAddress: s.usdcAddress as Address } : {}),
    ...(s.confirmations !== undefined ? { confirmations: s.confirmations } : {}),
    ...(s.gasCeiling !== undefined ? { gasCeiling: BigInt(s.gasCeiling) } : {}),
    ...(s.maxFeePerGasWei !== undefined ? { maxFeePerGasWei: BigInt(s.maxFeePerGasWei) } : {}),
    ...(s.priceMaxAgeMs !== undefined ? { priceMaxAgeMs: s.priceMaxAgeMs } : {}),
    ...(s.maxBlockRange !== undefined ? { maxBlockRange: s.maxBlockRange } : {}),
    ...(s.id !== undefined ? { id: s.id } : {}),
  });
}
