/**
 * The wallet routes' requests (docs/api/wallets.md): creating and funding a wallet, and the rail
 * routes under a wallet (top-up, deposit address, faucet). The answers (Wallet, Balance,
 * LedgerEntry, TopUpIntent, DepositAddress) are in resources.ts and rails.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, IgnoredTenantIds, MultilineString, OptionalBody, StringEnum } from './schemas.js';

export const WalletParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'wal_…' }) });
export type WalletParams = Static<typeof WalletParams>;

export const CreateWalletBody = Type.Object({
  ownerType: StringEnum(['agent', 'workspace'] as const),
  ownerId: Type.String({ minLength: 1, maxLength: 200 }),
  publicKeyPem: Type.Optional(MultilineString({ maxLength: 2000 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false, examples: [{ ownerType: 'workspace', ownerId: 'team-budget' }] });
export type CreateWalletInput = Omit<Static<typeof CreateWalletBody>, keyof typeof IgnoredTenantIds>;

export const FundBody = Type.Object({
  amountMinor: Amount(),
  rail: Type.Optional(StringEnum(['bank_transfer', 'ach', 'usdc_base', 'card'] as const)),
  ...IgnoredTenantIds,
}, { additionalProperties: false, examples: [{ amountMinor: '1000' }] });
export type FundInput = Omit<Static<typeof FundBody>, keyof typeof IgnoredTenantIds>;

// The rail routes' bodies as the specification gives them; amounts and enums are checked
// (400) before anything, also where no rail provides the route (501).
export const TopUpBody = Type.Object({
  amountMinor: Amount(),
  asset: Type.Optional(StringEnum(['USD', 'USDC'] as const)),
  treasuryProviderId: Type.Optional(Type.String({ maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type TopUpInput = Omit<Static<typeof TopUpBody>, keyof typeof IgnoredTenantIds>;

export const DepositAddressBody = OptionalBody(Type.Object({
  asset: Type.Optional(StringEnum(['USDC'] as const)),
  chain: Type.Optional(StringEnum(['base'] as const)),
  treasuryProviderId: Type.Optional(Type.String({ maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false }));

export const FaucetBody = OptionalBody(Type.Object({ address: Type.Optional(Type.String({ maxLength: 200 })), ...IgnoredTenantIds }, { additionalProperties: false }));
