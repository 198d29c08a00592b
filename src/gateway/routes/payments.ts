/**
 * The payment protocol routes the seller middleware calls (docs/protocol.md). All
 * four take a provider key with payments:write and act on the caller's own
 * capabilities and transactions only.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id, StringEnum } from '../schemas.js';

const ResponseHash = Type.String({
  pattern: '^sha256:[0-9a-f]{64}$',
  description: '"sha256:" and the lowercase hex SHA-256 of the exact response body bytes',
  examples: [`sha256:${'0'.repeat(64)}`],
});

const ChallengeBody = Type.Object({ capabilityId: Id('cap') }, { additionalProperties: false });

const AuthorizeBody = Type.Object({
  capabilityId: Id('cap'),
  payment: Type.Union([
    Type.String({ minLength: 1, maxLength: 16_384, description: 'the x-payment header value as received' }),
    Type.Object({}, { additionalProperties: true, description: 'the payment proof object' }),
  ]),
}, { additionalProperties: false });

const CompleteBody = Type.Object({ transactionId: Id('txn'), responseHash: ResponseHash }, { additionalProperties: false });

const FailBody = Type.Object({
  transactionId: Id('txn'),
  reason: StringEnum(['client_error', 'provider_error'] as const),
  responseHash: Type.Optional(ResponseHash),
  statusCode: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
}, { additionalProperties: false });

export default async function paymentRoutes(app: FastifyInstance) {
  const { payments } = app.services;
  const config = { scope: 'payments:write' } as const;

  app.post<{ Body: Static<typeof ChallengeBody> }>('/v1/x402/challenge', { config, schema: { body: ChallengeBody } }, async (request) => ({
    challenge: await payments.challenge(principal(request), request.body.capabilityId),
  }));

  app.post<{ Body: Static<typeof AuthorizeBody> }>('/v1/x402/authorize', { config, schema: { body: AuthorizeBody } }, async (request) =>
    payments.authorize(principal(request), request.body),
  );

  app.post<{ Body: Static<typeof CompleteBody> }>('/v1/x402/complete', { config, schema: { body: CompleteBody } }, async (request) => ({
    receipt: await payments.complete(principal(request), request.body),
  }));

  app.post<{ Body: Static<typeof FailBody> }>('/v1/x402/fail', { config, schema: { body: FailBody } }, async (request) => ({
    receipt: await payments.fail(principal(request), request.body),
  }));
}
