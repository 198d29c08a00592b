/**
 * OpenAPI's `webhooks` section: every event type a webhook endpoint can receive (docs/api/webhooks.md),
 * as the POST the gateway sends, signed in `agentpay-signature`. An event's `data` is the contract's
 * shape of it where there is one (EVENT_DATA_SCHEMAS: the payment, payout, top-up and deposit events);
 * the others' fields are in docs/api/rails.md § Events.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES } from 'agentpay-sdk/contract';

const GENERIC_DATA = Type.Record(Type.String(), Type.Unknown(), { description: "the event's facts (ids, amounts as strings): docs/api/rails.md § Events" });

function eventSchema(type: string, data: TSchema): TSchema {
  return Type.Object({
    id: Type.String({ description: 'evt_…; the same event may arrive twice: do its work once per id' }),
    type: Type.Literal(type),
    createdAt: Type.String({ description: 'ISO 8601 time (UTC)' }),
    data,
  }, { additionalProperties: false });
}

export function webhookEvents(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const data = EVENT_DATA_SCHEMAS[type] ?? GENERIC_DATA;
    out[type] = {
      post: {
        summary: `${type}, POSTed to each endpoint that wants it`,
        description: 'Signed: check `agentpay-signature` with the endpoint\'s secret (agentpay-sdk/webhooks verifyWebhookSignature). Headers `agentpay-event-id`, `agentpay-event-type`, `agentpay-delivery-id`. Any 2xx within 10 s counts as delivered.',
        requestBody: { required: true, content: { 'application/json': { schema: eventSchema(type, data) } } },
        responses: { '2XX': { description: 'delivered' }, default: { description: 'a failed attempt: retried with backoff for at least 24 hours' } },
      },
    };
  }
  return out;
}
