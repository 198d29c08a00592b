import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { walletView } from '../../domain/wallets/wallets.js';
import { Balance, DepositAddressAnswer, DepositAddressList, LedgerEntry, RailTransactionAnswer, TopUpAnswer, Wallet, WalletWithBalance } from 'agentpay-sdk/contract';
import { Closed, CreateWalletBody, DepositAddressBody, FaucetBody, FundBody, TopUpBody, WalletParams } from 'agentpay-sdk/contract';

const WalletAnswer = Closed({ wallet: Wallet });
const WalletExample = {
  id: 'wal_0mwrikwc8pyu0thkg2w6', ownerType: 'agent', ownerId: 'agent-1', publicKeyPem: null, status: 'active', frozen: false, currency: 'USD',
  createdAt: '2026-01-31T12:00:00.000Z', updatedAt: '2026-01-31T12:00:00.000Z',
};
const W = ['WALLET_NOT_FOUND'] as const;

export default async function walletRoutes(app: FastifyInstance) {
  const { wallets } = app.services;

  app.post<{ Body: Static<typeof CreateWalletBody> }>('/v1/wallets', { config: { scope: 'wallets:write' }, schema: { summary: 'Create a wallet', body: CreateWalletBody, response: { 200: { ...WalletAnswer, examples: [{ wallet: WalletExample }] } } } }, async (request) => {
    const w = await wallets.create(principal(request), request.body);
    return { wallet: walletView(w) };
  });

  app.get('/v1/wallets', { config: { scope: 'wallets:read' }, schema: { summary: "List the workspace's wallets", response: { 200: Closed({ wallets: Type.Array(Wallet) }) } } }, async (request) => ({
    wallets: (await wallets.list(principal(request))).map(walletView),
  }));

  app.get<{ Params: WalletParams }>('/v1/wallets/:id', { config: { scope: 'wallets:read', errors: W }, schema: { summary: 'A wallet with its balance', params: WalletParams, response: { 200: Closed({ wallet: WalletWithBalance }) } } }, async (request) => {
    const p = principal(request);
    const w = await wallets.get(p, request.params.id);
    return { wallet: { ...walletView(w), balance: await wallets.balance(p, w.id) } };
  });

  app.get<{ Params: WalletParams }>('/v1/wallets/:id/balance', { config: { scope: 'wallets:read', errors: W }, schema: { summary: "A wallet's balance", params: WalletParams, response: { 200: { ...Balance, examples: [{ balanceMinor: '1000', availableMinor: '900', currency: 'USD' }] } } } }, async (request) =>
    wallets.balance(principal(request), request.params.id),
  );

  app.get<{ Params: WalletParams }>('/v1/wallets/:id/ledger', { config: { scope: 'wallets:read', errors: W }, schema: { summary: "A wallet's ledger, oldest entry first", params: WalletParams, response: { 200: Closed({ entries: Type.Array(LedgerEntry) }) } } }, async (request) => ({
    entries: await wallets.ledger(principal(request), request.params.id),
  }));

  app.post<{ Params: WalletParams; Body: Static<typeof FundBody> }>(
    '/v1/wallets/:id/fund',
    { config: { scope: 'wallets:write', errors: [...W, 'NOT_SUPPORTED', 'FORBIDDEN'] }, schema: { summary: 'Fund a wallet (sandbox)', params: WalletParams, body: FundBody, response: { 200: Closed({ entry: LedgerEntry, balance: Balance }) } } },
    async (request) => wallets.fund(principal(request), request.params.id, request.body),
  );

  for (const [action, frozen] of [['freeze', true], ['unfreeze', false]] as const) {
    app.post<{ Params: WalletParams }>(`/v1/wallets/:id/${action}`, { config: { scope: 'wallets:write', errors: W }, schema: { summary: `${action[0]!.toUpperCase()}${action.slice(1)} a wallet`, params: WalletParams, response: { 200: WalletAnswer } } }, async (request) => ({
      wallet: walletView(await wallets.setFrozen(principal(request), request.params.id, frozen)),
    }));
  }

  // Money in through the rails (src/domain/rails): 501 NOT_SUPPORTED where no adapter provides it.
  const { rails } = app.services;
  app.post<{ Params: WalletParams; Body: Static<typeof TopUpBody> }>(
    '/v1/wallets/:id/topup',
    { config: { scope: 'wallets:write', errors: [...W, 'NOT_SUPPORTED', 'CONFLICT'] }, schema: { summary: 'Top up a wallet through a rail', params: WalletParams, body: TopUpBody, response: { 200: TopUpAnswer } } },
    async (request) => rails.topUps.create(principal(request), request.params.id, request.body),
  );
  app.post<{ Params: WalletParams; Body: Static<typeof DepositAddressBody> }>(
    '/v1/wallets/:id/deposit-address',
    { config: { scope: 'wallets:write', errors: [...W, 'NOT_SUPPORTED'] }, schema: { summary: 'A USDC deposit address for a wallet', params: WalletParams, body: DepositAddressBody, response: { 200: DepositAddressAnswer } } },
    async (request) => rails.deposits.address(principal(request), request.params.id, request.body ?? {}),
  );
  app.get<{ Params: WalletParams }>('/v1/wallets/:id/deposit-addresses', { config: { scope: 'wallets:read', errors: [...W, 'NOT_SUPPORTED'] }, schema: { summary: "A wallet's deposit addresses", params: WalletParams, response: { 200: DepositAddressList } } }, async (request) =>
    rails.deposits.addresses(principal(request), request.params.id),
  );
  app.post<{ Params: WalletParams; Body: Static<typeof FaucetBody> }>(
    '/v1/wallets/:id/faucet',
    { config: { scope: 'wallets:write', errors: [...W, 'NOT_SUPPORTED'] }, schema: { summary: 'Sandbox faucet: test USDC to a deposit address', params: WalletParams, body: FaucetBody, response: { 200: RailTransactionAnswer } } },
    async (request) => rails.deposits.faucet(principal(request), request.params.id, request.body ?? {}),
  );
}
