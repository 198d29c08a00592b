/**
 * Alert mail (src/domain/platform/alert-mail.ts), on SQLite and, with AGENTPAY_TEST_DATABASE_URL, on
 * PostgreSQL: an event a person should hear of is queued in the transaction that records it and
 * mailed to every account of its tenant after the commit; an event rolled back mails nothing; a
 * Mailer that fails is retried with backoff (time moved by a ManualClock) and given up after the
 * last attempt; routine events are not mailed. Then end to end over a real SMTP server: a signed-up
 * workspace's account receives the alert of an event of its tenant from a running gateway.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { randomIds } from '../../src/core/ids.js';
import { AlertMailer, MAX_ATTEMPTS, alertRetryDelay } from '../../src/domain/platform/alert-mail.js';
import { recordEvent } from '../../src/domain/platform/events.js';
import { MemoryMailer, type MailMessage, type Mailer } from '../../src/domain/platform/mailer.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import type { Store } from '../../src/store/store.js';
import { storeBackends } from '../helpers/store-backends.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { PASSWORD, startSmtp, USER } from '../helpers/smtp.js';

const backends = storeBackends('alert-mail');

/** A Mailer that refuses while `down`, and keeps what it took. */
class FlakyMailer implements Mailer {
  down = false;
  readonly sent: MailMessage[] = [];
  async send(m: MailMessage) {
    if (this.down) throw new Error('spool disk full');
    this.sent.push(m);
  }
}

describe.each(backends)('alert mail on $name', (b) => {
  let store: Store;
  const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
  const ctx = () => ({ store, clock, ids: randomIds });

  beforeAll(async () => {
    await b.setup();
    store = await b.open();
  });
  afterAll(async () => {
    await store.close();
    await b.teardown();
  });

  /** A workspace with two accounts (people who log in to it). */
  async function workspace(name: string, emails: string[]) {
    return store.tx(async (r) => {
      const t = await createTenant(r, ctx(), { kind: 'workspace', name, email: emails[0] ?? null });
      for (const [i, email] of emails.entries()) {
        await r.accounts.insert({ id: randomIds.next('account'), tenantId: t.id, email, passwordHash: 'x', createdAt: clock.now() + i, updatedAt: clock.now() });
      }
      return t;
    });
  }

  it('mails an approval request to every account of the tenant, once, after the commit', async () => {
    const t = await workspace('Acme Agents', [`a-${randomIds.next('account')}@acme.test`, `b-${randomIds.next('account')}@acme.test`]);
    const event = await store.tx((r) => recordEvent(r, ctx(), t.id, 'approval.requested', { approvalId: 'apr_1', amountMinor: '2500', capabilityId: 'cap_1' }));
    const mailer = new MemoryMailer();
    const alerts = new AlertMailer(ctx(), mailer);

    expect(await alerts.runOnce()).toEqual({ sent: 1, retried: 0, failed: 0 });
    const mine = mailer.sent.filter((m) => m.kind === 'alert' && m.eventId === event.id);
    expect(mine.map((m) => m.to).sort()).toEqual((await store.read((r) => r.accounts.listByTenant(t.id))).map((a) => a.email).sort());
    expect(mine[0]).toMatchObject({ kind: 'alert', eventType: 'approval.requested', subject: '[agentpay] A purchase is waiting for your approval' });
    expect(mine[0]!.text).toContain('approvalId: apr_1');
    expect(mine[0]!.text).toContain('amountMinor: 2500');
    expect(mine[0]!.text).toContain('Acme Agents');
    const row = await store.read((r) => r.alertMails.byEvent(event.id));
    expect(row).toMatchObject({ state: 'sent', attempts: 1, recipients: 2, lockedUntil: null });

    // nothing due any more: a second run sends nothing again
    expect(await alerts.runOnce()).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(mailer.sent.filter((m) => m.kind === 'alert' && m.eventId === event.id)).toHaveLength(2);
  });

  it('queues nothing for an event whose transaction rolled back, nor for routine events', async () => {
    const t = await workspace('Rollback Co', [`r-${randomIds.next('account')}@rb.test`]);
    let eventId = '';
    await expect(store.tx(async (r) => {
      eventId = (await recordEvent(r, ctx(), t.id, 'wallet_provider.paused', { walletId: 'wal_1', providerId: 'ten_1', consecutiveFailures: 5 })).id;
      throw new Error('the change it announced failed');
    })).rejects.toThrow('the change it announced failed');
    expect(await store.read((r) => r.alertMails.byEvent(eventId))).toBeUndefined();

    const routine = await store.tx((r) => recordEvent(r, ctx(), t.id, 'deposit.credited', { walletId: 'wal_1', amountMinor: '100' }));
    expect(await store.read((r) => r.alertMails.byEvent(routine.id))).toBeUndefined();
    const mailer = new MemoryMailer();
    await new AlertMailer(ctx(), mailer).runOnce();
    expect(mailer.sent.filter((m) => m.kind === 'alert' && (m.eventId === eventId || m.eventId === routine.id))).toEqual([]);
  });

  it('retries a Mailer that fails with backoff, sends once it takes the message, and gives up after the last attempt', async () => {
    const t = await workspace('Flaky Inc', [`f-${randomIds.next('account')}@flaky.test`]);
    const mailer = new FlakyMailer();
    const alerts = new AlertMailer(ctx(), mailer);
    mailer.down = true;
    const event = await store.tx((r) => recordEvent(r, ctx(), t.id, 'payout.returned', { payoutId: 'po_1', amountMinor: '9700', rail: 'ach', reason: 'account closed' }));

    expect((await alerts.runOnce()).retried).toBeGreaterThanOrEqual(1);
    let row = await store.read((r) => r.alertMails.byEvent(event.id));
    expect(row).toMatchObject({ state: 'pending', attempts: 1, lastError: 'spool disk full', nextAttemptAt: clock.now() + alertRetryDelay(1) });
    // not due before its delay
    clock.advance(alertRetryDelay(1) - 1);
    await alerts.runOnce();
    expect((await store.read((r) => r.alertMails.byEvent(event.id)))!.attempts).toBe(1);
    clock.advance(1);
    mailer.down = false;
    await alerts.runOnce();
    row = await store.read((r) => r.alertMails.byEvent(event.id));
    expect(row).toMatchObject({ state: 'sent', attempts: 2, recipients: 1 });
    expect(mailer.sent.filter((m) => m.kind === 'alert' && m.eventId === event.id)).toHaveLength(1);

    // a message the Mailer never takes is given up after MAX_ATTEMPTS, and not tried again
    mailer.down = true;
    const lost = await store.tx((r) => recordEvent(r, ctx(), t.id, 'deposit.held', { depositId: 'dep_1', amountMinor: '500' }));
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await alerts.runOnce();
      clock.advance(alertRetryDelay(i + 1));
    }
    expect(await store.read((r) => r.alertMails.byEvent(lost.id))).toMatchObject({ state: 'failed', attempts: MAX_ATTEMPTS, lastError: 'spool disk full' });
    mailer.down = false;
    await alerts.runOnce();
    expect(mailer.sent.filter((m) => m.kind === 'alert' && m.eventId === lost.id)).toEqual([]);
  });

  it('a mail held by one sender is not sent by another at the same time (two instances of a fleet)', async () => {
    const t = await workspace('Fleet Ltd', [`q-${randomIds.next('account')}@fleet.test`]);
    const event = await store.tx((r) => recordEvent(r, ctx(), t.id, 'reconciliation.shortfall', { shortfallMinor: '100' }));
    const one = new MemoryMailer();
    const two = new MemoryMailer();
    await Promise.all([new AlertMailer(ctx(), one).runOnce(), new AlertMailer(ctx(), two).runOnce()]);
    const got = [...one.sent, ...two.sent].filter((m) => m.kind === 'alert' && m.eventId === event.id);
    expect(got).toHaveLength(1);
  });
});

describe('alert mail from a gateway, over SMTP', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('reaches the account of a signed-up workspace when an event of its tenant is recorded', async () => {
    const smtp = await startSmtp(0);
    cleanups.push(() => smtp.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'agentpay-alert-smtp-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock(Date.now());
    const t: TestGateway = await startTestGateway({ dataDir, clock, config: { alertMailIntervalMs: 0, mail: { smtpUrl: `smtp://${USER}:${PASSWORD}@127.0.0.1:${smtp.port}`, from: 'Agentpay <no-reply@agentpay.test>' } } });
    cleanups.push(() => t.close());

    const email = `owner-${Date.now()}@alerts.test`;
    const started = await t.client().signup.start({ kind: 'workspace', name: 'Alerted Workspace', email, password: 'correct horse battery staple 42' });
    const [signupMail] = await smtp.arrived(1);
    const token = /waits for this verification token:\r?\n\r?\n {2}(\S+)/.exec(signupMail!.raw)![1]!;
    const verified = await t.client().signup.verify({ signupId: started.signup.id, token });
    const tenantId = verified.tenant.id;

    const services = t.gw.services;
    await services.ctx.store.tx((r) => recordEvent(r, services.ctx, tenantId, 'wallet_provider.paused', { walletId: 'wal_x', providerId: 'ten_y', consecutiveFailures: 5 }));
    expect(await services.alertMailer.runOnce()).toMatchObject({ sent: 1 });
    const alert = (await smtp.arrived(2))[1]!;
    expect(alert.to).toEqual([email]);
    expect(alert.raw).toContain('[agentpay] A seller was paused for one of your wallets');
    expect(alert.raw).toContain('walletId: wal_x');
  });
});
