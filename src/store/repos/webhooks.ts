import type { webhookEndpoints, webhookDeliveries } from '../schema/index.js';

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
export type { WebhookAttempt } from '../tables/webhooks.js';

export interface WebhookEndpointRepo {
  insert(e: WebhookEndpoint): Promise<void>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  /** a tenant's, oldest first */
  listByTenant(tenantId: string): Promise<WebhookEndpoint[]>;
  /** takes the endpoint's next delivery `seq` (1 for the first), holding the endpoint's row until the transaction ends */
  nextSeq(id: string): Promise<number>;
  setSecrets(id: string, patch: Pick<WebhookEndpoint, 'secretCiphertext' | 'previousSecretCiphertext' | 'previousSecretUntil'>): Promise<void>;
  /** removes the endpoint and every delivery of it */
  delete(id: string): Promise<void>;
}

export type WebhookDeliveryPatch = Partial<Pick<WebhookDelivery, 'state' | 'nextAttemptAt' | 'lockedUntil' | 'attempts' | 'finishedAt'>>;

export interface WebhookDeliveryRepo {
  insert(d: WebhookDelivery): Promise<void>;
  get(id: string): Promise<WebhookDelivery | undefined>;
  /** an endpoint's, newest first; `before` is the id of the previous page's last item */
  listByEndpoint(endpointId: string, opts: { before?: string; limit: number }): Promise<WebhookDelivery[]>;
  /**
   * What is due at `now`: of each endpoint, its oldest pending delivery, when its next attempt
   * is due and no instance holds it. Soonest due first.
   */
  due(now: number, limit: number): Promise<WebhookDelivery[]>;
  /** Holds a pending delivery until `until`; false when it is not pending or another holds it. */
  claim(id: string, now: number, until: number): Promise<boolean>;
  update(id: string, patch: WebhookDeliveryPatch): Promise<void>;
  /** how many of the endpoint's deliveries are pending */
  countPending(endpointId: string): Promise<number>;
  /** how many deliveries of the event the endpoint has (the first and its replays) */
  countForEvent(endpointId: string, eventId: string): Promise<number>;
  /** deletes up to `limit` delivered or failed deliveries finished before `before`; returns how many */
  removeFinished(before: number, limit: number): Promise<number>;
}
