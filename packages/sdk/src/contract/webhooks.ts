/**
 * Webhooks on the wire (docs/api/webhooks.md): the event types a tenant can subscribe to, and the
 * bodies and queries of the webhook-endpoint routes. The resources answered (WebhookEndpoint,
 * WebhookDelivery) are in resources.ts.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Id, IgnoredTenantIds, OptionalBody, StringEnum } from './schemas.js';
import {
  DepositCreditedEventData, DepositHeldEventData, PAYMENT_EVENT_TYPES, PAYOUT_EVENT_TYPES, PaymentEventData, PayoutEventData,
  TOPUP_EVENT_TYPES, TopUpEventData,
} from './rails.js';
import { X402_EVENT_TYPES, X402SettlementFailedData } from './x402.js';
import { SESSION_EVENT_TYPES, SessionEventData } from './sessions.js';

/** Every event type (GET /v1/events, webhook deliveries); what each means: src/domain/platform/events.ts. */
export const EVENT_TYPES = [
  'payout_destination.changed', ...PAYOUT_EVENT_TYPES, 'payout.resolved', ...TOPUP_EVENT_TYPES, 'deposit.held', 'deposit.credited',
  'reconciliation.shortfall', 'reconciliation.recovered', 'approval.requested', 'wallet_provider.paused', ...PAYMENT_EVENT_TYPES, ...X402_EVENT_TYPES,
  ...SESSION_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The contract's shape of an event's `data`, for the types that have one (OpenAPI's webhooks section
 * refers to it); the others' fields are in docs/api/rails.md § Events.
 */
export const EVENT_DATA_SCHEMAS: Partial<Record<EventType, TSchema>> = {
  ...Object.fromEntries(PAYMENT_EVENT_TYPES.map((t) => [t, PaymentEventData])),
  ...Object.fromEntries(PAYOUT_EVENT_TYPES.map((t) => [t, PayoutEventData])),
  ...Object.fromEntries(TOPUP_EVENT_TYPES.map((t) => [t, TopUpEventData])),
  'deposit.credited': DepositCreditedEventData,
  'deposit.held': DepositHeldEventData,
  'x402.settlement_failed': X402SettlementFailedData,
  ...Object.fromEntries(SESSION_EVENT_TYPES.map((t) => [t, SessionEventData])),
};

export const WebhookEndpointBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'where deliveries are POSTed: https (http too on a sandbox gateway)', examples: ['https://example.com/hooks/agentpay'] }),
  eventTypes: Type.Optional(Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: EVENT_TYPES.length * 2, description: 'only these event types; default every type' })),
  description: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type WebhookEndpointBody = Static<typeof WebhookEndpointBody>;
export type WebhookEndpointInput = Omit<WebhookEndpointBody, keyof typeof IgnoredTenantIds>;

export const WebhookEndpointParams = Type.Object({ id: Id('whe') });
export type WebhookEndpointParams = Static<typeof WebhookEndpointParams>;
export const WebhookDeliveryParams = Type.Object({ id: Id('whe'), deliveryId: Id('whd') });
export type WebhookDeliveryParams = Static<typeof WebhookDeliveryParams>;

export const WebhookDeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...IgnoredTenantIds,
}, { additionalProperties: false });
export type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuery>;

export const WebhookRotateBody = OptionalBody(Type.Object({
  keepPreviousForSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 * 60, description: 'how long the old secret keeps signing beside the new one; default 86400 (a day), 0 retires it at once' })),
  ...IgnoredTenantIds,
}, { additionalProperties: false }));
export type WebhookRotateBody = Static<typeof WebhookRotateBody>;

/** The replay body carries nothing: no body, `{}`, or only the ignored tenant ids. */
export const WebhookReplayBody = OptionalBody(Type.Object({ ...IgnoredTenantIds }, { additionalProperties: false }));
