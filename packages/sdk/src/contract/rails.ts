/**
 * The rails on the wire (docs/api/rails.md): so far the sandbox's settings, which an operator
 * reads and changes to provoke the rails' failure paths. The gateway's route declares them, the
 * sandbox world keeps them, the SDK's client returns them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, Closed } from './schemas.js';

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
