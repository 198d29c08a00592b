/**
 * USDC deposits: a deposit address per wallet, deposits observed on the chain and
 * credited in USD minor units at the USDC price. While the price is outside the band
 * (±0.5% of 1 USD by default), or the price feed is down, a deposit is `held`, not
 * credited at a guessed rate; the rail job retries held deposits until the price is back
 * in band. An observed deposit is recorded once (its chain reference is unique), so
 * observing it again credits nothing.
 */
import { AppError, validationError } from '../../core/errors.js';
import type { Repos } from '../../store/store.js';
import type { RailTransaction } from '../../store/repos/rails.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import { post } from '../wallets/ledger.js';
import type { WalletService } from '../wallets/wallets.js';
import { RailUnavailable, type ObservedDeposit } from './adapters.js';
import type { RailsSettings } from './config.js';
import { recordEvent } from '../platform/events.js';
import { formatPrice, inBand, usdcToUsdMinor } from './pricing.js';
import type { RailRegistry, With } from './registry.js';
import { depositAddressView, railTransactionView } from './views.js';

export interface DepositAddressInput {
  asset?: 'USDC';
  chain?: 'base';
  treasuryProviderId?: string;
}

/** The price now, or why there is none to credit at. */
type Quote = { ok: true; priceMicros: bigint } | { ok: false; priceMicros: bigint | null; reason: string };

export class DepositService {
  /** where each chain adapter's observation stopped; from the start after a restart (duplicates are ignored) */
  private cursors = new Map<string, string>();

  constructor(
    private ctx: DomainContext,
    private registry: RailRegistry,
    private wallets: WalletService,
    private settings: Pick<RailsSettings, 'priceBandBps' | 'faucetAmountMinor'>,
  ) {}

  /** The wallet's address on the chain, made on first request: idempotent. */
  async address(p: Principal, walletId: string, input: DepositAddressInput) {
    const wallet = await this.wallets.get(p, walletId);
    const adapter = this.registry.depositProvider(input.asset ?? 'USDC', input.chain ?? 'base', input.treasuryProviderId);
    return { address: depositAddressView(await this.ensureAddress(adapter, wallet.id, wallet.tenantId)) };
  }

  private async ensureAddress(adapter: With<'deposits'>, walletId: string, tenantId: string) {
    const { chain, asset } = adapter.deposits;
    const id = adapter.info.id;
    const existing = await this.ctx.store.read((r) => r.depositAddresses.find(walletId, chain, asset, id));
    if (existing) return existing;
    const address = (await adapter.deposits.createAddress(walletId)).toLowerCase();
    return this.ctx.store.tx(async (r) => {
      // a concurrent request may have stored it meanwhile
      const again = await r.depositAddresses.find(walletId, chain, asset, id);
      if (again) return again;
      const row = { address, walletId, tenantId, chain, asset, treasuryProviderId: id, createdAt: this.ctx.clock.now() };
      await r.depositAddresses.insert(row);
      return row;
    });
  }

  async addresses(p: Principal, walletId: string) {
    const wallet = await this.wallets.get(p, walletId);
    const list = await this.ctx.store.read((r) => r.depositAddresses.listByWallet(wallet.id));
    return { addresses: list.map(depositAddressView) };
  }

  /**
   * Testnets only: the chain's faucet sends test USDC to the wallet's deposit address
   * (made if needed, or `address` if it is one of the wallet's), and the deposit is
   * credited like any other: held (409 DEPOSIT_HELD, the transaction in the details)
   * while the price is out of band.
   */
  async faucet(p: Principal, walletId: string, input: { address?: string }) {
    const wallet = await this.wallets.get(p, walletId);
    const adapter = this.registry.faucetProvider();
    let address: string;
    if (input.address !== undefined) {
      const a = await this.ctx.store.read((r) => r.depositAddresses.get(input.address!.toLowerCase()));
      if (!a || a.walletId !== wallet.id || a.treasuryProviderId !== adapter.info.id) {
        throw validationError('address', `is not a deposit address of wallet ${wallet.id} on ${adapter.info.id}; omit it to use the wallet's own`);
      }
      address = a.address;
    } else {
      address = (await this.ensureAddress(adapter, wallet.id, wallet.tenantId)).address;
    }
    const deposit = await adapter.deposits.faucet!(address, this.settings.faucetAmountMinor);
    const t = await this.ingest(adapter.info.id, deposit);
    return this.heldOrCredited(t!);
  }

  /** The answer of a route that made a deposit: the transaction, or 409 DEPOSIT_HELD carrying it. */
  heldOrCredited(t: RailTransaction) {
    const transaction = railTransactionView(t);
    if (t.state === 'held') {
      throw new AppError('DEPOSIT_HELD', `the deposit arrived but is held: ${t.reason}; it is credited automatically once the USDC price is back within the band`, { transaction });
    }
    return { transaction };
  }

  private async quote(): Promise<Quote> {
    const pricing = this.registry.pricing;
    if (!pricing) return { ok: false, priceMicros: null, reason: 'no USDC price feed' };
    let priceMicros: bigint;
    try {
      priceMicros = await pricing.usdcPriceMicros();
    } catch (e) {
      if (e instanceof RailUnavailable) return { ok: false, priceMicros: null, reason: 'the USDC price feed is unavailable' };
      throw e;
    }
    if (!inBand(priceMicros, this.settings.priceBandBps)) {
      return { ok: false, priceMicros, reason: `USDC is at ${formatPrice(priceMicros)} USD, outside ±${this.settings.priceBandBps / 100}% of 1 USD` };
    }
    return { ok: true, priceMicros };
  }

  /**
   * Records one observed deposit (once: an already recorded chain reference is ignored)
   * and credits it at the price now, or holds it. Deposits to addresses that are not the
   * platform's are ignored. Returns the rail transaction, or undefined if ignored.
   */
  async ingest(treasuryProviderId: string, d: ObservedDeposit): Promise<RailTransaction | undefined> {
    const quote = await this.quote();
    return this.ctx.store.tx(async (r) => {
      const known = await r.railTransactions.byExternalRef(treasuryProviderId, d.externalRef);
      if (known) return known;
      const addr = await r.depositAddresses.get(d.address.toLowerCase());
      if (!addr || addr.treasuryProviderId !== treasuryProviderId) return undefined;
      const now = this.ctx.clock.now();
      const row: RailTransaction = {
        id: this.ctx.ids.next('deposit'), kind: 'deposit', tenantId: addr.tenantId, walletId: addr.walletId, treasuryProviderId,
        rail: 'usdc_base', state: 'pending', railAmountMinor: d.amountMinor, railCurrency: 'USDC', usdAmountMinor: null,
        externalRef: d.externalRef, counterparty: addr.address, priceMicros: null, reason: null, idempotencyKey: null, requestHash: null,
        hostedUrl: null, expectedBy: null, resubmittedAt: null, createdAt: now, updatedAt: now, settledAt: null,
      };
      await r.railTransactions.insert(row);
      if (quote.ok) return this.credit(r, row, quote.priceMicros);
      const held = { ...row, state: 'held' as const, reason: quote.reason, priceMicros: quote.priceMicros };
      await r.railTransactions.update(row.id, { state: 'held', reason: quote.reason, priceMicros: quote.priceMicros });
      await recordEvent(r, this.ctx, addr.tenantId, 'deposit.held', {
        transactionId: row.id, walletId: row.walletId, amountMinor: d.amountMinor.toString(), asset: 'USDC', reason: quote.reason,
      });
      return held;
    });
  }

  /** pending or held -> confirmed, with the `deposit` ledger entry, once. */
  private async credit(r: Repos, t: RailTransaction, priceMicros: bigint): Promise<RailTransaction> {
    const usd = usdcToUsdMinor(t.railAmountMinor, priceMicros);
    const now = this.ctx.clock.now();
    const patch = { state: 'confirmed' as const, usdAmountMinor: usd, priceMicros, reason: null, updatedAt: now, settledAt: now };
    if (!(await r.railTransactions.transition(t.id, ['pending', 'held'], patch))) return (await r.railTransactions.get(t.id))!;
    // dust below one cent is kept by the treasury: there is nothing to credit
    if (usd > 0n) {
      await post(r, this.ctx, {
        walletId: t.walletId, type: 'deposit', amountMinor: usd, currency: 'USD',
        reference: `deposit:${t.externalRef}`, memo: `${t.railAmountMinor} USDC base units at ${formatPrice(priceMicros)}`,
      });
      // announced in the same transaction as the ledger entry (docs/api/rails.md#events)
      const txHash = /^0x[0-9a-f]+/i.exec(t.externalRef ?? '')?.[0] ?? null;
      await recordEvent(r, this.ctx, t.tenantId, 'deposit.credited', {
        transactionId: t.id, walletId: t.walletId, amountMinor: usd.toString(), currency: 'USD',
        asset: 'USDC', assetAmountMinor: t.railAmountMinor.toString(), usdcPrice: formatPrice(priceMicros), txHash,
      });
    }
    return { ...t, ...patch };
  }

  /** Observes new deposits on every chain adapter; returns how many were recorded. */
  async observe(): Promise<number> {
    let n = 0;
    for (const a of this.registry.providers) {
      if (!a.deposits) continue;
      const { deposits, cursor } = await a.deposits.observedDeposits(this.cursors.get(a.info.id));
      for (const d of deposits) if (await this.ingest(a.info.id, d)) n += 1;
      this.cursors.set(a.info.id, cursor);
    }
    return n;
  }

  /** Credits held deposits if the price is back in band; returns how many were credited. */
  async retryHeld(): Promise<number> {
    const held = await this.ctx.store.read((r) => r.railTransactions.listByState('deposit', ['held'], 500));
    if (held.length === 0) return 0;
    const quote = await this.quote();
    if (!quote.ok) return 0;
    await this.ctx.store.tx(async (r) => {
      for (const t of held) await this.credit(r, t, quote.priceMicros);
    });
    return held.length;
  }
}
