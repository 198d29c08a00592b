import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Amount, IgnoredTenantIds, OptionalBody, StringEnum } from '../schemas.js';
import { walletView } from '../../domain/wallets.js';

const WalletParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
type WalletParams = Static<typeof WalletParams>;

const CreateWallet = Type.Object({
  ownerType: StringEnum(['agent', 'workspace'] as const),
  ownerId: Type.String({ minLength: 1, maxLength: 200 }),
  publicKeyPem: Type.Optional(Type.String({ maxLength: 2000 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const FundBody = Type.Object({
  amountMinor: Amount(),
  rail: Type.Optional(StringEnum(['bank_transfer', 'ach', 'usdc_base', 'card'] as const)),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

// The rail routes' bodies as the specification gives them; amounts and enums are checked
// (400) before anything, also where no rail provides the route (501).
const TopupBody = Type.Object({
  amountMinor: Amount(),
  asset: Type.Optional(StringEnum(['USD', 'USDC'] as const)),
  treasuryProviderId: Type.Optional(Type.String({ maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
const DepositAddressBody = OptionalBody(Type.Object({
  asset: Type.Optional(StringEnum(['USDC'] as const)),
  chain: Type.Optional(StringEnum(['base'] as const)),
  treasuryProviderId: Type.Optional(Type.String({ maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false }));
const FaucetBody = OptionalBody(Type.Object({ address: Type.Optional(Type.String({ maxLength: 200 })), ...IgnoredTenantIds }, { additionalProperties: false }));

export default async function walletRoutes(app: FastifyInstance) {
  const { wallets } = app.services;

  app.post<{ Body: Static<typeof CreateWallet> }>('/v1/wallets', { config: { scope: 'wallets:write' }, schema: { body: CreateWallet } }, async (request) => {
    const w = await wallets.create(principal(request), request.body);
    return { wallet: walletView(w) };
  });

  app.get('/v1/wallets', { config: { scope: 'wallets:read' } }, async (request) => ({
    wallets: (await wallets.list(principal(request))).map(walletView),
  }));

  app.get<{ Params: WalletParams }>('/v1/wallets/:id', { config: { scope: 'wallets:read' }, schema: { params: WalletParams } }, async (request) => {
    const p = principal(request);
    const w = await wallets.get(p, request.params.id);
    return { wallet: { ...walletView(w), balance: await wallets.balance(p, w.id) } };
  });

  app.get<{ Params: WalletParams }>('/v1/wallets/:id/balance', { config: { scope: 'wallets:read' }, schema: { params: WalletParams } }, async (request) =>
    wallets.balance(principal(request), request.params.id),
  );

  app.get<{ Params: WalletParams }>('/v1/wallets/:id/ledger', { config: { scope: 'wallets:read' }, schema: { params: WalletParams } }, async (request) => ({
    entries: await wallets.ledger(principal(request), request.params.id),
  }));

  app.post<{ Params: WalletParams; Body: Static<typeof FundBody> }>(
    '/v1/wallets/:id/fund',
    { config: { scope: 'wallets:write' }, schema: { params: WalletParams, body: FundBody } },
    async (request) => wallets.fund(principal(request), request.params.id, request.body),
  );

  for (const [action, frozen] of [['freeze', true], ['unfreeze', false]] as const) {
    app.post<{ Params: WalletParams }>(`/v1/wallets/:id/${action}`, { config: { scope: 'wallets:write' }, schema: { params: WalletParams } }, async (request) => ({
      wallet: walletView(await wallets.setFrozen(principal(request), request.params.id, frozen)),
    }));
  }

  // Money in through the rails (src/domain/rails): 501 NOT_SUPPORTED where no adapter provides it.
  const { rails } = app.services;
  app.post<{ Params: WalletParams; Body: Static<typeof TopupBody> }>(
    '/v1/wallets/:id/topup',
    { config: { scope: 'wallets:write' }, schema: { params: WalletParams, body: TopupBody } },
    async (request) => rails.topUps.create(principal(request), request.params.id, request.body),
  );
  app.post<{ Params: WalletParams; Body: Static<typeof DepositAddressBody> }>(
    '/v1/wallets/:id/deposit-address',
    { config: { scope: 'wallets:write' }, schema: { params: WalletParams, body: DepositAddressBody } },
    async (request) => rails.deposits.address(principal(request), request.params.id, request.body ?? {}),
  );
  app.get<{ Params: WalletParams }>('/v1/wallets/:id/deposit-addresses', { config: { scope: 'wallets:read' }, schema: { params: WalletParams } }, async (request) =>
    rails.deposits.addresses(principal(request), request.params.id),
  );
  app.post<{ Params: WalletParams; Body: Static<typeof FaucetBody> }>(
    '/v1/wallets/:id/faucet',
    { config: { scope: 'wallets:write' }, schema: { params: WalletParams, body: FaucetBody } },
    async (request) => rails.deposits.faucet(principal(request), request.params.id, request.body ?? {}),
  );
}
