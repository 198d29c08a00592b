/**
 * Webhook endpoints and their deliveries (docs/api/webhooks.md): a tenant registers URLs, each
 * gets its own signing secret (shown once), and every event the tenant can read at GET /v1/events
 * is queued for each endpoint that wants its type, in the transaction that records the event.
 */
import { AppError, notFound, validationError } from '../../../core/errors.js';
import { iso } from '../../../core/clock.js';
import type { Repos } from '../../../store/store.js';
import type { RailEvent } from '../../../store/repos/rails.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../../store/repos/webhooks.js';
import type { DomainContext } from '../context.js';
import type { Principal } from '../../tenancy/api-keys.js';
import { EVENT_TYPES, type EventType } from 'agentpay-sdk/contract';
import { newEndpointSecret, type SecretBox } from './secrets.js';
import { EgressPolicy, isLocalhostName, literalAddress } from './egress.js';

/** How many endpoints one tenant may have. */
export const MAX_ENDPOINTS = 16;
/**
 * How many deliveries one endpoint may have waiting. An event that finds its endpoint's queue
 * full is not queued: its delivery is recorded as failed at once (see `enqueueDeliveries`), so a
 * receiver that is down for long, or never answers, cannot make the table grow without end.
 */
export const MAX_PENDING_PER_ENDPOINT = 1000;
/** the attempt recorded on a delivery not sent because its endpoint's queue was full */
export const QUEUE_FULL_ERROR = `not sent: the endpoint already has ${MAX_PENDING_PER_ENDPOINT} deliveries waiting; replay it once they have gone out`;
/** How many deliveries of one event one endpoint may have: the first and 49 replays. */
export const MAX_DELIVERIES_PER_EVENT = 50;

export const endpointView = (e: WebhookEndpoint, now?: number) => ({
  id: e.id,
  url: e.url,
  description: e.description ?? null,
  /** null: every event type */
  eventTypes: e.eventTypes ?? null,
  /** after a rotation: until when the previous secret still signs too; null when it no longer does */
  previousSecretExpiresAt: e.previousSecretUntil !== null && (now === undefined || e.previousSecretUntil > now) ? iso(e.previousSecretUntil) : null,
  createdAt: iso(e.createdAt),
});

/** The secrets a delivery is signed with now: the current one, and the previous one while it lasts. */
export function signingSecrets(e: WebhookEndpoint, box: SecretBox, now: number): string[] {
  const secrets = [box.open(e.secretCiphertext)];
  if (e.previousSecretCiphertext && e.previousSecretUntil !== null && e.previousSecretUntil > now) secrets.push(box.open(e.previousSecretCiphertext));
  return secrets;
}

/** How long a replaced secret keeps signing by default, and at most. */
export const DEFAULT_ROTATION_OVERLAP_SEC = 24 * 60 * 60;
export const MAX_ROTATION_OVERLAP_SEC = 7 * 24 * 60 * 60;

export const deliveryView = (d: WebhookDelivery) => {
  const last = d.attempts.at(-1);
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    state: d.state,
    /** when the next attempt is due; null once delivered or given up */
    nextAttemptAt: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    attempts: d.attempts.map((a) => ({
      at: iso(a.at),
      status: a.status ?? null,
      error: a.error ?? null,
      durationMs: a.durationMs,
    })),
    lastStatus: last?.status ?? null,
    replayOf: d.replayOf ?? null,
    createdAt: iso(d.createdAt),
    finishedAt: d.finishedAt === null ? null : iso(d.finishedAt),
  };
};

const wants = (e: WebhookEndpoint, type: string) => e.eventTypes === null || e.eventTypes.includes(type);

/**
 * Queues `event` for each of its tenant's endpoints that wants its type. Called by recordEvent,
 * inside the transaction that records the event: a delivery exists exactly when its event does.
 */
export async function enqueueDeliveries(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids'>, event: RailEvent): Promise<void> {
  const endpoints = await r.webhookEndpoints.listByTenant(event.tenantId);
  for (const e of endpoints) {
    if (!wants(e, event.type)) continue;
    // the event itself must be recorded whatever the endpoint's state: a full queue fails the delivery, not the event
    const full = (await r.webhookDeliveries.countPending(e.id)) >= MAX_PENDING_PER_ENDPOINT;
    await insertDelivery(r, ctx, e, event, null, full);
  }
}

async function insertDelivery(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids'>, e: WebhookEndpoint, event: Pick<RailEvent, 'id' | 'type'>, replayOf: string | null, queueFull = false, takenSeq?: number): Promise<WebhookDelivery> {
  const now = ctx.clock.now();
  const seq = takenSeq ?? await r.webhookEndpoints.nextSeq(e.id);
  // a full queue records the delivery as failed at once, with the reason, so the event is never lost from the log
  const d: WebhookDelivery = {
    id: ctx.ids.next('webhookDelivery'),
    endpointId: e.id,
    tenantId: e.tenantId,
    eventId: event.id,
    eventType: event.type,
    seq,
    state: queueFull ? 'failed' : 'pending',
    nextAttemptAt: now,
    lockedUntil: null,
    attempts: queueFull ? [{ at: now, durationMs: 0, error: QUEUE_FULL_ERROR }] : [],
    replayOf,
    createdAt: now,
    finishedAt: queueFull ? now : null,
  };
  await r.webhookDeliveries.insert(d);
  return d;
}

export interface CreateEndpointInput {
  url: string;
  eventTypes?: readonly EventType[] | undefined;
  description?: string | undefined;
}

export interface WebhookServiceOptions {
  box: SecretBox;
  /** production refuses plain-http endpoints */
  mode: 'sandbox' | 'production';
  /** where deliveries may go: a literal address it refuses is refused when the endpoint is made */
  egress: EgressPolicy;
}

export class WebhookService {
  constructor(private ctx: DomainContext, private opts: WebhookServiceOptions) {}

  /** A new endpoint and its secret; the secret is in this answer only. */
  async create(p: Principal, input: CreateEndpointInput) {
    const url = this.checkUrl(input.url);
    const eventTypes = input.eventTypes === undefined ? null : [...new Set(input.eventTypes)];
    if (eventTypes !== null) {
      if (eventTypes.length === 0) throw validationError('eventTypes', 'is empty; leave it out to receive every event type, or name at least one');
      const unknown = eventTypes.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
      if (unknown.length) throw validationError('eventTypes', `${unknown.join(', ')} is not an event type; use ${EVENT_TYPES.join(', ')}`);
    }
    const secret = newEndpointSecret();
    const endpoint = await this.ctx.store.tx(async (r) => {
      const existing = await r.webhookEndpoints.listByTenant(p.tenantId);
      if (existing.length >= MAX_ENDPOINTS) {
        throw new AppError('CONFLICT', `you have ${existing.length} webhook endpoints, the most there can be; delete one first (DELETE /v1/webhook-endpoints/:id)`, { limit: MAX_ENDPOINTS });
      }
      const e: WebhookEndpoint = {
        id: this.ctx.ids.next('webhookEndpoint'),
        tenantId: p.tenantId,
        url,
        description: input.description ?? null,
        eventTypes,
        secretCiphertext: this.opts.box.seal(secret),
        previousSecretCiphertext: null,
        previousSecretUntil: null,
        lastSeq: 0,
        createdAt: this.ctx.clock.now(),
      };
      await r.webhookEndpoints.insert(e);
      return e;
    });
    return { endpoint: endpointView(endpoint), secret };
  }

  /**
   * A new secret for the endpoint, shown in this answer only. For `overlapSec` (default a day)
   * deliveries carry a signature with each secret, so receivers can switch over in their own time;
   * 0 retires the old secret at once.
   */
  async rotateSecret(p: Principal, id: string, overlapSec = DEFAULT_ROTATION_OVERLAP_SEC) {
    if (!Number.isSafeInteger(overlapSec) || overlapSec < 0 || overlapSec > MAX_ROTATION_OVERLAP_SEC) {
      throw validationError('keepPreviousForSeconds', `must be a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_SEC} (7 days)`);
    }
    const secret = newEndpointSecret();
    const now = this.ctx.clock.now();
    const endpoint = await this.ctx.store.tx(async (r) => {
      const e = await this.owned(r, p, id);
      const patch = overlapSec > 0
        ? { secretCiphertext: this.opts.box.seal(secret), previousSecretCiphertext: e.secretCiphertext, previousSecretUntil: now + overlapSec * 1000 }
        : { secretCiphertext: this.opts.box.seal(secret), previousSecretCiphertext: null, previousSecretUntil: null };
      await r.webhookEndpoints.setSecrets(id, patch);
      return { ...e, ...patch };
    });
    return { endpoint: endpointView(endpoint, now), secret };
  }

  async list(p: Principal) {
    const endpoints = await this.ctx.store.read((r) => r.webhookEndpoints.listByTenant(p.tenantId));
    const now = this.ctx.clock.now();
    return { endpoints: endpoints.map((e) => endpointView(e, now)) };
  }

  async get(p: Principal, id: string) {
    return { endpoint: endpointView(await this.ctx.store.read((r) => this.owned(r, p, id)), this.ctx.clock.now()) };
  }

  /** Deletes the endpoint; deliveries still pending are dropped with it. */
  async remove(p: Principal, id: string) {
    const e = await this.ctx.store.tx(async (r) => {
      const e = await this.owned(r, p, id);
      await r.webhookEndpoints.delete(id);
      return e;
    });
    return { endpoint: endpointView(e), deleted: true as const };
  }

  /** An endpoint's deliveries, newest first; `nextCursor` only when the page came back full. */
  async deliveries(p: Principal, id: string, q: { limit?: number | undefined; after?: string | undefined }) {
    const limit = q.limit ?? 50;
    return this.ctx.store.read(async (r) => {
      await this.owned(r, p, id);
      if (q.after !== undefined) {
        const at = await r.webhookDeliveries.get(q.after);
        if (!at || at.endpointId !== id) throw new AppError('INVALID_CURSOR', `after: ${q.after} is not a delivery of this endpoint; pass a nextCursor you were given`, { field: 'after' });
      }
      const rows = await r.webhookDeliveries.listByEndpoint(id, { ...(q.after ? { before: q.after } : {}), limit });
      return { deliveries: rows.map(deliveryView), ...(rows.length === limit ? { nextCursor: rows.at(-1)!.id } : {}) };
    });
  }

  async delivery(p: Principal, id: string, deliveryId: string) {
    return this.ctx.store.read(async (r) => ({ delivery: deliveryView(await this.ownedDelivery(r, p, id, deliveryId)) }));
  }

  /**
   * Sends a delivery's event again: a new delivery (`replayOf` the given one) queued behind the
   * endpoint's others, whatever became of the first.
   */
  async replay(p: Principal, id: string, deliveryId: string) {
    return this.ctx.store.tx(async (r) => {
      const original = await this.ownedDelivery(r, p, id, deliveryId);
      // the endpoint's seq first: its row lock makes concurrent replays count one after another
      const seq = await r.webhookEndpoints.nextSeq(id);
      if (!(await r.railEvents.get(original.eventId))) {
        throw new AppError('CONFLICT', `event ${original.eventId} is past its retention and can no longer be sent`, { eventId: original.eventId });
      }
      const sent = await r.webhookDeliveries.countForEvent(id, original.eventId);
      if (sent >= MAX_DELIVERIES_PER_EVENT) {
        throw new AppError('CONFLICT', `event ${original.eventId} has been queued for this endpoint ${sent} times, the most there can be; read it at GET /v1/events instead`, { limit: MAX_DELIVERIES_PER_EVENT });
      }
      const pending = await r.webhookDeliveries.countPending(id);
      if (pending >= MAX_PENDING_PER_ENDPOINT) {
        throw new AppError('CONFLICT', `the endpoint already has ${pending} deliveries waiting, the most there can be; replay once they have gone out`, { limit: MAX_PENDING_PER_ENDPOINT });
      }
      const e = (await r.webhookEndpoints.get(id))!;
      const d = await insertDelivery(r, this.ctx, e, { id: original.eventId, type: original.eventType }, original.id, false, seq);
      return { delivery: deliveryView(d) };
    });
  }

  private async owned(r: Repos, p: Principal, id: string): Promise<WebhookEndpoint> {
    const e = await r.webhookEndpoints.get(id);
    // another tenant's endpoint is not found, as if it did not exist
    if (!e || e.tenantId !== p.tenantId) throw notFound('NOT_FOUND', 'webhook endpoint', id);
    return e;
  }

  private async ownedDelivery(r: Repos, p: Principal, id: string, deliveryId: string): Promise<WebhookDelivery> {
    await this.owned(r, p, id);
    const d = await r.webhookDeliveries.get(deliveryId);
    if (!d || d.endpointId !== id) throw notFound('NOT_FOUND', 'webhook delivery', deliveryId);
    return d;
  }

  private checkUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw validationError('url', `${JSON.stringify(text)} is not a URL; give an absolute one such as https://example.com/hooks/agentpay`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw validationError('url', `must be http(s), got ${url.protocol}`);
    if (url.username || url.password) throw validationError('url', 'must not carry a user name or password; authenticate deliveries by their signature');
    if (this.opts.mode === 'production' && url.protocol !== 'https:') throw validationError('url', 'must be https on a production gateway');
    // names are checked at each attempt (what they resolve to then); an address can be refused now
    const literal = literalAddress(url.hostname) ?? (isLocalhostName(url.hostname) ? '127.0.0.1' : undefined);
    if (literal !== undefined && !this.opts.egress.allows(literal)) {
      throw validationError('url', `${url.hostname} is a loopback, private, link-local or otherwise internal address, where webhooks are not sent; give a public host name (an operator can allow internal ranges with webhooks.egressAllow)`);
    }
    return url.toString();
  }
}
