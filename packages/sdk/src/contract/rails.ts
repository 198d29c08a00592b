/**
 * The rails on the wire (docs/api/rails.md): rail transactions, top-up intents, deposit
 * addresses, payouts and their destinations, and the sandbox's settings, which an operator reads
 * and changes to provoke the rails' failure paths. The gateway's routes declare them, the
 * domain's rail views return their types, the SDK's rails and payouts clients return them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PAYOUT_STATUSES, RESOLVE_OUTCOMES } from './payout-states.js';
import { Receipt } from './resources.js';
import { Amount, Closed, Id, IgnoredTenantIds, Nullable, SignedAmount, StringEnum, Timestamp } from './schemas.js';

export const RAIL_NAMES = ['bank_transfer', 'ach', 'usdc_base'] as const;
export const Rail = StringEnum(RAIL_NAMES);
export type Rail = Static<typeof Rail>;
const RailAsset = StringEnum(['USD', 'USDC'] as const);
export const RailState = StringEnum(['pending', 'held', 'submitted', 'confirmed', 'returned', 'declined', 'failed'] as const);
export type RailState = Static<typeof RailState>;

/** An item of GET /v1/rail/transactions. */
export const RailTransaction = Closed({
  id: Type.String(),
  kind: StringEnum(['topup', 'deposit', 'payout'] as const),
  direction: StringEnum(['in', 'out'] as const),
  walletId: Id('wal'),
  treasuryProviderId: Type.String(),
  rail: Nullable(Rail),
  state: RailState,
  railAmountMinor: Amount({ description: 'minor units of railCurrency: USD cents or USDC base units (6 decimals)' }),
  railCurrency: RailAsset,
  usdAmountMinor: Nullable(Amount({ description: 'the USD amount of the top-up, deposit (once priced) or payout' })),
  creditedMinor: SignedAmount({ description: 'USD it moved on the wallet and still moves: + in, - out, "0" when nothing moved or it came back' }),
  usdcPrice: Nullable(Type.String()),
  externalRef: Nullable(Type.String()),
  counterparty: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  settledAt: Nullable(Timestamp()),
});
export type RailTransaction = Static<typeof RailTransaction>;

/** The top-up intent of POST /v1/wallets/:id/topup. */
export const TopUpIntent = Closed({
  externalRef: Type.String(),
  status: RailState,
  amountMinor: Amount(),
  currency: RailAsset,
  hostedUrl: Type.Optional(Type.String({ description: 'where the payer completes it, while pending' })),
  clientSecret: Type.Optional(Type.String()),
  declineReason: Type.Optional(Type.String()),
  transactionId: Type.String({ description: 'the rail transaction (top_…)' }),
  walletId: Id('wal'),
  treasuryProviderId: Type.String(),
  createdAt: Timestamp(),
});
export type TopUpIntent = Static<typeof TopUpIntent>;

export const DepositAddress = Closed({
  address: Type.String(),
  chain: Type.String(),
  asset: Type.String(),
  walletId: Id('wal'),
  treasuryProviderId: Type.String(),
  createdAt: Timestamp(),
});
export type DepositAddress = Static<typeof DepositAddress>;

/** The wallet routes' rail answers. */
export const TopUpAnswer = Closed({ intent: TopUpIntent });
export const DepositAddressAnswer = Closed({ address: DepositAddress });
export const DepositAddressList = Closed({ addresses: Type.Array(DepositAddress) });
export const RailTransactionAnswer = Closed({ transaction: RailTransaction });

export const SandboxSettings = Closed({
  usdcPrice: Type.String({ description: 'the USDC price in USD, e.g. "1.0" or "0.994"' }),
  screeningDown: Type.Boolean(),
  pricingDown: Type.Boolean(),
  payoutsDown: Type.Boolean({ description: 'the payout rails refuse submissions' }),
  sanctioned: Type.Array(Type.String(), { description: 'destinations added to the screening list (lower case)' }),
  treasuryShortfallMinor: Amount({ description: 'USD minor units missing from the sandbox treasury (to provoke a coverage shortfall)' }),
});
export type SandboxSettings = Static<typeof SandboxSettings>;

export const SandboxSettingsBody = Closed({
  usdcPrice: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'USD per USDC, e.g. "0.994"' })),
  screeningDown: Type.Optional(Type.Boolean()),
  pricingDown: Type.Optional(Type.Boolean()),
  payoutsDown: Type.Optional(Type.Boolean()),
  sanction: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'destinations to add to the screening list' })),
  unsanction: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'destinations to take off it' })),
  treasuryShortfallMinor: Type.Optional(Amount()),
});
export type SandboxSettingsInput = Static<typeof SandboxSettingsBody>;

export const SandboxSettingsAnswer = Closed({ settings: SandboxSettings });

// ---- payouts and their destinations ----


/** A payout of POST/GET /v1/payouts. */
export const Payout = Closed({
  id: Type.String(),
  walletId: Id('wal'),
  providerId: Id('prv'),
  amountMinor: Amount(),
  currency: Type.Literal('USD'),
  rail: Rail,
  destination: Type.String(),
  treasuryProviderId: Type.String(),
  status: StringEnum(PAYOUT_STATUSES),
  railAmountMinor: Amount(),
  railCurrency: RailAsset,
  usdcPrice: Nullable(Type.String()),
  externalRef: Nullable(Type.String()),
  expectedBy: Nullable(Timestamp()),
  reason: Nullable(Type.String()),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  settledAt: Nullable(Timestamp()),
});
export type Payout = Static<typeof Payout>;

export const PayoutDestination = Closed({
  id: Type.String(),
  providerId: Id('prv'),
  asset: RailAsset,
  chain: Nullable(Type.String()),
  destination: Type.String(),
  rails: Type.Array(Rail),
  createdAt: Timestamp(),
  usableAt: Timestamp({ description: 'a new destination is usable after a delay' }),
  usable: Type.Boolean(),
});
export type PayoutDestination = Static<typeof PayoutDestination>;

export const PayoutDestinationBody = Closed({
  destination: Type.String({ minLength: 1, maxLength: 200, examples: ['ext_bank_account_0001'], description: 'ext_… for bank rails, a 0x address for USDC' }),
  asset: Type.Optional(RailAsset),
  chain: Type.Optional(StringEnum(['base'] as const)),
  ...IgnoredTenantIds,
});

export const PayoutBody = Closed({
  walletId: Type.String({ minLength: 1, maxLength: 100 }),
  amountMinor: Amount(),
  rail: Rail,
  destination: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  treasuryProviderId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
});
export type PayoutInput = Omit<Static<typeof PayoutBody>, keyof typeof IgnoredTenantIds>;

export const PayoutResolveBody = Closed({
  outcome: StringEnum(RESOLVE_OUTCOMES, { description: 'paid: the money left (confirmed); failed: it did not (re-credited)' }),
  reason: Type.String({ minLength: 1, maxLength: 500, description: 'what the rail said, recorded on the payout and in the events' }),
});

/** A provider key lists its own payouts, the operator key every provider's (to find stuck ones). */
export const PayoutListQuery = Closed({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  status: Type.Optional(StringEnum(PAYOUT_STATUSES)),
  submittedBefore: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 time: only payouts submitted before it' })),
  ...IgnoredTenantIds,
});

export const PayoutAnswer = Closed({ payout: Payout });
export const PayoutPage = Closed({ payouts: Type.Array(Payout), nextCursor: Type.Optional(Type.String({ description: 'pass as after= for the next page' })) });
export const PayoutDestinationAnswer = Closed({ destination: PayoutDestination, changed: Type.Boolean({ description: 'false when the same destination was already registered' }) });
export const PayoutDestinationList = Closed({ destinations: Type.Array(PayoutDestination) });

// ---- the rails' lists ----

/** An event of GET /v1/events (rail and payment events of the caller's tenant). */
export const RailEvent = Closed({
  id: Type.String(),
  type: Type.String({ description: 'the event type, e.g. topup.confirmed' }),
  createdAt: Timestamp(),
  data: Type.Record(Type.String(), Type.Unknown(), { description: "the event's facts (ids, amounts as strings)" }),
});
export type RailEvent = Static<typeof RailEvent>;

/**
 * The `data` of the payment events (docs/api/webhooks.md § Payment events), recorded for the seller and
 * for the buyer's workspace in the transaction that moves the money: `payment.succeeded` (a paid call
 * completed), `payment.failed` (the seller reported a failure; the buyer refunded), `payment.refunded`
 * (no complete or fail in time; the hold expired and was refunded).
 */
export const PAYMENT_EVENT_TYPES = ['payment.succeeded', 'payment.failed', 'payment.refunded'] as const;
export const PaymentEventData = Closed({
  transactionId: Id('txn'),
  receiptId: Id('rcp'),
  capabilityId: Id('cap'),
  providerId: Type.String({ description: 'the seller' }),
  workspaceId: Type.String({ description: "the buyer's workspace" }),
  walletId: Type.String({ description: "the buyer's wallet (wal_…)" }),
  amountMinor: Amount({ description: 'the price of the call (a metered call that succeeded: what it was charged, units × unit price)' }),
  currency: Type.String(),
  authorizedMinor: Type.Optional(Amount({ description: 'payment.succeeded of a metered call: what the buyer authorized (held); amountMinor was charged and the rest released' })),
  feeMinor: Type.Optional(Amount({ description: 'payment.succeeded: the platform fee' })),
  saleMinor: Type.Optional(Amount({ description: "payment.succeeded: what the seller's settlement wallet got, amountMinor less feeMinor" })),
  responseHash: Type.Optional(Type.String({ description: 'payment.succeeded: the hash of the answer the receipt signs' })),
  reason: Type.Optional(StringEnum(['client_error', 'provider_error', 'expired'] as const, { description: 'payment.failed (client_error, provider_error) and payment.refunded (expired)' })),
  statusCode: Type.Optional(Type.Integer({ description: "payment.failed: the HTTP status the seller's handler answered, when the seller said" })),
  refundedMinor: Type.Optional(Amount({ description: 'payment.failed and payment.refunded: what went back to the buyer' })),
  receipt: Receipt,
});
export type PaymentEventData = Static<typeof PaymentEventData>;

/**
 * The payout events (docs/api/rails.md § Events), recorded for the provider in the transaction that
 * moves its payout to that state, as its rail has it: `payout.confirmed` (the rail paid it: the debit
 * made at submission stands), `payout.failed` (it never left: the submission was refused, or the
 * operator resolved it as failed; the wallet re-credited by a `payout_return` entry) and
 * `payout.returned` (it left and came back; re-credited the same way).
 */
export const PAYOUT_EVENT_TYPES = ['payout.confirmed', 'payout.failed', 'payout.returned'] as const;
export const PayoutEventData = Closed({
  payoutId: Type.String({ description: 'the payout (pay_…)' }),
  walletId: Type.String({ description: 'the settlement wallet it was paid from (wal_…)' }),
  status: StringEnum(['confirmed', 'failed', 'returned'] as const, { description: "the payout's status now" }),
  amountMinor: Amount({ description: 'USD minor units debited at submission (and, failed or returned, credited back)' }),
  currency: Type.Literal('USD'),
  rail: Type.String({ description: 'bank_transfer, ach or usdc_base' }),
  railAmountMinor: Amount({ description: 'the amount on the rail, in its asset (USDC base units on usdc_base)' }),
  asset: Type.String({ description: 'the asset on the rail: USD or USDC' }),
  destination: Type.Union([Type.String(), Type.Null()], { description: 'where it was sent' }),
  externalRef: Type.Union([Type.String(), Type.Null()], { description: "the rail's reference, null when it never reached the rail" }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'failed and returned: why; confirmed: null, or the operator\'s resolution (`resolved by the operator: …`)' }),
});
export type PayoutEventData = Static<typeof PayoutEventData>;

/**
 * The top-up events, recorded for the wallet's tenant when the processor's signed webhook settles a
 * top-up intent: `topup.confirmed` in the transaction that writes the `topup` ledger entry,
 * `topup.declined` in the one that records the decline (nothing credited).
 */
export const TOPUP_EVENT_TYPES = ['topup.confirmed', 'topup.declined'] as const;
export const TopUpEventData = Closed({
  transactionId: Type.String({ description: 'the top-up (top_…), as GET /v1/rail/transactions lists it' }),
  walletId: Type.String({ description: 'the wallet topped up (wal_…)' }),
  status: StringEnum(['confirmed', 'declined'] as const),
  amountMinor: Amount({ description: 'the amount of the intent; confirmed: what the `topup` entry credited' }),
  currency: Type.String(),
  creditedMinor: Amount({ description: 'what the wallet was credited: amountMinor when confirmed, "0" when declined' }),
  externalRef: Type.String({ description: "the processor's reference of the intent" }),
  treasuryProviderId: Type.String({ description: 'the processor' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "declined: the processor's reason; null when confirmed" }),
});
export type TopUpEventData = Static<typeof TopUpEventData>;

/** `deposit.credited`: a USDC deposit credited in USD, in the transaction of its `deposit` ledger entry. */
export const DepositCreditedEventData = Closed({
  transactionId: Type.String({ description: 'the deposit (dep_…)' }),
  walletId: Type.String(),
  amountMinor: Amount({ description: 'USD minor units credited (the `deposit` ledger entry)' }),
  currency: Type.Literal('USD'),
  asset: Type.Literal('USDC'),
  assetAmountMinor: Amount({ description: 'USDC base units received' }),
  usdcPrice: Type.String({ description: 'the USD price of 1 USDC it was credited at' }),
  txHash: Type.Union([Type.String(), Type.Null()], { description: 'the chain transaction, null if the rail has none' }),
});
/** `deposit.held`: a USDC deposit held (nothing credited) while USDC is out of its price band. */
export const DepositHeldEventData = Closed({
  transactionId: Type.String({ description: 'the deposit (dep_…)' }),
  walletId: Type.String(),
  amountMinor: Amount({ description: 'USDC base units received' }),
  asset: Type.Literal('USDC'),
  reason: Type.String(),
});

const Cursor = Type.Optional(Type.String({ description: 'pass as after= for the next page; only when the page came back full' }));
export const RailTransactionPage = Closed({ transactions: Type.Array(RailTransaction), nextCursor: Cursor });
export const RailEventPage = Closed({ events: Type.Array(RailEvent), nextCursor: Cursor });

// ---- the rail providers, the processor's webhook, reconciliation ----

const AdapterStatus = StringEnum(['operational', 'degraded', 'down'] as const);

/** An item of GET /v1/rail/providers: an adapter the gateway runs (`id` is what `treasuryProviderId` names). */
export const RailProvider = Closed({
  id: Type.String(),
  name: Type.String(),
  adapterType: Type.String({ description: 'e.g. sandbox_processor, sandbox_chain, sandbox_bank, stripe' }),
  status: AdapterStatus,
  roles: Type.Array(StringEnum(['funding', 'payout'] as const)),
  currencies: Type.Array(RailAsset),
  rails: Type.Array(Rail, { description: 'the payout rails it serves' }),
  topUps: Type.Boolean(),
  depositAddresses: Type.Boolean(),
  faucet: Type.Boolean({ description: 'a testnet faucet (testnet deployments only)' }),
});
export type RailProvider = Static<typeof RailProvider>;

/** The sanctions screening's health. */
export const ScreeningHealth = Closed({ status: AdapterStatus, detail: Type.Optional(Type.String()) });
export type ScreeningHealth = Static<typeof ScreeningHealth>;

/** GET /v1/rail/providers. */
export const RailProviderList = Closed({
  sandbox: Type.Boolean({ description: 'simulated money (POST /v1/wallets/:id/fund) is allowed: false once a real payment provider is connected' }),
  providers: Type.Array(RailProvider),
  screening: Type.Optional(ScreeningHealth),
});
export type RailProviderList = Static<typeof RailProviderList>;

/** What POST /v1/rail/webhooks/<provider id> answers once the processor's event is applied. */
export const RailWebhookAnswer = Closed({ received: Type.Literal(true), transaction: RailTransaction });

/** A processor's signed webhook, as the sandbox processor sends it: deliver it again to see a duplicate refused. */
export const SignedWebhook = Closed({
  body: Type.String({ description: 'the exact bytes the signature covers' }),
  headers: Type.Record(Type.String(), Type.String(), { description: 'content-type and the signature header' }),
});
export type SignedWebhook = Static<typeof SignedWebhook>;

/** POST /v1/sandbox/topups/:id/confirm and /decline: the top-up as applied and the webhook that did it. */
export const SandboxTopUpAnswer = Closed({ transaction: RailTransaction, webhook: SignedWebhook });
export type SandboxTopUpAnswer = Static<typeof SandboxTopUpAnswer>;

/** A rail record or ledger sum that disagrees with the adapters'. */
export const Discrepancy = Closed({
  transactionId: Type.Optional(Type.String()),
  kind: Type.String({ description: 'topup, deposit or payout' }),
  problem: Type.String(),
});
export type Discrepancy = Static<typeof Discrepancy>;

/** A reconciliation of the ledger with the rails (docs/api/rails.md § Reconciliation). */
export const ReconciliationReport = Closed({
  status: StringEnum(['ok', 'shortfall'] as const, { description: 'shortfall: obligations above holdings beyond the tolerance; payouts are paused' }),
  at: Timestamp(),
  obligationsMinor: Amount({ description: 'what the platform owes: every wallet balance' }),
  holdingsMinor: SignedAmount({ description: 'what the rails hold for it (USDC at par), sandbox credits included' }),
  shortfallMinor: Amount(),
  toleranceMinor: Amount({ description: 'the price band applied to the USDC that crossed the rails' }),
  holdings: Type.Array(Closed({
    treasuryProviderId: Type.String(),
    asset: RailAsset,
    amountMinor: SignedAmount({ description: "minor units of the asset: what the adapter's treasury holds (below zero when it paid out more than it took in)" }),
    valueMinor: SignedAmount({ description: 'its value in USD minor units (USDC at par)' }),
  })),
  sandboxCreditsMinor: Amount({ description: 'the sandbox credits counted as held (0 outside the sandbox)' }),
  discrepancies: Type.Array(Discrepancy, { maxItems: 100 }),
  paused: Type.Boolean({ description: 'payouts answer 503 COVERAGE_SHORTFALL' }),
});
export type ReconciliationReport = Static<typeof ReconciliationReport>;

/** POST /v1/rail/reconcile (the report of this run) and GET /v1/rail/reconciliation (the latest, or null). */
export const ReconciliationAnswer = Closed({ reconciliation: ReconciliationReport });
export const LatestReconciliation = Closed({ reconciliation: Nullable(ReconciliationReport) });
