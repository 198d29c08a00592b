import type { HttpClient } from './http.js';

/** A webhook endpoint (docs/api/webhooks.md). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  /** null: every event type */
  eventTypes: string[] | null;
  /** after a rotation: until when the previous secret still signs too */
  previousSecretExpiresAt: string | null;
  createdAt: string;
}

export interface WebhookEndpointDeliveryAttempt {
  at: string;
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookEndpointDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  state: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: string | null;
  attempts: WebhookEndpointDeliveryAttempt[];
  lastStatus: number | null;
  replayOf: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** Webhook endpoints and their deliveries. Needs webhooks:read / webhooks:write. */
export class WebhooksApi {
  constructor(private http: HttpClient) {}

  /** The answer carries the endpoint's signing secret, shown this once. */
  create(input: { url: string; eventTypes?: string[]; description?: string }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
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
  rotateSecret(id: string, input: { keepPreviousForSeconds?: number } = {}): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
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
