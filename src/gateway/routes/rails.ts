/**
 * The rails as a whole: which rail providers run, the caller's rail transactions, its
 * events, processors' webhooks, and the operator's reconciliation. docs/api/rails.md.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { EVENT_TYPES } from 'agentpay-sdk/contract';
import { principal } from '../plugins/auth.js';
import { IgnoredTenantIds, StringEnum } from '../schemas.js';
import { RAIL_ERRORS } from '../plugins/responses.js';
import { LatestReconciliation, RailEventPage, RailProviderList, RailTransactionPage, RailWebhookAnswer, ReconciliationAnswer } from 'agentpay-sdk/contract';

const Page = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
};
const TransactionsQuery = Type.Object({
  kind: Type.Optional(StringEnum(['topup', 'deposit', 'payout'] as const)),
  walletId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...Page,
}, { additionalProperties: false });
const EventsQuery = Type.Object({ type: Type.Optional(StringEnum(EVENT_TYPES)), ...Page }, { additionalProperties: false });

export default async function railRoutes(app: FastifyInstance) {
  const { rails } = app.services;

  app.get('/v1/rail/providers', { config: { scope: 'rail:read', errors: RAIL_ERRORS }, schema: { response: { 200: RailProviderList } } }, async (): Promise<RailProviderList> => {
    const screening = await rails.registry.screeningView();
    return { sandbox: rails.simulatedCredits, providers: await rails.registry.views(), ...(screening ? { screening } : {}) };
  });

  app.get<{ Querystring: Static<typeof TransactionsQuery> }>(
    '/v1/rail/transactions',
    { config: { scope: 'rail:read', errors: RAIL_ERRORS }, schema: { querystring: TransactionsQuery, response: { 200: RailTransactionPage } } },
    async (request) => rails.transactions.list(principal(request), request.query),
  );

  app.get<{ Querystring: Static<typeof EventsQuery> }>(
    '/v1/events',
    { config: { scope: 'rail:read', errors: RAIL_ERRORS }, schema: { querystring: EventsQuery, response: { 200: RailEventPage } } },
    async (request) => rails.events.list(principal(request), request.query),
  );

  // the operator: reconcile now, and the latest result
  app.post('/v1/rail/reconcile', { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { response: { 200: ReconciliationAnswer } } }, async () => ({ reconciliation: await rails.reconciler.run() }));
  app.get('/v1/rail/reconciliation', { config: { scope: 'operator', errors: RAIL_ERRORS }, schema: { response: { 200: LatestReconciliation } } }, async () => ({ reconciliation: await rails.reconciler.latest() }));

  await app.register(webhookRoutes);
}

/**
 * One public route per processor, POST /v1/rail/webhooks/<provider id>: no API key (the
 * processor has none), authenticated by the adapter's signature check over the exact raw
 * bytes, which is why this plugin keeps them (JSON bodies here are parsed by it, not by
 * fastify's default parser; the parser is scoped to this plugin).
 */
async function webhookRoutes(app: FastifyInstance) {
  const raw = new WeakMap<FastifyRequest, string>();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    raw.set(request, text);
    if (text.length === 0) {
      done(new AppError('VALIDATION_FAILED', 'body: is empty but content-type is application/json; send a JSON body or drop the header', { field: 'body' }), undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(new AppError('VALIDATION_FAILED', `body: is not valid JSON (${(e as Error).message})`, { field: 'body' }), undefined);
    }
  });
  const { rails } = app.services;
  for (const a of rails.registry.providers) {
    if (!a.topUps) continue;
    const id = a.info.id;
    app.post(`/v1/rail/webhooks/${id}`, { config: { public: true, errors: RAIL_ERRORS }, schema: { body: a.topUps.webhookBodySchema, response: { 200: RailWebhookAnswer } } }, async (request) => {
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(request.headers)) headers[k] = Array.isArray(v) ? v[0] : v;
      return { received: true as const, ...(await rails.topUps.handleWebhook(id, raw.get(request) ?? '', headers)) };
    });
  }
}
