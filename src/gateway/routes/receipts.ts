/** Receipts: the buyer's workspace sees its purchases, the seller its sales. */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principal } from '../plugins/auth.js';
import { Id, IgnoredTenantIds } from '../schemas.js';
import { RECEIPT_PAGE_MAX } from '../../domain/payments/receipts.js';
import { Receipt, ReceiptPage } from 'agentpay-sdk/contract';
import { Closed } from 'agentpay-sdk/contract';

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

  app.get<{ Querystring: Static<typeof ListQuery> }>('/v1/receipts', { config: { ...config, errors: ['INVALID_CURSOR'] }, schema: { summary: 'Receipts of the caller, newest first, a page at a time', querystring: ListQuery, response: { 200: ReceiptPage } } }, async (request) =>
    receipts.list(principal(request), request.query),
  );

  app.get<{ Params: Static<typeof ReceiptParams> }>('/v1/receipts/:id', { config, schema: { summary: 'A signed receipt', params: ReceiptParams, response: { 200: Closed({ receipt: Receipt }) } } }, async (request) => ({
    receipt: await receipts.get(principal(request), request.params.id),
  }));

  app.get<{ Params: Static<typeof TransactionParams> }>('/v1/transactions/:id/receipts', { config, schema: { summary: "A transaction's receipts", params: TransactionParams, response: { 200: Closed({ receipts: Type.Array(Receipt) }) } } }, async (request) => ({
    receipts: await receipts.forTransaction(principal(request), request.params.id),
  }));
}
