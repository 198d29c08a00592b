/**
 * The sandbox controls behind POST /v1/sandbox/...: they move the simulated world by
 * hand (a payer finishing a top-up, a deposit arriving on the chain, a bank confirming
 * or returning a payout, the USDC price moving, a service going down) and then let the
 * platform react exactly as it would to the real thing: the processor's signed webhook
 * goes through the same verification and handler as the public webhook route, a
 * deposit is observed like any other, a payout is followed at its rail.
 *
 * Record controls act on the caller's own records (another tenant's is 404 and changes
 * nothing); the operator reaches every record. World settings are the operator's.
 */
import type { SandboxTopUpAnswer } from 'agentpay-sdk/contract';
import { AppError } from '../../core/errors.js';
import { parseMinor } from '../../core/money.js';
import type { RailTransaction } from '../../store/repos/rails.js';
import type { Principal } from '../tenancy/api-keys.js';
import type { DomainContext } from '../platform/context.js';
import type { DepositService } from './deposits.js';
import type { PayoutService } from './payouts/service.js';
import type { RailRegistry } from './registry.js';
import type { TopUpService } from './topups.js';
import { payoutView } from './views.js';
import type { SandboxSettingsPatch, SandboxWorldPort } from './adapters.js';

export class SandboxControls {
  constructor(
    private ctx: DomainContext,
    private registry: RailRegistry,
    private services: { topUps: TopUpService; deposits: DepositService; payouts: PayoutService },
  ) {}

  /** Refuses (501 NOT_SUPPORTED) unless the sandbox adapters run: for controls that act elsewhere (a paid call's expiry). */
  requireSandbox(): void {
    this.world();
  }

  private world(): SandboxWorldPort {
    const w = this.registry.sandbox;
    if (!w) throw new AppError('NOT_SUPPORTED', 'sandbox controls exist only on gateways running the sandbox rail adapters');
    return w;
  }

  private async own(p: Principal, id: string, kind: RailTransaction['kind']): Promise<RailTransaction> {
    const t = await this.ctx.store.read((r) => r.railTransactions.get(id));
    if (!t || t.kind !== kind || (t.tenantId !== p.tenantId && p.tenantKind !== 'operator')) {
      throw new AppError('NOT_FOUND', `${kind === 'topup' ? 'top-up' : kind} ${id} not found`, { id });
    }
    return t;
  }

  /**
   * The payer completes (or the processor declines) a top-up: the processor's signed
   * webhook is delivered to the platform and returned, so it can be delivered again by
   * hand (POST /v1/rail/webhooks/sandbox-processor) to see a duplicate refused.
   */
  async settleTopUp(p: Principal, id: string, outcome: 'succeeded' | 'declined', reason?: string): Promise<SandboxTopUpAnswer> {
    const world = this.world();
    const t = await this.own(p, id, 'topup');
    if (t.treasuryProviderId !== 'sandbox-processor') throw new AppError('NOT_SUPPORTED', `top-up ${id} is not at the sandbox processor`);
    const webhook = await world.settleIntent(t.externalRef!, outcome, reason);
    const { transaction } = await this.services.topUps.handleWebhook(t.treasuryProviderId, webhook.body, webhook.headers);
    return { transaction, webhook };
  }

  /**
   * USDC arrives on the sandbox chain at one of the caller's deposit addresses, and the
   * platform observes it at once: credited, or 409 DEPOSIT_HELD while the price is out of band.
   */
  async deposit(p: Principal, input: { address: string; amountMinor: unknown; from?: string }) {
    const world = this.world();
    const amount = parseMinor(input.amountMinor, 'amountMinor');
    const addr = await this.ctx.store.read((r) => r.depositAddresses.get(input.address.toLowerCase()));
    if (!addr || (addr.tenantId !== p.tenantId && p.tenantKind !== 'operator') || addr.treasuryProviderId !== 'sandbox-chain') {
      throw new AppError('NOT_FOUND', `${input.address} is not a sandbox deposit address of yours (POST /v1/wallets/:id/deposit-address makes one)`, { address: input.address });
    }
    const deposit = await world.depositIn(addr.address, amount, input.from ?? '0x00000000000000000000000000000000000000a1');
    const t = await this.services.deposits.ingest(addr.treasuryProviderId, deposit);
    return this.services.deposits.heldOrCredited(t!);
  }

  /**
   * The rail confirms a submitted payout now, or returns it (re-crediting the wallet). The
   * payout is followed first, so one whose rail time has passed is answered as confirmed,
   * as GET /v1/payouts/:id then says, not returned after the fact.
   */
  async settlePayout(p: Principal, id: string, outcome: 'confirmed' | 'returned', reason?: string) {
    const world = this.world();
    let t = await this.own(p, id, 'payout');
    if (t.externalRef === null) {
      if (t.state !== 'submitted') throw new AppError('CONFLICT', `payout ${id} is ${t.state}: it never reached a rail`, { state: t.state });
      // its submission's outcome is unknown so far: submit it again (refused: 503, it stays submitted)
      const claimed = await this.services.payouts.claimResubmission(t);
      // not claimed: changed meanwhile (re-read), or its first submission is running right now
      t = claimed ? await this.services.payouts.submit(claimed, 'again') : await this.own(p, id, 'payout');
      if (t.externalRef === null) {
        throw new AppError('CONFLICT', t.state === 'submitted' ? `payout ${id} is being submitted to its rail right now; retry in a moment` : `payout ${id} is ${t.state}: it never reached a rail`, { state: t.state });
      }
    }
    const state = await this.services.payouts.follow(t);
    if (state === 'submitted') {
      await world.settlePayout(t.externalRef!, outcome, reason);
      await this.services.payouts.follow(t);
    } else if (state !== outcome) {
      throw new AppError('CONFLICT', `payout ${id} is already ${state}; only a submitted payout is ${outcome} by the rail`, { state });
    }
    return { payout: payoutView((await this.ctx.store.read((r) => r.railTransactions.get(id)))!) };
  }

  settings() {
    return this.world().settings();
  }

  async updateSettings(patch: SandboxSettingsPatch) {
    return this.world().updateSettings(patch);
  }
}
