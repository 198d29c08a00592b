export { WebhookService, enqueueDeliveries, endpointView, deliveryView, MAX_ENDPOINTS, MAX_PENDING_PER_ENDPOINT, MAX_DELIVERIES_PER_EVENT, type CreateEndpointInput } from './endpoints.js';
export { WebhookDeliverer, retryDelayMs, RETRY_WINDOW_MS, type DeliveryFailure, type RunResult } from './deliverer.js';
export { SecretBox, ensureWebhookKey, parseWebhookKey, newEndpointSecret, WEBHOOK_KEY_ENV, webhookKeyPath } from './secrets.js';
export { httpSender, pinnedLookup, failureReason, DeadlineExceeded, type WebhookSender, type WebhookRequest, type WebhookResponse, type Resolver } from './sender.js';
export { EgressPolicy, EgressRefused, parseCidr } from './egress.js';
