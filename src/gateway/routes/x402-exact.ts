/**
 * x402 `exact` payments for sellers (src/domain/payments/x402-exact.ts): what to offer, and the
 * facilitator's verify and settle, called by the seller middleware around its handler. All take
 * a provider key with payments:write and act on the caller's own capabilities only.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Closed, Receipt } from 'agentpay-sdk/contract';
import { Id, IgnoredTenantIds } from '../schemas.js';

const Offer = Closed({
  scheme: Type.Literal('exact'),
  network: Type.String({ description: 'CAIP-2 network, e.g. eip155:8453 (Base)' }),
  asset: Type.String({ description: "the token's address (USDC)" }),
  payTo: Type.String({ description: "the platform's receiving address" }),
  decimals: Type.Integer(),
  currency: Type.Literal('USD'),
  unitsPerMinor: Type.String({ description: 'token base units per cent (USDC: 10000)' }),
  extra: Closed({ name: Type.String(), version: Type.String() }, { description: "the token's EIP-712 domain name and version, as x402 puts them in `extra`" }),
});

const VerifyBody = Type.Object({
  capabilityId: Id('cap'),
  payload: Type.Object({}, { additionalProperties: true, description: "the x402 PaymentPayload (PAYMENT-SIGNATURE, decoded) of scheme 'exact'" }),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const Verified = Closed({
  authorizationId: Id('xau'), capabilityId: Id('cap'), payer: Type.String(), amountMinor: Type.String(), currency: Type.String(), network: Type.String(),
});

const SettleBody = Type.Object({
  authorizationId: Id('xau'),
  responseHash: Type.String({ pattern: '^sha256:[0-9a-f]{64}$', examples: ['sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'], description: '"sha256:" and the lowercase hex SHA-256 of the exact response body bytes' }),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const Settled = Closed({
  authorizationId: Id('xau'), receipt: Receipt, transaction: Type.String({ description: 'the chain transaction hash' }), payer: Type.String(), network: Type.String(),
  amount: Type.String({ description: 'token base units moved' }),
});

const ReleaseBody = Type.Object({ authorizationId: Id('xau'), ...IgnoredTenantIds }, { additionalProperties: false });

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

  app.post<{ Body: Static<typeof ReleaseBody> }>('/v1/x402/exact/release', { config: { ...config, errors: ['NOT_FOUND', 'CONFLICT', 'NOT_SUPPORTED'] }, schema: { summary: 'Release a verified x402 `exact` authorization whose handler failed: nothing is settled', body: ReleaseBody, response: { 200: Closed({ authorizationId: Id('xau'), state: Type.String() }) } } }, async (request) =>
    exact.release(principal(request), request.body),
  );
}
