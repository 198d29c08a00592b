import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { Activity, ActivityQuery, LedgerCheckpoint, PlatformPublicKey, ReceiptKey } from 'agentpay-sdk/contract';
import { CHECKPOINT_PAGE_MAX } from '../../domain/wallets/checkpoints.js';
import { paymentActivity } from '../../domain/payments/activity.js';

export default async function platformRoutes(app: FastifyInstance) {
  const { signingKeys, ledgerCheckpoints } = app.services;

  // The platform's public keys are for everyone, pages included: a buyer in a browser checks a
  // challenge's signature against them from any origin (a simple GET: no preflight, no credentials).
  const PUBLIC_KEY_ROUTES = new Set(['/v1/platform/public-key', '/v1/platform/receipt-keys/:keyId']);
  app.addHook('onSend', async (request, reply) => {
    if (PUBLIC_KEY_ROUTES.has(request.routeOptions.url ?? '')) reply.header('access-control-allow-origin', '*');
  });

  app.get('/v1/platform/public-key', { config: { public: true }, schema: { summary: "The platform's current receipt-signing public key", response: { 200: PlatformPublicKey } } }, async (request) => {
    try {
      await signingKeys.refresh();
    } catch (err) {
      // another instance rotated to a key whose private file this one cannot read: it keeps
      // signing with the key it has (as the periodic refresh does), so that is the key to publish
      request.log.error({ err, signingKeyId: signingKeys.currentKeyId }, 'signing key refresh failed; the current key stays in use and is answered');
    }
    return { publicKeyPem: signingKeys.currentPublicKeyPem, signingKeyId: signingKeys.currentKeyId };
  });

  app.get<{ Params: { keyId: string } }>(
    '/v1/platform/receipt-keys/:keyId',
    { config: { public: true }, schema: { summary: 'A receipt-signing public key by id, current or retired', params: Type.Object({ keyId: Type.String({ maxLength: 100 }) }), response: { 200: ReceiptKey } } },
    async (request) => {
      const rec = await signingKeys.publicKey(request.params.keyId);
      if (!rec) throw new AppError('NOT_FOUND', `receipt key ${request.params.keyId} not found`, { keyId: request.params.keyId });
      return { keyId: rec.id, publicKeyPem: rec.publicKeyPem, status: rec.status, createdAt: new Date(rec.createdAt).toISOString(), retiredAt: rec.retiredAt === null ? null : new Date(rec.retiredAt).toISOString() };
    },
  );

  // Rotation is the operator's: new challenges and receipts use the new key at once.
  app.post('/v1/platform/keys/rotate', { config: { scope: 'operator' }, schema: { summary: 'Rotate the signing key (operator)', response: { 200: PlatformPublicKey } } }, async () => {
    const rec = await signingKeys.rotate();
    return { signingKeyId: rec.id, publicKeyPem: rec.publicKeyPem };
  });

  // The signed heads of the ledger's chains (docs/ledger.md): the operator's, as they name every wallet.
  app.get<{ Querystring: { limit?: number; after?: string } }>(
    '/v1/platform/ledger-checkpoints',
    {
      config: { scope: 'operator' },
      schema: {
        summary: "Signed checkpoints of the ledger's hash chains, newest first (operator)",
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: CHECKPOINT_PAGE_MAX, description: `checkpoints per page (default 20, at most ${CHECKPOINT_PAGE_MAX})` })),
          after: Type.Optional(Type.String({ maxLength: 100, description: 'the nextCursor of the previous page' })),
        }, { additionalProperties: false }),
        response: { 200: Type.Object({ checkpoints: Type.Array(LedgerCheckpoint), nextCursor: Type.Optional(Type.String()) }) },
      },
    },
    async (request) => ledgerCheckpoints.list(request.query),
  );

  app.post('/v1/platform/ledger-checkpoints', { config: { scope: 'operator' }, schema: { summary: "Sign a checkpoint of the ledger's chains now (operator)", response: { 201: LedgerCheckpoint } } }, async (_request, reply) => {
    reply.code(201);
    return ledgerCheckpoints.make();
  });

  // Sales and failures over time across the platform: the operator's, as it counts every seller's calls.
  app.get<{ Querystring: Static<typeof ActivityQuery> }>(
    '/v1/platform/activity',
    {
      config: { scope: 'operator' },
      schema: { summary: 'Paid, failed and expired calls per hour or day, with their amounts and fees (operator)', querystring: ActivityQuery, response: { 200: Activity } },
    },
    async (request) => paymentActivity(app.services.ctx, request.query),
  );
}
