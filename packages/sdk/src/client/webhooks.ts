import type { HttpClient } from './http.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from '../contract/resources.js';
import type { WebhookEndpointInput } from '../contract/webhooks.js';

// the endpoint and its deliveries as answered, and the create body: the contract's (contract/resources.ts, webhooks.ts)
export type { WebhookEndpoint, WebhookEndpointInput };
export type WebhookEndpointDelivery = WebhookDelivery;
export type WebhookEndpointDeliveryAttempt = WebhookDelivery['attempts'][number];

/** Webhook endpoints and their deliveries. Needs webhooks:read / webhooks:write. */
export class WebhooksApi {
  constructor(private http: HttpClient) {}

  /** The answer carries the endpoint's signing secret, shown this once. */
  create(input: WebhookEndpointInput): Promise<WebhookEndpointWithSecret> {
    return this.http.request('POST', '/v1/webhook-endpoints', { body: input });
  }
  list(): Promise<{ endpoints: WebhookEndpoint[] }> {
    return this.http.request('GET', '/v1/webhook-endpoints');
  }
  get(id: string): Promise<{ endpoint: WebhookEndpoint }> {
    return this.http.request('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
  }
  delete(id: string): Promise<{ endpoint: WebhookEndpoint; deleted: true }> {
    return this.http.request('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
  }
  /** A new secret (shown this once); the old one keeps signing beside it for `keepPreviousForSeconds` (default a day). */
  rotateSecret(id: string, input: { keepPreviousForSeconds?: number } = {}): Promise<WebhookEndpointWithSecret> {
    return this.http.request('POST', `/v1/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`, input.keepPreviousForSeconds !== undefined ? { body: input } : {});
  }
  /** Newest first. */
  deliveries(id: string, q: { limit?: number; after?: string } = {}): Promise<{ deliveries: WebhookEndpointDelivery[]; nextCursor?: string }> {
    return this.http.request('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}/deliveries`, { query: { limit: q.limit, after: q.after } });
  }
  delivery(id: string, deliveryId: string): Promise<{ delivery: WebhookEndpointDelivery }> {
    return this.http.request('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}`);
  }
  /** Queues the delivery's event again, as a new delivery. */
  retry(id: string, deliveryId: string): Promise<{ delivery: WebhookEndpointDelivery }> {
    return this.http.request('POST', `/v1/webhook-endpoints/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`);
  }
}
