/**
 * The seller: a fastify app with one free route and one paid route. The agentpay plugin
 * answers an unpaid call of the paid route with 402 and a price challenge, runs the
 * handler only after the gateway authorized the buyer's payment, and sends the response
 * with a signed receipt (x-service-receipt). A handler answering 4xx or 5xx (or throwing)
 * refunds the buyer.
 */
import Fastify from 'fastify';
import { agentpaySeller } from 'agentpay-sdk/seller/fastify';
import { PAID_PATH } from './capability.js';
import { summarizeBody } from './schema.js';

/** The paid work: the first `maxWords` words of `text`. */
export function summarize(text, maxWords) {
  const words = text.split(/\s+/).filter(Boolean);
  return { summary: words.slice(0, maxWords).join(' '), words: Math.min(words.length, maxWords), truncated: words.length > maxWords };
}

/**
 * @param {object} opts
 * @param {string} opts.capabilityId  the capability the paid route sells
 * @param {string} [opts.gatewayUrl]  the gateway it is published on, e.g. https://127.0.0.1:4402
 * @param {string} [opts.apiKey]      a provider key with payments:write
 * @param {string} [opts.ca]          PEM of the gateway's CA (a local gateway's DATA_DIR/tls/ca.pem)
 * @param {import('agentpay-sdk/seller/fastify').SellerPayments} [opts.seller]  instead of the three above (tests)
 * @param {boolean} [opts.logger]
 */
export async function buildApp(opts) {
  const app = Fastify({
    logger: opts.logger ?? false,
    // a body that does not match the schema is refused, never silently coerced or trimmed
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
  });
  await app.register(
    agentpaySeller,
    opts.seller ? { seller: opts.seller } : { gatewayUrl: opts.gatewayUrl, apiKey: opts.apiKey, ...(opts.ca ? { ca: opts.ca } : {}) },
  );

  app.get('/health', { config: { agentpay: false } }, async () => ({ ok: true }));

  app.post(PAID_PATH, { schema: { body: summarizeBody }, config: { agentpay: { capabilityId: opts.capabilityId } } }, async (request) => {
    const { text, maxWords } = request.body;
    return summarize(text, maxWords);
  });

  return app;
}
