/**
 * The rails on the wire (docs/api/rails.md): rail transactions, top-up intents, deposit
 * addresses, payouts and their destinations, and the sandbox's settings, which an operator reads
 * and changes to provoke the rails' failure paths. The gateway's routes declare them, the
 * domain's rail views return their types, the SDK's rails and payouts clients return them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed, Id, Nullable, SignedAmount, StringEnum, Timestamp } from './schemas.js';

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
