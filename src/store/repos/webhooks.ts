import type { webhookEndpoints, webhookDeliveries } from '../schema/index.js';

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
export type { WebhookAttempt } from '../tables/webhooks.js';

export type WebhookDeliveryPatch = Partial<Pick<WebhookDelivery, 'state' | 'nextAttemptAt' | 'lockedUntil' | 'attempts' | 'finishedAt'>>;
