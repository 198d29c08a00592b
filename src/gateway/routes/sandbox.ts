/**
 * Sandbox controls: drive the simulated processor, chain and bank by hand
 * (src/domain/rails/sandbox/controls.ts). They exist on every gateway and answer 501
 * NOT_SUPPORTED where the sandbox adapters do not run. Record controls act on the
 * caller's own records; world settings are the operator's. docs/api/rails.md. A paid call's expiry
 * (the sweeper's, now) is the one control outside the rails: the seller's own transaction.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { parseMinor } from '../../core/money.js';
import { principal } from '../plugins/auth.js';
import { Amount, IgnoredTenantIds, OptionalBody } from '../schemas.js';
import { RAIL_ERRORS } from '../plugins/responses.js';
import { Closed, PayoutAnswer, RailTransactionAnswer, Receipt, SandboxSettingsAnswer, SandboxSettingsBody, SandboxTopUpAnswer, Session } from 'agentpay-sdk/contract';

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type Params = Static<typeof Params>;

const ReasonBody = OptionalBody(Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...IgnoredTenantIds }, { additionalProperties: false }));
type ReasonBody = Static<typeof ReasonBody>;
const NoBody = OptionalBody(Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false }));
type NoBody = Static<typeof NoBody>;

const DepositBody = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 100, examples: ['0x0000000000000000000000000000000000000001'] }),
  amountMinor: Amount({ description: 'USDC base units (6 decimals): "1000000" is 1 USDC' }),
  from: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

export default async function sandboxRoutes(app: FastifyInstance) {
  const controls = app.services.rails.sandbox;

  for (const [action, outcome] of [['confirm', 'succeeded'], ['decline', 'declined']] as const) {
    app.post<{ Params: Params; Body: ReasonBody }>(
      `/v1/sandbox/topups/:id/${action}`,
      { config: { scope: 'wallets:write', errors: RAIL_ERRORS }, schema: { params: Params, body: ReasonBody, response: { 200: SandboxTopUpAnswer } } },
      async (request) => controls.settleTopUp(principal(request), request.params.id, outcome, request.body?.reason),
    );
  }

  for (const [action, outcome] of [['confirm', 'confirmed'], ['return', 'returned']] as const) {
    app.post<{ Params: Params; Body: ReasonBody }>(
      `/v1/sandbox/payouts/:id/${action}`,
      { config: { scope: 'payouts:write', errors: RAIL_ERRORS }, schema: { params: Params, body: ReasonBody, response: { 200: PayoutAnswer } } },
      async (request) => controls.settlePayout(principal(request), request.params.id, outcome, request.body?.reason),
    );
  }

  // a paid call expires now, as the sweeper expires it after its in-flight time (the seller's own; a sandbox gateway only)
  app.post<{ Params: Params; Body: NoBody }>(
    '/v1/sandbox/transactions/:id/expire',
    { config: { scope: 'payments:write', errors: RAIL_ERRORS }, schema: { params: Params, body: NoBody, response: { 200: Closed({ receipt: Receipt }) } } },
    async (request) => {
      controls.requireSandbox();
      return { receipt: await app.services.payments.expireNow(principal(request), request.params.id) };
    },
  );

  // a payment session expires now, as the sweeper expires it at the end of its claim window (the seller's own; a sandbox gateway only)
  app.post<{ Params: Params; Body: NoBody }>(
    '/v1/sandbox/sessions/:id/expire',
    { config: { scope: 'payments:write', errors: [...RAIL_ERRORS, 'SESSION_NOT_FOUND'] }, schema: { params: Params, body: NoBody, response: { 200: Closed({ session: Session }) } } },
    async (request) => {
      controls.requireSandbox();
      return { session: await app.services.sessions.expireNow(principal(request), request.params.id) };
    },
  );

  app.post<{ Body: Static<typeof DepositBody> }>(
    '/v1/sandbox/deposits',
    { config: { scope: 'wallets:write', errors: RAIL_ERRORS }, schema: { body: DepositBody, response: { 200: RailTransactionAnswer } } },
    async (request) => controls.deposit(principal(request), request.body),
  );

  app.get('/v1/sandbox/settings', { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { response: { 200: SandboxSettingsAnswer } } }, async () => ({ settings: await controls.settings() }));

  app.post<{ Body: Static<typeof SandboxSettingsBody> }>(
    '/v1/sandbox/settings',
    { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { body: SandboxSettingsBody, response: { 200: SandboxSettingsAnswer } } },
    async (request) => {
      const { treasuryShortfallMinor, ...rest } = request.body;
      const patch = { ...rest, ...(treasuryShortfallMinor !== undefined ? { treasuryShortfallMinor: parseMinor(treasuryShortfallMinor, 'treasuryShortfallMinor', { allowZero: true }) } : {}) };
      return { settings: await controls.updateSettings(patch) };
    },
  );
}
