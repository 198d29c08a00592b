/** The seller-for-wallet breaker, seen and reset by the wallet's owner. */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id } from '../schemas.js';
import { BreakerResumed, BreakerState, ResumeProviderBody } from 'agentpay-sdk/contract';

const WalletParams = Type.Object({ id: Id('wal') });
const BreakerParams = Type.Object({ id: Id('wal'), providerId: Id('prv') });

export default async function breakerRoutes(app: FastifyInstance) {
  const { breakers } = app.services;

  app.post<{ Params: Static<typeof WalletParams>; Body: Static<typeof ResumeProviderBody> }>(
    '/v1/wallets/:id/resume-provider',
    { config: { scope: 'wallets:write', errors: ['WALLET_NOT_FOUND', 'PROVIDER_NOT_FOUND'] }, schema: { summary: 'Resume a seller the breaker paused for a wallet', params: WalletParams, body: ResumeProviderBody, response: { 200: BreakerResumed } } },
    async (request) => breakers.resume(principal(request), request.params.id, request.body.providerId),
  );

  app.get<{ Params: Static<typeof BreakerParams> }>(
    '/v1/wallets/:id/breaker/:providerId',
    { config: { scope: 'wallets:read', errors: ['WALLET_NOT_FOUND', 'PROVIDER_NOT_FOUND'] }, schema: { summary: 'The breaker of a wallet for a seller', params: BreakerParams, response: { 200: BreakerState } } },
    async (request) => breakers.get(principal(request), request.params.id, request.params.providerId),
  );
}
