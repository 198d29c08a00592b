/**
 * Everything of the rails a gateway serves, built once from its configuration: the
 * adapters that run (sandbox, none, or a deployment's own), and the services over them.
 */
import { randomBytes } from 'node:crypto';
import type { DomainContext } from '../platform/context.js';
import type { WalletService } from '../wallets/wallets.js';
import type { RailAdapters } from './adapters.js';
import { resolveRails, type RailsConfig, type RailsSettings } from './config.js';
import { DepositService } from './deposits.js';
import { PayoutDestinationService } from './destinations.js';
import { EventService } from '../platform/events.js';
import { RailJobs } from './jobs.js';
import { PayoutService } from './payouts/service.js';
import { Reconciler } from './reconciliation.js';
import { RailRegistry } from './registry.js';
import { SandboxControls } from './sandbox-controls.js';
import { TopUpService } from './topups.js';
import { RailTransactionService } from './transactions.js';

export interface RailServices {
  settings: RailsSettings;
  /** simulated money is allowed here (see simulatedCredits) */
  simulatedCredits: boolean;
  registry: RailRegistry;
  topUps: TopUpService;
  deposits: DepositService;
  destinations: PayoutDestinationService;
  payouts: PayoutService;
  transactions: RailTransactionService;
  events: EventService;
  reconciler: Reconciler;
  jobs: RailJobs;
  sandbox: SandboxControls;
}

/**
 * Whether simulated money is allowed: POST /v1/wallets/:id/fund credits, GET /v1/rail/providers
 * says `sandbox: true`, and reconciliation counts the sandbox credits as held. Only on a sandbox
 * gateway with no real payment provider connected (its rails are the sandbox adapters, or none):
 * with a real adapter, simulated credits could be paid out as real money.
 */
export function simulatedCredits(config: { mode: 'sandbox' | 'production'; rails?: RailsConfig }): boolean {
  return config.mode === 'sandbox' && typeof (config.rails?.adapters ?? 'sandbox') === 'string';
}

/** What the sandbox adapters are built with (src/rails/sandbox/adapters.ts). */
export interface SandboxAdapterOptions {
  webhookSecret: string;
  webhookToleranceMs: number;
  sanctioned: readonly string[];
  topUpLimitMinor: bigint;
  usdcConfirmMs: number;
}

/**
 * The services over the configured adapters. `sandboxAdapters` builds the simulated ones when the
 * configuration asks for them: the caller injects it (src/rails/sandbox), the domain knows only
 * the interfaces of ./adapters.ts.
 */
export function railServices(
  ctx: DomainContext,
  config: { mode: 'sandbox' | 'production'; rails?: RailsConfig },
  wallets: WalletService,
  sandboxAdapters: (ctx: DomainContext, opts: SandboxAdapterOptions) => RailAdapters,
): RailServices {
  const settings = resolveRails(config.rails, config.mode);
  let adapters: RailAdapters | null = null;
  if (settings.adapters === 'sandbox') {
    adapters = sandboxAdapters(ctx, {
      // a gateway without a data directory (tests building the app alone) gets a throwaway secret
      webhookSecret: settings.webhookSecret ?? `whsec_${randomBytes(24).toString('base64url')}`,
      webhookToleranceMs: settings.webhookToleranceMs,
      sanctioned: settings.sandbox.sanctioned,
      topUpLimitMinor: settings.sandbox.topUpLimitMinor,
      usdcConfirmMs: settings.sandbox.usdcConfirmMs,
    });
  } else if (settings.adapters !== 'none') {
    adapters = settings.adapters;
    for (const a of adapters.providers) a.attach?.(ctx.store);
  }
  const registry = new RailRegistry(adapters);
  const topUps = new TopUpService(ctx, registry, wallets);
  const deposits = new DepositService(ctx, registry, wallets, settings);
  const payouts = new PayoutService(ctx, registry, wallets, settings);
  const simulated = simulatedCredits(config);
  const reconciler = new Reconciler(ctx, registry, { sandbox: simulated, priceBandBps: settings.priceBandBps });
  return {
    settings,
    simulatedCredits: simulated,
    registry,
    topUps,
    deposits,
    destinations: new PayoutDestinationService(ctx, settings),
    payouts,
    transactions: new RailTransactionService(ctx),
    events: new EventService(ctx),
    reconciler,
    jobs: new RailJobs({ clock: ctx.clock, deposits, payouts, reconciler }, settings),
    sandbox: new SandboxControls(ctx, registry, { topUps, deposits, payouts }),
  };
}
