/** Receipts: the buyer's workspace sees its purchases, the seller its sales. */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id, IgnoredTenantIds } from '../schemas.js';
import { RECEIPT_PAGE_MAX } from '../../domain/receipts.js';

const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: RECEIPT_PAGE_MAX, description: `page size, 1 to ${RECEIPT_PAGE_MAX}, default 50` })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'the nextCursor of the previous page' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });

const ReceiptParams = Type.Object({ id: Id('rcp') });
const TransactionParams = Type.Object({ id: Id('txn') });

export default async function receiptRoutes(app: FastifyInstance) {
  const { receipts } = app.services;
  const config = { scope: 'receipts:read' } as const;

  app.get<{ Querystring: Static<typeof ListQuery> }>('/v1/receipts', { config, schema: { querystring: ListQuery } }, async (request) =>
    receipts.list(principal(request), request.query),
  );

  app.get<{ Params: Static<typeof ReceiptParams> }>('/v1/receipts/:id', { config, schema: { params: ReceiptParams } }, async (request) => ({
    receipt: await receipts.get(principal(request), request.params.id),
  }));

  app.get<{ Params: Static<typeof TransactionParams> }>('/v1/transactions/:id/receipts', { config, schema: { params: TransactionParams } }, async (request) => ({
    receipts: await receipts.forTransaction(principal(request), request.params.id),
  }));
}
