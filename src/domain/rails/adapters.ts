/**
 * The rail adapter interfaces: everything the platform needs from the outside world of
 * money (a card/bank processor, a chain, a bank, a screening service, a price feed).
 * The domain code (top-ups, deposits, payouts, reconciliation) talks only to these; the
 * sandbox adapters (src/rails/sandbox, injected) implement them with a simulated world, and a real
 * adapter (a card processor, a USDC custodian) implements the same ones. docs/rails.md
 * says what each method must guarantee.
 *
 * Adapter methods may be slow (network): the domain never calls them inside a store
 * transaction. Amounts are bigint minor units of the asset named next to them: USD
 * cents, or USDC base units (6 decimals: 1_000_000 = 1 USDC).
 */
import type { Store } from '../../store/store.js';
import type { SandboxSettings, SignedWebhook } from 'agentpay-sdk/contract';

export const RAILS = ['bank_transfer', 'ach', 'usdc_base'] as const;
export type Rail = (typeof RAILS)[number];
export type RailAsset = 'USD' | 'USDC';
export type RailRole = 'funding' | 'payout';
export type AdapterStatus = 'operational' | 'degraded' | 'down';

/** The asset a payout rail carries. */
export const RAIL_ASSET: Record<Rail, { asset: RailAsset; chain: string }> = {
  bank_transfer: { asset: 'USD', chain: '' },
  ach: { asset: 'USD', chain: '' },
  usdc_base: { asset: 'USDC', chain: 'base' },
};

/** How GET /v1/rail/providers shows an adapter (status is asked for on each read). */
export interface RailProviderInfo {
  id: string;
  name: string;
  adapterType: string;
  roles: RailRole[];
  currencies: RailAsset[];
  rails: Rail[];
  topUps: boolean;
  depositAddresses: boolean;
  faucet: boolean;
}

/** One adapter: a provider of one or more of the capabilities below. */
export interface RailAdapter {
  readonly info: RailProviderInfo;
  status(): Promise<AdapterStatus>;
  topUps?: TopUpRail;
  deposits?: DepositRail;
  payouts?: PayoutRail;
  /** what the adapter holds for the platform, for reconciliation */
  treasury?: TreasuryView;
  /**
   * Called once with the gateway's store before anything is asked of the adapter: an adapter
   * that must remember things across restarts and instances (a chain adapter's transactions
   * and scan position) keeps them there (the generic object records of `Repos.sandboxObjects`, under kinds of its own).
   */
  attach?(store: Store): void;
}

// ---- funding: top-ups through a processor ----

export interface TopUpIntentResult {
  /** the processor's id of the intent; unique per adapter */
  externalRef: string;
  /** declined at once (e.g. over the processor's limit), or waiting for the payer */
  status: 'pending' | 'declined';
  hostedUrl?: string;
  clientSecret?: string;
  declineReason?: string;
}

/** A verified processor notification. */
export interface ProcessorEvent {
  id: string;
  type: 'topup.succeeded' | 'topup.declined';
  externalRef: string;
  amountMinor: bigint;
  currency: RailAsset;
  declineReason?: string;
}

export interface TopUpRail {
  currencies: RailAsset[];
  createIntent(input: { transactionId: string; walletId: string; amountMinor: bigint; currency: RailAsset }): Promise<TopUpIntentResult>;
  /**
   * Authenticates a webhook delivery (signature over the exact raw bytes, timestamp within
   * the tolerance) and parses it. Throws an AppError VALIDATION_FAILED naming the header
   * when it is forged, stale or malformed; nothing may be trusted before this returns.
   */
  verifyWebhook(rawBody: string, headers: Record<string, string | undefined>): ProcessorEvent;
  /** the processor's own record of an intent (reconciliation) */
  lookup(externalRef: string): Promise<{ status: 'pending' | 'succeeded' | 'declined'; amountMinor: bigint } | undefined>;
  /** JSON schema of the webhook body, for the gateway route that receives it */
  readonly webhookBodySchema: Record<string, unknown>;
}

// ---- chain: deposit addresses and observed deposits ----

export interface ObservedDeposit {
  /** unique per adapter: e.g. `<tx hash>:<log index>` */
  externalRef: string;
  /** the deposit address it arrived at */
  address: string;
  /** USDC base units */
  amountMinor: bigint;
  asset: 'USDC';
  observedAt: number;
}

export interface DepositRail {
  chain: 'base';
  asset: 'USDC';
  /** a fresh address for the wallet; the domain keeps it, so this is called once per wallet */
  createAddress(walletId: string): Promise<string>;
  /**
   * Deposits observed since `cursor` (undefined: from the start; the domain ignores ones it
   * already has), and the cursor to pass next time.
   */
  observedDeposits(cursor: string | undefined): Promise<{ deposits: ObservedDeposit[]; cursor: string }>;
  lookupDeposit(externalRef: string): Promise<ObservedDeposit | undefined>;
  /** testnets only: sends test USDC to the address and returns the deposit it makes */
  faucet?(address: string, amountMinor: bigint): Promise<ObservedDeposit>;
}

// ---- payouts ----

export type PayoutRailState = 'submitted' | 'confirmed' | 'returned';

export interface PayoutRailRecord {
  state: PayoutRailState;
  rail: Rail;
  destination: string;
  amountMinor: bigint;
  asset: RailAsset;
  reason?: string;
}

export interface PayoutRail {
  rails: Rail[];
  /**
   * Sends money. `payoutId` is the platform's id and the adapter's idempotency key: the
   * same id twice sends once, and answers the first even while the rail refuses new
   * payouts. Throws RailUnavailable only when the rail surely did not take it (refused,
   * down); any other error means the outcome is unknown, and the payout is submitted again.
   */
  submit(p: { payoutId: string; rail: Rail; destination: string; amountMinor: bigint; asset: RailAsset }): Promise<{ externalRef: string; expectedBy: number }>;
  status(externalRef: string): Promise<PayoutRailRecord | undefined>;
  /**
   * The rail's record of the payout it took under `payoutId`, if any (reconciliation: a payout
   * the platform failed and re-credited must not be on its way at the rail).
   */
  lookup(payoutId: string): Promise<(PayoutRailRecord & { externalRef: string }) | undefined>;
}

// ---- treasury, screening, pricing ----

export interface TreasuryView {
  /** the adapter's holdings for the platform in its asset's minor units */
  balance(): Promise<{ asset: RailAsset; amountMinor: bigint }>;
}

export interface ScreeningService {
  /** sanctions screening of a payout destination; throws RailUnavailable when down */
  screen(destination: string): Promise<'clear' | 'sanctioned'>;
  /** optional: how the service is, with a line for an operator (e.g. the list's size and age) */
  health?(): Promise<{ status: AdapterStatus; detail: string }>;
}

export interface PricingService {
  /** the USD price of 1 USDC in micro-USD (1_000_000 = 1.00); throws RailUnavailable when down */
  usdcPriceMicros(): Promise<bigint>;
}

/** What a gateway runs: its adapters, one screening service and one price feed. */
import type { ExactChain } from '../payments/x402-exact.js';

export interface RailAdapters {
  providers: RailAdapter[];
  screening: ScreeningService;
  pricing: PricingService;
  /** the sandbox's controls, present only with the sandbox adapters */
  sandbox?: SandboxWorldPort;
  /** the chain x402 `exact` payments settle on (src/rails/usdc/exact.ts); none: sellers offer the agentpay scheme only */
  exact?: ExactChain;
}

/** A change of the sandbox's settings (POST /v1/sandbox/settings). */
export interface SandboxSettingsPatch {
  usdcPrice?: string;
  screeningDown?: boolean;
  pricingDown?: boolean;
  payoutsDown?: boolean;
  sanction?: string[];
  unsanction?: string[];
  treasuryShortfallMinor?: bigint;
}

/**
 * What the sandbox controls (POST /v1/sandbox/...) move by hand in the simulated world behind the
 * sandbox adapters (src/rails/sandbox/world.ts implements it).
 */
export interface SandboxWorldPort {
  settings(): Promise<SandboxSettings>;
  updateSettings(patch: SandboxSettingsPatch): Promise<SandboxSettings>;
  /** the payer completes (or the processor declines) a top-up intent: the processor's signed webhook */
  settleIntent(ref: string, outcome: 'succeeded' | 'declined', declineReason?: string): Promise<SignedWebhook>;
  /** USDC arrives at a deposit address: the deposit as the chain adapter observes it */
  depositIn(to: string, amountMinor: bigint, from: string): Promise<ObservedDeposit>;
  /** the rail confirms or returns a submitted payout */
  settlePayout(ref: string, outcome: 'confirmed' | 'returned', reason?: string): Promise<unknown>;
}

/** An adapter's service is down or refused the request; the domain answers 503 TREASURY_UNAVAILABLE. */
export class RailUnavailable extends Error {
  constructor(readonly service: string, message: string) {
    super(message);
    this.name = 'RailUnavailable';
  }
}
