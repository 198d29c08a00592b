/**
 * USDC on Base through viem: one adapter for deposits (an address per wallet, Transfer logs
 * credited after the configured confirmations), payouts (an ERC-20 `transfer` from the
 * treasury), and the treasury view (the chain's balances of the treasury and of every deposit
 * address), plus a price feed reading a Chainlink-style aggregator. docs/rails.md § USDC on Base.
 *
 * - Deposit addresses are derived from a mnemonic along m/44'/60'/0'/a/b/c, where a, b, c are
 *   three 31-bit words of sha256(wallet id): the same wallet gets the same address on every
 *   instance and after any restart, and no index needs to be allocated (collisions need 2^46
 *   wallets). Deposits are not swept: they stay at their addresses, the treasury view counts
 *   them, and the deposit keys are needed only to move them by hand (nobody pays gas for them).
 * - Deposits are read only from blocks with the configured confirmations, so a deposit lost to
 *   a reorg before then is never seen, hence never credited. Each is credited once per
 *   `<tx hash>:<log index>` (the domain's unique external reference). The scan position the
 *   domain has ingested through is kept in the store, so a restart resumes there.
 * - A payout is signed with the chain's pending nonce while holding the sender lease (one
 *   sender per treasury across the fleet), and its signed transaction recorded in the store
 *   before it is broadcast: a restart or a second instance finds it by payout id and sends
 *   that same transaction again, never a second one. It is `confirmed` with the confirmations,
 *   `returned` (the domain re-credits the seller, once) when it reverted, or when its nonce was
 *   taken by another transaction in a confirmed block (dropped).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  BaseError, HttpRequestError, RpcError, TimeoutError, createPublicClient, decodeEventLog, encodeFunctionData, getAddress, http, isAddress, keccak256,
  parseAbi, type Address, type Hex, type PublicClient, type Transport,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Clock } from '../../core/clock.js';
import {
  RailUnavailable,
  type AdapterStatus, type DepositRail, type ObservedDeposit, type PayoutRail, type PayoutRailRecord, type PricingService, type RailAdapter, type TreasuryView,
} from '../../domain/rails/adapters.js';
import type { Store } from '../../store/store.js';
import { AdapterState } from './state.js';

/** Circle's USDC contracts. */
export const USDC_CONTRACTS: Record<number, Address> = {
  8453: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', // Base
  84532: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', // Base Sepolia
};
export const BASE_CHAINS: Record<number, string> = { 8453: 'Base', 84532: 'Base Sepolia' };

export const ERC20_ABI = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);
export const AGGREGATOR_ABI = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

export interface UsdcBaseOptions {
  /** the adapter id (treasuryProviderId); default `usdc-base` */
  id?: string;
  /** 8453 (Base), 84532 (Base Sepolia), or a local chain's id */
  chainId: number;
  /** the JSON-RPC endpoint (may carry an API key: never logged) */
  rpcUrl?: string;
  /** instead of rpcUrl (tests) */
  transport?: Transport;
  /** default: Circle's USDC on Base or Base Sepolia; required on another chain */
  usdcAddress?: Address;
  /** blocks a transfer needs (its own included) before it counts; default 10 */
  confirmations?: number;
  /** the treasury's private key (0x + 64 hex), which pays out and pays the gas */
  treasuryKey: Hex;
  /** BIP-39 mnemonic the deposit addresses are derived from */
  depositMnemonic: string;
  /** gas units a payout's transfer may take at most; default 120000 */
  gasCeiling?: bigint;
  /** wei per gas a payout may pay at most (none by default) */
  maxFeePerGasWei?: bigint;
  /** blocks per getLogs request; default 2000 */
  maxBlockRange?: number;
  /** the sender lease's length; default 60 s */
  senderLeaseMs?: number;
  clock: Clock;
}

type PayoutRecord = {
  payoutId: string; txHash: Hex; raw: Hex; nonce: string; destination: Address; amountMinor: string;
  /** `rejected`: the node refused it when first sent; the payout was failed and re-credited */
  state: 'signed' | 'rejected'; createdAt: number;
};
type AddressRecord = { address: string; walletId: string; path: string; createdAtBlock: string };
type CursorRecord = { ingestedThrough: string };
type LeaseRecord = { holder: string | null; until: number };

const message = (e: unknown) => (e instanceof BaseError ? e.shortMessage : e instanceof Error ? e.message : String(e));

/** The node answered with a JSON-RPC error (it refused), as opposed to no answer at all. */
function answeredWithError(e: unknown): boolean {
  if (!(e instanceof BaseError)) return false;
  if (e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError)) return false;
  return !!e.walk((x) => x instanceof RpcError && x.code !== -1);
}

/** m/44'/60'/0'/a/b/c from sha256(wallet id): three non-hardened 31-bit words. */
export function depositPath(walletId: string): `m/44'/60'/${string}` {
  const h = createHash('sha256').update(walletId).digest();
  const w = [0, 4, 8].map((i) => h.readUInt32BE(i) & 0x7fffffff);
  return `m/44'/60'/0'/${w[0]}/${w[1]}/${w[2]}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class UsdcBaseAdapter implements RailAdapter {
  readonly info;
  readonly deposits: DepositRail;
  readonly payouts: PayoutRail;
  readonly treasury: TreasuryView;
  readonly client: PublicClient;
  readonly usdc: Address;
  readonly treasuryAddress: Address;
  private readonly account: PrivateKeyAccount;
  /** the deposit address of an HD path (the mnemonic is held in this closure only) */
  private readonly deriveAddress: (path: `m/44'/60'/${string}`) => string;
  /** the options without the keys */
  private readonly o: Omit<UsdcBaseOptions, 'treasuryKey' | 'depositMnemonic' | 'rpcUrl'>;
  private readonly state: AdapterState;
  private readonly confirmations: bigint;
  private readonly gasCeiling: bigint;
  /** blocks per eth_getLogs request (the deposit scan's, and the x402 `exact` chain's search by logs) */
  readonly maxBlockRange: bigint;
  private readonly holder = randomBytes(8).toString('hex');
  /** this instance's sends, one at a time (the lease is per instance) */
  private sending: Promise<unknown> = Promise.resolve();

  constructor(options: UsdcBaseOptions) {
    const { treasuryKey, depositMnemonic, rpcUrl, ...rest } = options;
    const o = rest;
    this.o = rest;
    const id = o.id ?? 'usdc-base';
    const usdc = o.usdcAddress ?? USDC_CONTRACTS[o.chainId];
    if (!usdc) throw new Error(`no USDC contract is known on chain ${o.chainId}: configure its address`);
    this.usdc = getAddress(usdc);
    const transport = o.transport ?? (rpcUrl ? http(rpcUrl, { retryCount: 1, timeout: 20_000 }) : undefined);
    if (!transport) throw new Error('the USDC adapter needs an RPC URL');
    // no caching of the block number: confirmations are counted from a fresh head
    this.client = createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
    this.account = privateKeyToAccount(treasuryKey);
    this.treasuryAddress = this.account.address;
    this.deriveAddress = (path) => mnemonicToAccount(depositMnemonic, { path }).address.toLowerCase();
    this.confirmations = BigInt(o.confirmations ?? 10);
    if (this.confirmations < 1n) throw new Error('confirmations must be at least 1');
    this.gasCeiling = o.gasCeiling ?? 120_000n;
    this.maxBlockRange = BigInt(o.maxBlockRange ?? 2000);
    this.state = new AdapterState(`usdc:${id}`, () => o.clock.now());
    const chainName = BASE_CHAINS[o.chainId] ?? `chain ${o.chainId}`;
    this.info = {
      id, name: `USDC on ${chainName}`, adapterType: 'usdc-base', roles: ['funding', 'payout'] as ('funding' | 'payout')[], currencies: ['USDC' as const],
      rails: ['usdc_base' as const], topUps: false, depositAddresses: true, faucet: false,
    };
    this.deposits = {
      chain: 'base', asset: 'USDC',
      createAddress: (walletId) => this.createAddress(walletId),
      observedDeposits: (cursor) => this.observedDeposits(cursor),
      lookupDeposit: (ref) => this.lookupDeposit(ref),
    };
    this.payouts = {
      rails: ['usdc_base'],
      submit: (p) => this.submit(p),
      status: (ref) => this.payoutStatus(ref),
      lookup: (payoutId) => this.lookupPayout(payoutId),
    };
    this.treasury = { balance: () => this.holdings() };
  }

  attach(store: Store): void {
    this.state.attach(store);
  }

  /** operational; degraded when the treasury has no ETH for gas; down when the node does not answer the chain expected */
  async status(): Promise<AdapterStatus> {
    try {
      const [chainId, eth] = await Promise.all([this.client.getChainId(), this.client.getBalance({ address: this.treasuryAddress })]);
      if (chainId !== this.o.chainId) return 'down';
      return eth > 0n ? 'operational' : 'degraded';
    } catch {
      return 'down';
    }
  }

  private async call<T>(what: string, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof RailUnavailable) throw e;
      throw new RailUnavailable('usdc', `the Base node did not answer ${what}: ${message(e)}`);
    }
  }

  // ---- deposits ----

  private async createAddress(walletId: string): Promise<string> {
    const path = depositPath(walletId);
    const address = this.deriveAddress(path);
    const head = await this.call('eth_blockNumber', () => this.client.getBlockNumber());
    return this.state.update<AddressRecord, string>('address', address, (cur) => (cur
      ? { result: cur.address }
      : { write: { address, walletId, path, createdAtBlock: head.toString() }, result: address }));
  }

  /**
   * Transfers of USDC to the deposit addresses in blocks with the confirmations, from where the
   * domain last ingested (`cursor`: the domain passes back what it got, once it has recorded
   * those deposits; undefined after a restart: the stored position) up to the safe head.
   */
  private async observedDeposits(cursor: string | undefined): Promise<{ deposits: ObservedDeposit[]; cursor: string }> {
    if (cursor !== undefined) {
      await this.state.update<CursorRecord, void>('cursor', 'deposits', () => ({ write: { ingestedThrough: cursor }, result: undefined }));
    }
    const addresses = await this.state.list<AddressRecord>('address');
    const head = await this.call('eth_blockNumber', () => this.client.getBlockNumber());
    const safe = head - this.confirmations + 1n;
    let from: bigint;
    if (cursor !== undefined) from = BigInt(cursor) + 1n;
    else {
      const stored = await this.state.get<CursorRecord>('cursor', 'deposits');
      if (stored) from = BigInt(stored.ingestedThrough) + 1n;
      else if (addresses.length) from = addresses.reduce((m, a) => (BigInt(a.createdAtBlock) < m ? BigInt(a.createdAtBlock) : m), BigInt(addresses[0]!.createdAtBlock));
      else from = safe + 1n;
    }
    if (safe < from) return { deposits: [], cursor: (from - 1n).toString() };
    const deposits: ObservedDeposit[] = [];
    let to = from - 1n;
    // at most 10 ranges a call: a long catch-up goes on at the next run
    for (let i = 0; i < 10 && to < safe; i += 1) {
      const start = to + 1n;
      const end = start + this.maxBlockRange - 1n < safe ? start + this.maxBlockRange - 1n : safe;
      for (let k = 0; k < addresses.length; k += 200) {
        const chunk = addresses.slice(k, k + 200).map((a) => getAddress(a.address));
        const logs = await this.call('eth_getLogs', () => this.client.getLogs({
          address: this.usdc, event: ERC20_ABI[0], args: { to: chunk }, fromBlock: start, toBlock: end, strict: true,
        }));
        for (const l of logs) {
          deposits.push({
            externalRef: `${l.transactionHash}:${l.logIndex}`, address: l.args.to.toLowerCase(), amountMinor: l.args.value, asset: 'USDC', observedAt: this.o.clock.now(),
          });
        }
      }
      to = end;
    }
    return { deposits, cursor: to.toString() };
  }

  private async lookupDeposit(ref: string): Promise<ObservedDeposit | undefined> {
    const m = /^(0x[0-9a-fA-F]{64}):(\d+)$/.exec(ref);
    if (!m) return undefined;
    const receipt = await this.receipt(m[1] as Hex);
    const log = receipt?.logs.find((l) => l.logIndex === Number(m[2]) && getAddress(l.address) === this.usdc);
    if (!receipt || !log || receipt.status !== 'success') return undefined;
    const ev = decodeEventLog({ abi: ERC20_ABI, data: log.data, topics: log.topics });
    if (ev.eventName !== 'Transfer') return undefined;
    return { externalRef: ref, address: ev.args.to.toLowerCase(), amountMinor: ev.args.value, asset: 'USDC', observedAt: this.o.clock.now() };
  }

  private async receipt(hash: Hex) {
    return this.call('eth_getTransactionReceipt', () => this.client.getTransactionReceipt({ hash }).catch((e: unknown) => {
      if (e instanceof BaseError && e.name === 'TransactionReceiptNotFoundError') return undefined;
      throw e;
    }));
  }

  /** The deposit addresses made so far, with the wallet and HD path of each (to sweep or audit them by hand). */
  async depositAddresses(): Promise<{ address: string; walletId: string; path: string }[]> {
    return (await this.state.list<AddressRecord>('address')).map(({ address, walletId, path }) => ({ address, walletId, path }));
  }

  // ---- treasury ----

  /** The USDC at the treasury and at every deposit address (deposits are not swept). */
  private async holdings(): Promise<{ asset: 'USDC'; amountMinor: bigint }> {
    const owners = [this.treasuryAddress, ...(await this.state.list<AddressRecord>('address')).map((a) => getAddress(a.address))];
    let total = 0n;
    for (let k = 0; k < owners.length; k += 50) {
      const part = await this.call('balanceOf', () => Promise.all(owners.slice(k, k + 50).map((owner) =>
        this.client.readContract({ address: this.usdc, abi: ERC20_ABI, functionName: 'balanceOf', args: [owner] }))));
      total += part.reduce((s, b) => s + b, 0n);
    }
    return { asset: 'USDC', amountMinor: total };
  }

  // ---- payouts ----

  private expectedBy(): number {
    return this.o.clock.now() + Number(this.confirmations) * 2_000 + 5 * 60_000;
  }

  private async submit(p: { payoutId: string; rail: string; destination: string; amountMinor: bigint; asset: string }) {
    if (p.rail !== 'usdc_base' || p.asset !== 'USDC') throw new RailUnavailable('usdc', `the USDC adapter pays out USDC on usdc_base only, not ${p.asset} on ${p.rail}`);
    if (!isAddress(p.destination, { strict: false })) throw new RailUnavailable('usdc', `the destination ${p.destination} is not an address`);
    if (p.amountMinor <= 0n) throw new RailUnavailable('usdc', 'the amount must be positive');
    const known = await this.state.get<PayoutRecord>('payout', p.payoutId);
    if (known) return this.resend(known);
    const turn = this.sending.then(() => this.send(p));
    this.sending = turn.catch(() => undefined);
    return turn;
  }

  /** Signs, records and broadcasts one payout under the sender lease, after this instance's earlier sends. */
  private async send(p: { payoutId: string; destination: string; amountMinor: bigint }) {
    await this.acquireLease();
    let record: PayoutRecord;
    try {
      const again = await this.state.get<PayoutRecord>('payout', p.payoutId);
      if (again) return this.resend(again);
      const to = getAddress(p.destination);
      const data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [to, p.amountMinor] });
      const nonce = await this.call('eth_getTransactionCount', () => this.client.getTransactionCount({ address: this.treasuryAddress, blockTag: 'pending' }));
      let gas: bigint;
      try {
        gas = await this.client.estimateGas({ account: this.treasuryAddress, to: this.usdc, data });
      } catch (e) {
        if (!answeredWithError(e)) throw new RailUnavailable('usdc', `the Base node did not answer eth_estimateGas: ${message(e)}`);
        throw new RailUnavailable('usdc', `the transfer would fail (treasury short of USDC, or the token refuses it): ${message(e)}`);
      }
      if (gas > this.gasCeiling) throw new RailUnavailable('usdc', `the transfer needs ${gas} gas, over the ceiling of ${this.gasCeiling}`);
      const fees = await this.call('fees', () => this.client.estimateFeesPerGas());
      if (this.o.maxFeePerGasWei !== undefined && fees.maxFeePerGas > this.o.maxFeePerGasWei) {
        throw new RailUnavailable('usdc', `gas costs ${fees.maxFeePerGas} wei now, over the ceiling of ${this.o.maxFeePerGasWei}`);
      }
      // a margin over the estimate, within the ceiling
      const limit = (gas * 12n) / 10n > this.gasCeiling ? this.gasCeiling : (gas * 12n) / 10n;
      const raw = await this.account.signTransaction({
        type: 'eip1559', chainId: this.o.chainId, to: this.usdc, data, nonce, gas: limit,
        maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const fresh: PayoutRecord = {
        payoutId: p.payoutId, txHash: keccak256(raw), raw, nonce: nonce.toString(), destination: to, amountMinor: p.amountMinor.toString(),
        state: 'signed', createdAt: this.o.clock.now(),
      };
      // recorded before it is sent: whoever wrote first owns the payout id
      // (with its hash's index, in the same transaction)
      record = await this.state.transaction(async (s) => {
        const cur = await s.get<PayoutRecord>('payout', p.payoutId);
        if (cur) return cur;
        await s.put('payout', p.payoutId, fresh);
        await s.put('tx', fresh.txHash, { payoutId: p.payoutId });
        return fresh;
      });
      if (record !== fresh) return this.resend(record);
      try {
        await this.client.sendRawTransaction({ serializedTransaction: raw });
      } catch (e) {
        if (/already known|known transaction/i.test(message(e))) return { externalRef: record.txHash, expectedBy: this.expectedBy() };
        if (answeredWithError(e)) {
          // the node refused it (no gas money, a bad nonce): nothing is on its way; the payout fails
          await this.state.update<PayoutRecord, void>('payout', p.payoutId, (cur) => ({ write: { ...cur!, state: 'rejected' }, result: undefined }));
          throw new RailUnavailable('usdc', `the Base node refused the transfer: ${message(e)}`);
        }
        // no answer: it may be on its way; the domain submits again, and the same transaction is sent again
        throw new Error(`the transfer ${record.txHash} was signed, but sending it got no answer: ${message(e)}`);
      }
    } finally {
      await this.releaseLease();
    }
    return { externalRef: record.txHash, expectedBy: this.expectedBy() };
  }

  /** Sends a recorded transaction again (harmless if the node has it or it was mined) and answers its hash. */
  private async resend(r: PayoutRecord) {
    if (r.state === 'rejected') throw new RailUnavailable('usdc', `payout ${r.payoutId} was refused by the Base node`);
    await this.client.sendRawTransaction({ serializedTransaction: r.raw }).catch(() => undefined);
    return { externalRef: r.txHash, expectedBy: this.expectedBy() };
  }

  /**
   * Runs `f` as the treasury's one sender (this instance's queue, and the fleet's lease): the
   * nonce `f` signs with is its alone. For the x402 `exact` settlements (./exact.ts).
   */
  asSender<T>(f: () => Promise<T>): Promise<T> {
    const turn = this.sending.then(async () => {
      await this.acquireLease();
      try {
        return await f();
      } finally {
        await this.releaseLease();
      }
    });
    this.sending = turn.catch(() => undefined);
    return turn;
  }

  /** Signs a transaction with the treasury's key (which never leaves this object). */
  signTreasuryTransaction(tx: Parameters<PrivateKeyAccount['signTransaction']>[0]): Promise<Hex> {
    return this.account.signTransaction(tx);
  }

  get chainId(): number {
    return this.o.chainId;
  }

  get confirmationsRequired(): bigint {
    return this.confirmations;
  }

  get maxFeePerGasWei(): bigint | undefined {
    return this.o.maxFeePerGasWei;
  }

  private async acquireLease(): Promise<void> {
    const leaseMs = this.o.senderLeaseMs ?? 60_000;
    for (let i = 0; i < 50; i += 1) {
      const now = this.o.clock.now();
      const got = await this.state.update<LeaseRecord, boolean>('lease', this.treasuryAddress, (cur) => {
        if (cur && cur.holder !== null && cur.holder !== this.holder && cur.until > now) return { result: false };
        return { write: { holder: this.holder, until: now + leaseMs }, result: true };
      });
      if (got) return;
      await sleep(100);
    }
    throw new RailUnavailable('usdc', 'another instance is sending from the treasury; retry shortly');
  }

  private async releaseLease(): Promise<void> {
    await this.state.update<LeaseRecord, void>('lease', this.treasuryAddress, (cur) => (cur?.holder === this.holder
      ? { write: { holder: null, until: 0 }, result: undefined }
      : { result: undefined })).catch(() => undefined);
  }

  private async payoutStatus(txHash: string): Promise<PayoutRailRecord | undefined> {
    const idx = await this.state.get<{ payoutId: string }>('tx', txHash);
    const r = idx && (await this.state.get<PayoutRecord>('payout', idx.payoutId));
    if (!r) return undefined;
    return this.recordState(r);
  }

  private async lookupPayout(payoutId: string): Promise<(PayoutRailRecord & { externalRef: string }) | undefined> {
    const r = await this.state.get<PayoutRecord>('payout', payoutId);
    if (!r) return undefined;
    const rec = await this.recordState(r);
    if (r.state === 'rejected' && rec.state !== 'confirmed') return undefined;
    return { ...rec, externalRef: r.txHash };
  }

  /**
   * confirmed: mined successfully with the confirmations; returned: reverted with them, or
   * dropped (its nonce used by another transaction in a confirmed block); else submitted (and
   * sent again, in case the node forgot it).
   */
  private async recordState(r: PayoutRecord): Promise<PayoutRailRecord> {
    const base = { rail: 'usdc_base' as const, destination: r.destination.toLowerCase(), amountMinor: BigInt(r.amountMinor), asset: 'USDC' as const };
    const head = await this.call('eth_blockNumber', () => this.client.getBlockNumber());
    const receipt = await this.receipt(r.txHash);
    if (receipt) {
      if (head - receipt.blockNumber + 1n < this.confirmations) return { ...base, state: 'submitted' };
      if (receipt.status === 'success') return { ...base, state: 'confirmed' };
      return { ...base, state: 'returned', reason: `the USDC transfer ${r.txHash} reverted on chain (block ${receipt.blockNumber})` };
    }
    const safe = head - this.confirmations + 1n;
    if (safe >= 0n) {
      const used = await this.call('eth_getTransactionCount', () => this.client.getTransactionCount({ address: this.treasuryAddress, blockNumber: safe }));
      if (BigInt(used) > BigInt(r.nonce)) {
        return { ...base, state: 'returned', reason: `the USDC transfer ${r.txHash} was dropped: its nonce ${r.nonce} was used by another transaction` };
      }
    }
    if (r.state === 'signed') await this.client.sendRawTransaction({ serializedTransaction: r.raw }).catch(() => undefined);
    return { ...base, state: 'submitted' };
  }
}

/**
 * The USD price of USDC from a Chainlink-style aggregator (AggregatorV3Interface) on the same
 * chain: `latestRoundData().answer` scaled by `decimals()`. Unavailable when the answer is not
 * positive, or older than `maxAgeMs` against the chain's latest block.
 */
export class AggregatorPriceFeed implements PricingService {
  private decimals: number | undefined;

  constructor(private o: { client: PublicClient; aggregator: Address; maxAgeMs?: number }) {}

  async usdcPriceMicros(): Promise<bigint> {
    try {
      this.decimals ??= await this.o.client.readContract({ address: this.o.aggregator, abi: AGGREGATOR_ABI, functionName: 'decimals' });
      const [round, block] = await Promise.all([
        this.o.client.readContract({ address: this.o.aggregator, abi: AGGREGATOR_ABI, functionName: 'latestRoundData' }),
        this.o.client.getBlock({ blockTag: 'latest' }),
      ]);
      const [, answer, , updatedAt] = round;
      if (answer <= 0n) throw new RailUnavailable('pricing', `the USDC price feed answers ${answer}`);
      const maxAgeMs = this.o.maxAgeMs ?? 26 * 3600_000;
      if ((block.timestamp - updatedAt) * 1000n > BigInt(maxAgeMs)) {
        throw new RailUnavailable('pricing', `the USDC price feed was last updated ${block.timestamp - updatedAt} s ago, over ${maxAgeMs / 1000} s`);
      }
      const d = this.decimals;
      return d >= 6 ? answer / 10n ** BigInt(d - 6) : answer * 10n ** BigInt(6 - d);
    } catch (e) {
      if (e instanceof RailUnavailable) throw e;
      throw new RailUnavailable('pricing', `the USDC price feed cannot be read: ${message(e)}`);
    }
  }
}

/** The adapter and its price feed (sharing the client). */
export function usdcBaseRails(o: UsdcBaseOptions & { priceFeed: Address; priceMaxAgeMs?: number }): { adapter: UsdcBaseAdapter; pricing: AggregatorPriceFeed } {
  const adapter = new UsdcBaseAdapter(o);
  const pricing = new AggregatorPriceFeed({ client: adapter.client, aggregator: getAddress(o.priceFeed), ...(o.priceMaxAgeMs !== undefined ? { maxAgeMs: o.priceMaxAgeMs } : {}) });
  return { adapter, pricing };
}

