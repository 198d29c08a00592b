/**
 * Payment discovery for a seller's OpenAPI document, as the MPP discovery draft
 * (draft-payment-discovery-00) describes it and `mppx discover validate` checks it: each paid
 * operation carries `x-payment-info` (the multi-offer form: one `agentpay` charge offer at the
 * capability's price) and a `402` response. Serve the result at `GET /openapi.json` over HTTPS,
 * `Content-Type: application/json`, with `Cache-Control: max-age=300`.
 *
 *   import { paymentDiscoveryDocument } from 'agentpay-sdk/discovery';
 *   app.get('/openapi.json', { config: { agentpay: false } }, async (_req, reply) =>
 *     reply.header('cache-control', 'max-age=300').send(paymentDiscoveryDocument({
 *       title: 'Forecasts', version: '1.0.0',
 *       operations: [{ method: 'GET', path: '/forecast', amountMinor: '100', currency: 'USD', summary: 'A forecast' }],
 *     })));
 *
 * A document of your own (from @fastify/swagger or written by hand) gets the same with
 * `withPaymentDiscovery(document, operations)`. Prices are integer minor units (strings), as
 * everywhere in agentpay; the draft's `amount` is the same string, `currency` lowercase.
 * No runtime dependency; runs anywhere.
 */

/** One paid operation of the seller. */
export interface PaidOperation {
  /** HTTP method, any case */
  method: string;
  /** the OpenAPI path, e.g. `/forecast` or `/cities/{id}` */
  path: string;
  /** the price per call in integer minor units, e.g. "100"; null for a price set per call */
  amountMinor: string | null;
  /** ISO 4217 code (USD) or the asset (USDC) the capability is priced in */
  currency: string;
  /** the operation's summary in the document */
  summary?: string;
  /** shown with the offer; default: "<amount> <CURRENCY> minor units per call, paid from an agentpay wallet" */
  description?: string;
  /** the capability the route sells (added as `x-agentpay-capability`, for agentpay buyers) */
  capabilityId?: string;
  /** the request body a POST/PUT/PATCH takes (an OpenAPI requestBody object); default: any JSON */
  requestBody?: Record<string, unknown>;
}

export interface ServiceInfo {
  categories?: string[];
  docs?: { apiReference?: string; homepage?: string; llms?: string };
}

export interface DiscoveryDocumentOptions {
  title: string;
  version: string;
  description?: string;
  operations: PaidOperation[];
  /** `x-service-info` of the draft */
  serviceInfo?: ServiceInfo;
}

type OpenApiDocument = { openapi: string; info: Record<string, unknown>; paths?: Record<string, Record<string, unknown>>; [k: string]: unknown };

const AMOUNT = /^(0|[1-9][0-9]*)$/;
const HAS_BODY = new Set(['post', 'put', 'patch']);

/** The draft's `x-payment-info` of one operation: one agentpay charge offer. */
export function paymentInfo(op: Pick<PaidOperation, 'amountMinor' | 'currency' | 'description'>): { offers: Array<{ intent: 'charge'; method: 'agentpay'; amount: string | null; currency: string; description: string }> } {
  if (op.amountMinor !== null && !AMOUNT.test(op.amountMinor)) {
    throw new TypeError(`amountMinor: ${JSON.stringify(op.amountMinor)} is not an amount in integer minor units (digits, no leading zero), e.g. "100"`);
  }
  if (!/^[A-Za-z0-9]{2,16}$/.test(op.currency)) throw new TypeError(`currency: ${JSON.stringify(op.currency)} is not a currency code, e.g. "USD"`);
  const description = op.description ?? (op.amountMinor === null
    ? `priced per call in ${op.currency.toUpperCase()} minor units, paid from an agentpay wallet`
    : `${op.amountMinor} ${op.currency.toUpperCase()} minor units per call, paid from an agentpay wallet`);
  return { offers: [{ intent: 'charge', method: 'agentpay', amount: op.amountMinor, currency: op.currency.toLowerCase(), description }] };
}

/** `document` with `x-payment-info` and a 402 response on each paid operation (a copy; the input is not changed). */
export function withPaymentDiscovery<T extends OpenApiDocument>(document: T, operations: PaidOperation[], serviceInfo?: ServiceInfo): T {
  const doc = JSON.parse(JSON.stringify(document)) as T;
  const paths = (doc.paths ??= {});
  for (const op of operations) {
    const method = op.method.toLowerCase();
    if (!/^(get|put|post|delete|options|head|patch|trace)$/.test(method)) throw new TypeError(`method: ${op.method} is not an HTTP method of OpenAPI`);
    if (!op.path.startsWith('/')) throw new TypeError(`path: ${op.path} must start with /`);
    const item = (paths[op.path] ??= {});
    const existing = (item[method] ?? {}) as Record<string, unknown>;
    const responses = { ...(existing.responses as Record<string, unknown> | undefined) };
    responses['200'] ??= { description: 'OK' };
    responses['402'] = {
      description: 'Payment Required: the body carries a signed agentpay price challenge (also in the PAYMENT-REQUIRED and WWW-Authenticate: Payment headers); pay it and retry',
    };
    item[method] = {
      ...(op.summary ? { summary: op.summary } : {}),
      ...existing,
      ...(HAS_BODY.has(method) && !existing.requestBody
        ? { requestBody: op.requestBody ?? { required: true, content: { 'application/json': { schema: {} } } } }
        : {}),
      'x-payment-info': paymentInfo(op),
      ...(op.capabilityId ? { 'x-agentpay-capability': op.capabilityId } : {}),
      responses,
    };
  }
  if (serviceInfo) (doc as Record<string, unknown>)['x-service-info'] = serviceInfo;
  return doc;
}

/** A whole OpenAPI 3.1 document of the paid operations, ready to serve at /openapi.json. */
export function paymentDiscoveryDocument(opts: DiscoveryDocumentOptions): OpenApiDocument {
  if (opts.operations.length === 0) throw new TypeError('operations: a discovery document needs at least one paid operation');
  const base: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: opts.title, version: opts.version, ...(opts.description ? { description: opts.description } : {}) },
    paths: {},
  };
  return withPaymentDiscovery(base, opts.operations, opts.serviceInfo);
}
