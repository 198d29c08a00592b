/**
 * Mail over SMTP against a real SMTP server (smtp-server on 127.0.0.1, a random port):
 * a signup's mail arrives with a token that verifies it; a refused connection does not
 * fail the request, the message waits in the spool and goes out once the server is up
 * (retries driven by a ManualClock, no sleeping); a restart in between loses nothing; a
 * server's permanent refusal keeps the message in failed/; the SMTP password is never
 * logged or spooled.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { outboxPath } from '../../src/domain/platform/mailer.js';
import { gatewayStartOptions } from '../../src/cli/gateway-config.js';
import { resolveConfig } from '../../src/gateway/config.js';
import { redactSmtpUrl, scrubSecret } from '../../src/gateway/mail/settings.js';
import { MailSpool, mailSpoolDir, retryDelay, type SpoolTimers } from '../../src/gateway/mail/spool.js';
import { SmtpTransport } from '../../src/gateway/mail/smtp.js';
import { startGateway } from '../../src/gateway/server.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { backendOptions, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort, PASSWORD, startSmtp as startSmtpServer, USER } from '../helpers/smtp.js';

async function startSmtp(port = 0, opts: { reject?: boolean } = {}) {
  const smtp = await startSmtpServer(port, opts);
  cleanups.push(() => smtp.close());
  return smtp;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const smtpUrl = (port: number) => `smtp://${USER}:${PASSWORD}@127.0.0.1:${port}`;
const FROM = 'Agentpay <no-reply@agentpay.test>';

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentpay-mail-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function gateway(dataDir: string, port: number, clock = new ManualClock(Date.now())): Promise<TestGateway> {
  const t = await startTestGateway({ dataDir, clock, config: { mail: { smtpUrl: smtpUrl(port), from: FROM } } });
  cleanups.push(() => t.close());
  return t;
}

const signup = (t: { client(): AgentpayClient }, email: string) =>
  t.client().signup.start({ kind: 'workspace', name: 'Mail Test', email, password: 'correct horse battery staple 42' });

function tokenIn(raw: string): string {
  const m = /waits for this verification token:\r?\n\r?\n {2}(\S+)/.exec(raw);
  if (!m) throw new Error(`no token in the mail:\n${raw}`);
  return m[1]!;
}

const spooled = (dataDir: string) => readdirSync(mailSpoolDir(dataDir)).filter((n) => n.endsWith('.json'));

describe('mail over SMTP', () => {
  it('delivers a signup mail with a token that verifies the signup, and writes no outbox', async () => {
    const smtp = await startSmtp();
    const dataDir = tempDataDir();
    const t = await gateway(dataDir, smtp.port);
    const started = await signup(t, 'ops@mail.test');
    expect(started.token).toBeUndefined();
    const [mail] = await smtp.arrived(1);
    expect(mail!.to).toEqual(['ops@mail.test']);
    expect(mail!.from).toBe('no-reply@agentpay.test');
    expect(mail!.raw).toContain('Subject: Verify your agentpay signup');
    const verified = await t.client().signup.verify({ signupId: started.signup.id, token: tokenIn(mail!.raw) });
    expect(verified.apiKey.key).toMatch(/^ap_w_/);
    await t.gw.mail!.deliverDue(); // waits for the round under way: the file goes once the server has accepted
    expect(spooled(dataDir)).toEqual([]);
    expect(existsSync(outboxPath(dataDir))).toBe(false);
  });

  it('answers the request when the server refuses the connection, and delivers the mail once it is up', async () => {
    const port = await freePort();
    const dataDir = tempDataDir();
    const clock = new ManualClock(Date.now());
    const t = await gateway(dataDir, port, clock);
    const started = await signup(t, 'later@mail.test');
    expect(started.signup.status).toBe('pending');
    await t.gw.mail!.deliverDue(); // the attempt the send started has failed
    const [waiting] = t.gw.mail!.pending();
    expect(waiting).toMatchObject({ attempts: 1, message: { kind: 'signup_verification', to: 'later@mail.test' } });
    expect(waiting!.lastError).toContain('ECONNREFUSED');
    expect(waiting!.nextAttemptAt).toBe(clock.now() + 5_000);

    // not due yet: nothing is tried
    clock.advance(4_000);
    await t.gw.mail!.deliverDue();
    expect(t.gw.mail!.pending()[0]!.attempts).toBe(1);

    const smtp = await startSmtp(port);
    clock.advance(1_000);
    await t.gw.mail!.deliverDue();
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]!.to).toEqual(['later@mail.test']);
    await t.client().signup.verify({ signupId: started.signup.id, token: tokenIn(smtp.received[0]!.raw) });
    expect(spooled(dataDir)).toEqual([]);
  });

  it('keeps a message spooled across a restart and sends it when the gateway starts again', async () => {
    const port = await freePort();
    const dataDir = tempDataDir();
    const first = await startTestGateway({ dataDir, keepDataDir: true, clock: new ManualClock(Date.now()), config: { mail: { smtpUrl: smtpUrl(port), from: FROM } } });
    await signup(first, 'restart@mail.test');
    await first.client().accounts.forgotPassword({ email: 'nobody@mail.test' });
    await first.gw.mail!.deliverDue();
    expect(first.gw.mail!.pending().map((m) => [m.message.kind, m.attempts])).toEqual([
      ['signup_verification', 1],
      ['password_reset_no_account', 1],
    ]);
    await first.close();
    expect(spooled(dataDir)).toHaveLength(2);

    const smtp = await startSmtp(port);
    // started again long before the backoff is over: a start sends what the spool holds at once
    const second = await gateway(dataDir, port, new ManualClock(Date.now()));
    const mails = await smtp.arrived(2);
    expect(mails.map((m) => m.to[0])).toEqual(['restart@mail.test', 'nobody@mail.test']);
    expect(tokenIn(mails[0]!.raw)).toMatch(/\S{16,}/);
    // the file goes once the server has accepted the message
    await second.gw.mail!.deliverDue();
    expect(spooled(dataDir)).toEqual([]);
    expect(smtp.received).toHaveLength(2); // sent once each
  });

  it('moves a message the server refuses for good (550) to failed/, and keeps sending the others', async () => {
    const smtp = await startSmtp(0, { reject: true });
    const dir = join(tempDataDir(), 'mail-spool');
    const spool = new MailSpool({ dir, transport: new SmtpTransport(smtpUrl(smtp.port)), from: FROM, clock: new ManualClock(), timers: manualTimers().timers });
    cleanups.push(() => spool.close());
    await spool.send({ kind: 'password_reset_no_account', to: 'gone@mail.test', subject: 's', text: 't' });
    await spool.deliverDue();
    expect(spool.pending()).toEqual([]);
    const failed = readdirSync(join(dir, 'failed'));
    expect(failed).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, 'failed', failed[0]!), 'utf8')).message.to).toBe('gone@mail.test');
  });
});

/** Timers that only record: the test decides when a retry runs. */
function manualTimers(): { timers: SpoolTimers; delays: number[] } {
  const delays: number[] = [];
  return { delays, timers: { set: (_fn, ms) => (delays.push(ms), delays.length), clear: () => undefined } };
}

describe('MailSpool retries', () => {
  it('backs off exponentially from 5 s up to 15 min', () => {
    expect([1, 2, 3, 4].map((a) => retryDelay(a, 5_000, 900_000))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelay(20, 5_000, 900_000)).toBe(900_000);
    expect(retryDelay(10_000, 5_000, 900_000)).toBe(900_000);
  });

  it('arms its timer for each retry with the next delay while the server stays down', async () => {
    const port = await freePort();
    const clock = new ManualClock();
    const { timers, delays } = manualTimers();
    const spool = new MailSpool({ dir: join(tempDataDir(), 'mail-spool'), transport: new SmtpTransport(smtpUrl(port)), from: FROM, clock, timers });
    cleanups.push(() => spool.close());
    await spool.send({ kind: 'password_reset_no_account', to: 'a@mail.test', subject: 's', text: 't' });
    await spool.deliverDue();
    for (let i = 0; i < 3; i++) {
      clock.advance(delays.at(-1)!);
      await spool.deliverDue();
    }
    expect(delays).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(spool.pending()[0]!.attempts).toBe(4);
  });
});

describe('the SMTP password', () => {
  it('is never in the log or the spool, even when sending fails', async () => {
    const port = await freePort();
    const dataDir = tempDataDir();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const gw = await startGateway({ ...(await backendOptions(dataDir)), dataDir, port: 0, httpPort: null, clock: new ManualClock(Date.now()), logger: { level: 'trace', stream }, config: { mail: { smtpUrl: smtpUrl(port), from: FROM } } });
    cleanups.push(() => gw.close());
    const client = new AgentpayClient({ gatewayUrl: gw.baseUrl, ca: gw.tls!.ca });
    await client.signup.start({ kind: 'workspace', name: 'Pw', email: 'pw@mail.test', password: 'correct horse battery staple 42' });
    await gw.mail!.deliverDue();
    const log = lines.join('');
    expect(log).toContain('mail goes out over SMTP');
    expect(log).toContain(`smtp://${USER}:[redacted]@127.0.0.1:${port}`);
    expect(log).toContain('mail not sent yet');
    expect(log).not.toContain(PASSWORD);
    for (const f of spooled(dataDir)) expect(readFileSync(join(mailSpoolDir(dataDir), f), 'utf8')).not.toContain(PASSWORD);
  });

  it('is taken out of URLs and error texts', () => {
    expect(redactSmtpUrl('smtps://u:p%40ss@mail.example.com:465')).toBe('smtps://u:[redacted]@mail.example.com:465');
    expect(redactSmtpUrl('smtp://mail.example.com')).toBe('smtp://mail.example.com');
    expect(scrubSecret('login failed for p@ss', 'smtp://u:p%40ss@h')).toBe('login failed for [redacted]');
  });

  it('is not repeated by the gateway config check', () => {
    const check = (mail: { smtpUrl: string; from: string }) => {
      try {
        resolveConfig({ mail });
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(check({ smtpUrl: `ftp://u:${PASSWORD}@h`, from: 'a@b.test' })).toBe('mail.smtpUrl must start with smtp:// or smtps://, not ftp://');
    expect(check({ smtpUrl: `smtp://u:${PASSWORD}@h`, from: 'nobody' })).toMatch(/^mail\.from must be an email address/);
    expect(check({ smtpUrl: `smtps://u:${PASSWORD}@h:465`, from: FROM })).toBe('accepted');
  });

  it('is not repeated by the settings checks of gateway start', () => {
    const refused = (input: Parameters<typeof gatewayStartOptions>[0]) => {
      try {
        gatewayStartOptions(input);
      } catch (e) {
        return e as Error & { details?: Record<string, unknown> };
      }
      throw new Error('accepted');
    };
    const noFrom = refused({ smtpUrl: `smtp://u:${PASSWORD}@h:25` });
    expect(noFrom.message).toContain('--smtp-url is set but no from address is');
    expect(noFrom.message).not.toContain(PASSWORD);
    const badScheme = refused({ smtpUrl: `http://u:${PASSWORD}@h:25`, mailFrom: 'a@b.test' });
    expect(badScheme.message).toContain('--smtp-url must start with smtp:// or smtps://');
    expect(badScheme.message).not.toContain(PASSWORD);
    expect(refused({ mailFrom: 'a@b.test' }).message).toContain('--mail-from is set but no SMTP server is');
    expect(refused({ smtpUrl: 'smtp://h', mailFrom: 'not an address' }).message).toContain('--mail-from must be an email address');
    expect(gatewayStartOptions({ smtpUrl: 'smtp://h:2525', mailFrom: FROM }).config.mail).toEqual({ smtpUrl: 'smtp://h:2525', from: FROM });
  });
});
