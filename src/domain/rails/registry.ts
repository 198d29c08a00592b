/**
 * The adapters a gateway runs, and the choice of one for a request: by what it does
 * (top-ups, deposit addresses, a payout rail), optionally named by `treasuryProviderId`.
 * No adapter for the request is 501 NOT_SUPPORTED; naming one that does not serve it is
 * 400 naming the field.
 */
import type { RailProvider, ScreeningHealth } from 'agentpay-sdk/contract';
import { AppError, validationError } from '../../core/errors.js';
import type {
  DepositRail, PayoutRail, PricingService, Rail, RailAdapter, RailAdapters, RailAsset, SandboxWorldPort, ScreeningService, TopUpRail,
} from './adapters.js';

export type With<K extends 'topUps' | 'deposits' | 'payouts'> = RailAdapter & Required<Pick<RailAdapter, K>>;

export class RailRegistry {
  constructor(private adapters: RailAdapters | null) {}

  get providers(): RailAdapter[] {
    return this.adapters?.providers ?? [];
  }

  get screening(): ScreeningService | undefined {
    return this.adapters?.screening;
  }

  get pricing(): PricingService | undefined {
    return this.adapters?.pricing;
  }

  /** the simulated world, when the sandbox adapters run */
  get sandbox(): SandboxWorldPort | undefined {
    return this.adapters?.sandbox;
  }

  find(id: string): RailAdapter | undefined {
    return this.providers.find((a) => a.info.id === id);
  }

  private choose<K extends 'topUps' | 'deposits' | 'payouts'>(
    key: K, fits: (a: With<K>) => boolean, what: string, treasuryProviderId: string | undefined, need: Record<string, unknown> = {},
  ): With<K> {
    const candidates = this.providers.filter((a): a is With<K> => a[key] !== undefined && fits(a as With<K>));
    if (treasuryProviderId !== undefined) {
      const named = candidates.find((a) => a.info.id === treasuryProviderId);
      if (!named) {
        const ids = candidates.map((a) => a.info.id);
        throw validationError('treasuryProviderId', `${JSON.stringify(treasuryProviderId)} does not provide ${what} here; ${ids.length ? `use one of ${ids.join(', ')}` : 'no provider does'} (GET /v1/rail/providers)`);
      }
      return named;
    }
    if (candidates.length === 0) throw new AppError('NOT_SUPPORTED', `no rail provider of this gateway provides ${what} (GET /v1/rail/providers lists what runs)`, { reason: 'no_rail_provider', provides: key, ...need });
    return candidates[0]!;
  }

  topUpProvider(asset: RailAsset, id?: string): With<'topUps'> {
    return this.choose('topUps', (a) => (a.topUps as TopUpRail).currencies.includes(asset), `top-ups in ${asset}`, id, { asset });
  }

  depositProvider(asset: 'USDC', chain: 'base', id?: string): With<'deposits'> {
    return this.choose('deposits', (a) => (a.deposits as DepositRail).asset === asset && (a.deposits as DepositRail).chain === chain, `${asset} deposit addresses on ${chain}`, id, { asset, chain });
  }

  faucetProvider(): With<'deposits'> {
    return this.choose('deposits', (a) => typeof (a.deposits as DepositRail).faucet === 'function', 'a testnet faucet (faucets exist on testnet deployments only)', undefined, { faucet: true });
  }

  payoutProvider(rail: Rail, id?: string): With<'payouts'> {
    const serving = this.providers.filter((a) => a.payouts?.rails.includes(rail));
    if (id === undefined && serving.length > 1) {
      throw validationError('treasuryProviderId', `is required: ${serving.map((a) => a.info.id).join(' and ')} both serve ${rail}`);
    }
    return this.choose('payouts', (a) => (a.payouts as PayoutRail).rails.includes(rail), `payouts on ${rail}`, id, { rail });
  }

  /**
   * The screening service's health for GET /v1/rail/providers: its own `health()` when it has
   * one, else a screening of the zero address (down when it throws RailUnavailable).
   */
  async screeningView(): Promise<ScreeningHealth | undefined> {
    const s = this.screening;
    if (!s) return undefined;
    if (s.health) return s.health().then(({ status, detail }) => ({ status, detail }), (e: unknown) => ({ status: 'down' as const, detail: (e as Error).message }));
    try {
      await s.screen('0x0000000000000000000000000000000000000000');
      return { status: 'operational' };
    } catch (e) {
      return { status: 'down', detail: (e as Error).message };
    }
  }

  /** The provider records of GET /v1/rail/providers: the fields of the contract's, whatever else an adapter's info carries. */
  async views(): Promise<RailProvider[]> {
    return Promise.all(this.providers.map(async (a) => {
      const { info } = a;
      return {
        id: info.id, name: info.name, adapterType: info.adapterType, status: await a.status().catch(() => 'down' as const),
        roles: info.roles, currencies: info.currencies, rails: info.rails, topUps: info.topUps, depositAddresses: info.depositAddresses, faucet: info.faucet,
      };
    }));
  }
}
