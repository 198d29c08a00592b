export { WebhookService, enqueueDeliveries, endpointView, deliveryView, MAX_ENDPOINTS, type CreateEndpointInput } from './endpoints.js';
export { WebhookDeliverer, retryDelayMs, RETRY_WINDOW_MS, type DeliveryFailure, type RunResult } from './deliverer.js';
export { SecretBox, ensureWebhookKey, parseWebhookKey, newEndpointSecret, WEBHOOK_KEY_ENV, webhookKeyPath } from './secrets.js';
export { httpSender, type WebhookSender, type WebhookRequest, type WebhookResponse } from './sender.js';
