/**
 * Alert mail: the events of GET /v1/events that a person should hear of are mailed to every account
 * of the tenant (signup, password-reset and alert mail go through the same Mailer: SMTP through the
 * spool when the gateway has --smtp-url, else DATA_DIR/outbox.jsonl).
 *
 * - recordEvent queues one `alert_mails` row in the transaction that records the event, so a mail
 *   exists exactly when its event does, on every backend, whichever instance recorded it.
 * - AlertMailer, a fleet duty (one instance at a time), hands each due row to the Mailer after the
 *   commit, reading the recipients then (the accounts of the tenant; its contact address when it has
 *   none). The Mailer keeps the message (the spool is written before sending), so the row is done
 *   once it took it; if the Mailer fails, the row is retried with backoff and given up after
 *   MAX_ATTEMPTS. A crash between the Mailer taking a message and the row being marked can send
 *   that message twice; never zero times.
 */
import { iso } from '../../core/clock.js';
import type { Repos } from '../../store/store.js';
import type { RailEvent } from '../../store/repos/rails.js';
import type { AlertMail } from '../../store/repos/alerts.js';
import type { DomainContext } from './context.js';
import type { AlertMessage, Mailer } from './mailer.js';
import { Periodic } from './periodic.js';

/**
 * The event types that are mailed, with their subject line. The routine ones are not: deposit.credited, the
 * top-ups, the payments, payout.confirmed, and payout.failed (its provider is told by the 503 of its own request,
 * or by payout.resolved's mail when the operator resolved it).
 */
export const ALERT_MAIL_HEADLINES: Readonly<Record<string, string>> = {
  'approval.requested': 'A purchase is waiting for your approval',
  'wallet_provider.paused': 'A seller was paused for one of your wallets after repeated failures',
  'payout.returned': 'A payout came back and was re-credited to your settlement wallet',
  'payout.resolved': 'A stuck payout was resolved by the operator',
  'payout_destination.changed': 'A payout destination of yours changed',
  'deposit.held': 'A USDC deposit is held until the price is back in band',
  'reconciliation.shortfall': 'Reconciliation found a shortfall: payouts are paused',
  'reconciliation.recovered': 'Reconciliation is covered again: payouts resumed',
  'x402.settlement_failed': 'An x402 payment could not be settled on chain after the call was delivered',
};

export const MAX_ATTEMPTS = 10;
const LOCK_MS = 60_000;

/** Delay before attempt n+1 after n failed ones: 30 s doubling, at most one hour. */
export const alertRetryDelay = (failed: number): number => Math.min(30_000 * 2 ** Math.max(0, failed - 1), 3_600_000);

/** Queues the alert mail of `event`, when its type is mailed. Runs inside recordEvent's transaction. */
export async function enqueueAlertMail(r: Repos, ctx: Pick<DomainContext, 'clock' | 'ids'>, event: RailEvent): Promise<void> {
  if (!(event.type in ALERT_MAIL_HEADLINES)) return;
  const now = ctx.clock.now();
  await r.alertMails.insert({
    id: ctx.ids.next('alertMail'),
    tenantId: event.tenantId,
    eventId: event.id,
    eventType: event.type,
    state: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    lockedUntil: null,
    lastError: null,
    recipients: null,
    createdAt: now,
    finishedAt: null,
  });
}

/** The message of one event, for one address. Event data carries ids and amounts, never secrets. */
export function alertMessage(event: RailEvent, to: string, tenantName: string): AlertMessage {
  const headline = ALERT_MAIL_HEADLINES[event.type] ?? event.type;
  const details = Object.entries(event.data).map(([k, v]) => `  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const text = [
    `${headline}.`,
    '',
    `Tenant: ${tenantName} (${event.tenantId})`,
    `Event: ${event.type} ${event.id} at ${iso(event.createdAt)}`,
    ...(details.length ? ['', ...details] : []),
    '',
    'See it with `agentpay events list`, GET /v1/events, or the dashboard.',
  ].join('\n');
  return { kind: 'alert', to, subject: `[agentpay] ${headline}`, text, eventId: event.id, eventType: event.type };
}

export interface AlertRunResult { sent: number; retried: number; failed: number }

export class AlertMailer {
  private readonly periodic = new Periodic(() => this.runOnce());

  constructor(private readonly ctx: Pick<DomainContext, 'store' | 'clock'>, private readonly mailer: Mailer, private readonly batch = 20) {}

  /** Hands every due alert (up to `batch`) to the Mailer. */
  async runOnce(): Promise<AlertRunResult> {
    const { store, clock } = this.ctx;
    const due = await store.read((r) => r.alertMails.due(clock.now(), this.batch));
    const result: AlertRunResult = { sent: 0, retried: 0, failed: 0 };
    for (const m of due) {
      const outcome = await this.send(m);
      if (outcome) result[outcome] += 1;
    }
    return result;
  }

  private async send(m: AlertMail): Promise<keyof AlertRunResult | undefined> {
    const { store, clock } = this.ctx;
    const now = clock.now();
    const claimed = await store.tx((r) => r.alertMails.claim(m.id, now, now + LOCK_MS));
    if (!claimed) return undefined;
    const found = await store.read(async (r) => {
      const event = await r.railEvents.get(m.eventId);
      const tenant = await r.tenants.get(m.tenantId);
      const accounts = await r.accounts.listByTenant(m.tenantId);
      return { event, tenant, accounts };
    });
    const addresses = [...new Set(found.accounts.length ? found.accounts.map((a) => a.email) : found.tenant?.email ? [found.tenant.email] : [])];
    try {
      if (found.event) for (const to of addresses) await this.mailer.send(alertMessage(found.event, to, found.tenant?.name ?? m.tenantId));
    } catch (e) {
      const attempts = m.attempts + 1;
      const giveUp = attempts >= MAX_ATTEMPTS;
      const lastError = (e instanceof Error ? e.message : String(e)).slice(0, 500);
      await store.tx((r) => r.alertMails.update(m.id, giveUp
        ? { state: 'failed', attempts, lockedUntil: null, lastError, finishedAt: clock.now() }
        : { attempts, lockedUntil: null, lastError, nextAttemptAt: clock.now() + alertRetryDelay(attempts) }));
      return giveUp ? 'failed' : 'retried';
    }
    await store.tx((r) => r.alertMails.update(m.id, { state: 'sent', attempts: m.attempts + 1, lockedUntil: null, recipients: found.event ? addresses.length : 0, finishedAt: clock.now() }));
    return 'sent';
  }

  /** Runs every `intervalMs` (0: never); a failed run is reported to `onError` and tried again next time. */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    this.periodic.start(intervalMs, onError, when);
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
  }
}
