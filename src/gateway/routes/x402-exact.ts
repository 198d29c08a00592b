/**
 * x402 `exact` payments for sellers (src/domain/payments/x402-exact.ts): what to offer, and the
 * facilitator's verify and settle, called by the seller middleware around its handler. All take
 * a provider key with payments:write and act on the caller's own capabilities only.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import {
  Closed, ExactOffer as Offer, ExactReleaseBody as ReleaseBody, ExactReleased, ExactSettleBody as SettleBody, ExactSettled as Settled, ExactVerified as Verified, ExactVerifyBody as VerifyBody,
} from 'agentpay-sdk/contract';

export default async function x402ExactRoutes(app: FastifyInstance) {
  const exact = app.services.x402Exact;
  const config = { scope: 'payments:write' } as const;

  app.get('/v1/x402/exact', { config: { ...config, errors: [] }, schema: { summary: "What a seller's 402 offers for x402's `exact` scheme (the gateway's chain, token and receiving address); offer null: the gateway has no chain", response: { 200: Closed({ offer: Type.Union([Offer, Type.Null()]) }) } } }, async (request) => ({
    offer: exact.offer(principal(request)),
  }));

  app.post<{ Body: Static<typeof VerifyBody> }>('/v1/x402/exact/verify', { config: { ...config, errors: ['PAYMENT_REQUIRED', 'CAPABILITY_NOT_FOUND', 'NOT_SUPPORTED', 'CONFLICT'] }, schema: { summary: 'Verify and reserve an x402 `exact` authorization before the handler runs', body: VerifyBody, response: { 200: Verified } } }, async (request) =>
    exact.verify(principal(request), request.body),
  );

  app.post<{ Body: Static<typeof SettleBody> }>('/v1/x402/exact/settle', { config: { ...config, errors: ['NOT_FOUND', 'CONFLICT', 'TREASURY_UNAVAILABLE', 'NOT_SUPPORTED'] }, schema: { summary: 'Settle a verified x402 `exact` authorization on chain and record the sale', body: SettleBody, response: { 200: Settled } } }, async (request) =>
    exact.settle(principal(request), request.body),
  );

  app.post<{ Body: Static<typeof ReleaseBody> }>('/v1/x402/exact/release', { config: { ...config, errors: ['NOT_FOUND', 'CONFLICT', 'NOT_SUPPORTED'] }, schema: { summary: 'Release a verified x402 `exact` authorization whose handler failed: nothing is settled', body: ReleaseBody, response: { 200: ExactReleased } } }, async (request) =>
    exact.release(principal(request), request.body),
  );
}
