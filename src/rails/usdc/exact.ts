/**
 * The chain side of x402's `exact` scheme (src/domain/payments/x402-exact.ts) over the USDC
 * adapter's node and treasury: EIP-712 signature checks with viem's verifyTypedData, the token's
 * authorizationState and balanceOf, and `transferWithAuthorization` sent by the treasury (which
 * pays the gas) as the treasury's one sender (the adapter's queue and fleet lease, so its nonces
 * never collide with payouts), then waited for the configured confirmations (its hash handed to
 * the caller as soon as it is sent). `lookup` tells the settlement duty what the chain says about
 * an authorization: unused (or sent and not mined yet), used by a transaction that moved exactly its
 * value to its payee (found by the hash kept, else by the token's AuthorizationUsed logs), or used
 * without such a transfer.
 */
import { encodeFunctionData, getAddress, parseAbi, parseAbiItem, parseEventLogs, parseSignature, verifyTypedData, type Address, type Hex, type TransactionReceipt } from 'viem';
import { RailUnavailable } from '../../domain/rails/adapters.js';
import type { ExactAuthorization, ExactChain, ExactOnChain } from '../../domain/payments/x402-exact.js';
import type { UsdcBaseAdapter } from './adapter.js';

export const EIP3009_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

const AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export interface ExactChainOptions {
  /** the token's EIP-712 domain; default USDC's: "USD Coin", "2" */
  eip712?: { name: string; version: string };
  /** gas a settlement may take at most; default 150000 */
  gasCeiling?: bigint;
  /** how often to poll for the receipt and the confirmations, ms; default 1000 */
  pollingIntervalMs?: number;
  /** how far back (blocks) `lookup` searches the token's AuthorizationUsed logs when the transaction is not known; default 50000 (about a day on Base) */
  lookbackBlocks?: bigint;
  /** blocks per eth_getLogs request of that search; default the adapter's `maxBlockRange` (2000) */
  maxBlockRange?: bigint;
}

export function usdcExactChain(adapter: UsdcBaseAdapter, o: ExactChainOptions = {}): ExactChain {
  const client = adapter.client;
  const token = adapter.usdc;
  const eip712 = o.eip712 ?? { name: 'USD Coin', version: '2' };
  const domain = { name: eip712.name, version: eip712.version, chainId: adapter.chainId, verifyingContract: token };
  const gasCeiling = o.gasCeiling ?? 150_000n;
  const lookback = o.lookbackBlocks ?? 50_000n;
  const range = o.maxBlockRange ?? adapter.maxBlockRange;
  const used = (from: string, nonce: string) => client.readContract({ address: token, abi: EIP3009_ABI, functionName: 'authorizationState', args: [getAddress(from), nonce as Hex] });
  /** whether `receipt` moved exactly the authorization's value from its payer to its payee, using its nonce */
  const transfers = (receipt: TransactionReceipt, a: ExactAuthorization): boolean => {
    if (receipt.status !== 'success') return false;
    const logs = parseEventLogs({ abi: EIP3009_ABI, logs: receipt.logs.filter((l) => l.address.toLowerCase() === token.toLowerCase()) });
    const usedHere = logs.some((l) => l.eventName === 'AuthorizationUsed' && l.args.authorizer.toLowerCase() === a.from.toLowerCase() && l.args.nonce.toLowerCase() === a.nonce.toLowerCase());
    const moved = logs.some((l) => l.eventName === 'Transfer' && l.args.from.toLowerCase() === a.from.toLowerCase() && l.args.to.toLowerCase() === a.to.toLowerCase() && l.args.value === BigInt(a.value));
    return usedHere && moved;
  };
  /**
   * The transaction that used the authorization, from the token's AuthorizationUsed logs over the last
   * `lookbackBlocks`, newest range first, in ranges of `maxBlockRange` blocks (the most a provider's
   * eth_getLogs answers; the adapter's deposit scan pages the same way); null when none moved its value.
   */
  const findByLogs = async (a: ExactAuthorization): Promise<TransactionReceipt | null> => {
    const latest = await client.getBlockNumber();
    const floor = latest > lookback ? latest - lookback : 0n;
    for (let end = latest; end >= floor; ) {
      const start = end - range + 1n > floor ? end - range + 1n : floor;
      const logs = await client.getLogs({
        address: token, event: AUTHORIZATION_USED, args: { authorizer: getAddress(a.from), nonce: a.nonce as Hex }, fromBlock: start, toBlock: end,
      });
      for (const log of logs) {
        const r = await client.getTransactionReceipt({ hash: log.transactionHash! });
        if (transfers(r, a)) return r;
      }
      if (start === floor) break;
      end = start - 1n;
    }
    return null;
  };

  const message = (a: ExactAuthorization) => ({
    from: getAddress(a.from), to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce as Hex,
  });

  return {
    network: `eip155:${adapter.chainId}`,
    asset: token,
    decimals: 6,
    payTo: adapter.treasuryAddress,
    eip712,

    async verifySignature(a, signature) {
      try {
        parseSignature(signature as Hex);
        return await verifyTypedData({ address: getAddress(a.from), domain, types: AUTHORIZATION_TYPES, primaryType: 'TransferWithAuthorization', message: message(a), signature: signature as Hex });
      } catch {
        return false;
      }
    },

    async chainTime() {
      const block = await client.getBlock({ blockTag: 'latest' });
      return Number(block.timestamp);
    },

    authorizationUsed: used,
    balanceOf: (owner) => client.readContract({ address: token, abi: EIP3009_ABI, functionName: 'balanceOf', args: [getAddress(owner) as Address] }),

    async lookup(a, txHash): Promise<ExactOnChain> {
      if (!(await used(a.from, a.nonce))) {
        // a transaction sent and not mined yet would still use it: do not send another beside it
        const sent = txHash ? await client.getTransaction({ hash: txHash as Hex }).catch(() => null) : null;
        return { state: 'unused', pending: sent && sent.blockNumber === null ? txHash : null };
      }
      let receipt = txHash ? await client.getTransactionReceipt({ hash: txHash as Hex }).catch(() => null) : null;
      if (!receipt || !transfers(receipt, a)) {
        receipt = await findByLogs(a);
        if (!receipt) return { state: 'used_elsewhere' };
      }
      const latest = await client.getBlockNumber();
      return { state: 'used', txHash: receipt.transactionHash, confirmed: latest - receipt.blockNumber + 1n >= adapter.confirmationsRequired };
    },

    async settle(a, signature, onSubmitted) {
      const m = message(a);
      const data = encodeFunctionData({ abi: EIP3009_ABI, functionName: 'transferWithAuthorization', args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature as Hex] });
      const hash = await adapter.asSender(async () => {
        let gas: bigint;
        try {
          gas = await client.estimateGas({ account: adapter.treasuryAddress, to: token, data });
        } catch (e) {
          throw new RailUnavailable('usdc', `transferWithAuthorization would revert: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
        }
        if (gas > gasCeiling) throw new RailUnavailable('usdc', `transferWithAuthorization needs ${gas} gas, over the ceiling of ${gasCeiling}`);
        const fees = await client.estimateFeesPerGas();
        const cap = adapter.maxFeePerGasWei;
        if (cap !== undefined && fees.maxFeePerGas > cap) throw new RailUnavailable('usdc', `gas costs ${fees.maxFeePerGas} wei now, over the ceiling of ${cap}`);
        const nonce = await client.getTransactionCount({ address: adapter.treasuryAddress, blockTag: 'pending' });
        const limit = (gas * 12n) / 10n > gasCeiling ? gasCeiling : (gas * 12n) / 10n;
        const raw = await adapter.signTreasuryTransaction({
          type: 'eip1559', chainId: adapter.chainId, to: token, data, nonce, gas: limit, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        });
        return client.sendRawTransaction({ serializedTransaction: raw });
      });
      // kept before the confirmations, so a crash while waiting leaves the transaction to look up, not to send again
      await onSubmitted?.(hash);
      const receipt = await client.waitForTransactionReceipt({ hash, confirmations: Number(adapter.confirmationsRequired), pollingInterval: o.pollingIntervalMs ?? 1000, timeout: 120_000 });
      if (receipt.status !== 'success') throw new RailUnavailable('usdc', `transferWithAuthorization ${hash} reverted`);
      return { txHash: hash };
    },
  };
}
