/**
 * The chain side of x402's `exact` scheme (src/domain/payments/x402-exact.ts) over the USDC
 * adapter's node and treasury: EIP-712 signature checks with viem's verifyTypedData, the token's
 * authorizationState and balanceOf, and `transferWithAuthorization` sent by the treasury (which
 * pays the gas) as the treasury's one sender (the adapter's queue and fleet lease, so its nonces
 * never collide with payouts), then waited for the configured confirmations.
 */
import { encodeFunctionData, getAddress, parseAbi, parseSignature, verifyTypedData, type Address, type Hex } from 'viem';
import { RailUnavailable } from '../../domain/rails/adapters.js';
import type { ExactAuthorization, ExactChain } from '../../domain/payments/x402-exact.js';
import type { UsdcBaseAdapter } from './adapter.js';

export const EIP3009_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);

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
}

export function usdcExactChain(adapter: UsdcBaseAdapter, o: ExactChainOptions = {}): ExactChain {
  const client = adapter.client;
  const token = adapter.usdc;
  const eip712 = o.eip712 ?? { name: 'USD Coin', version: '2' };
  const domain = { name: eip712.name, version: eip712.version, chainId: adapter.chainId, verifyingContract: token };
  const gasCeiling = o.gasCeiling ?? 150_000n;
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

    authorizationUsed: (from, nonce) => client.readContract({ address: token, abi: EIP3009_ABI, functionName: 'authorizationState', args: [getAddress(from), nonce as Hex] }),
    balanceOf: (owner) => client.readContract({ address: token, abi: EIP3009_ABI, functionName: 'balanceOf', args: [getAddress(owner) as Address] }),

    async settle(a, signature) {
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
      const receipt = await client.waitForTransactionReceipt({ hash, confirmations: Number(adapter.confirmationsRequired), pollingInterval: o.pollingIntervalMs ?? 1000, timeout: 120_000 });
      if (receipt.status !== 'success') throw new RailUnavailable('usdc', `transferWithAuthorization ${hash} reverted`);
      return { txHash: hash };
    },
  };
}
