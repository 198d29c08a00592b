/**
 * Outgoing mail: signup verification and password-reset tokens, the notices that
 * stand in for them when an address's state must not show in an answer, and alerts
 * (src/domain/platform/alert-mail.ts) reach people through a `Mailer`. A local gateway has no mail server, so its default mailer appends
 * each message as one JSON line to DATA_DIR/outbox.jsonl (mode 0600: the lines carry
 * secrets). A gateway given an SMTP server sends through MailSpool (src/gateway/mail/),
 * another Mailer. No mailer logs tokens.
 */
import { appendFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.js';

/** A message that delivers a one-time token. */
export interface TokenMessage {
  kind: 'signup_verification' | 'password_reset';
  to: string;
  subject: string;
  text: string;
  /** the one-time token the message delivers */
  token: string;
  /** ISO time the token stops working */
  expiresAt: string;
  /** signup verification only */
  signupId?: string;
}

/**
 * A message that carries no token: sent where a token cannot be, so that the route answers
 * (and takes) the same either way and only the owner of the address learns which case it was.
 * - `signup_existing_account`: a signup named an address that already has an account.
 * - `password_reset_no_account`: a reset was asked for an address that has no account.
 */
export interface NoticeMessage {
  kind: 'signup_existing_account' | 'password_reset_no_account';
  to: string;
  subject: string;
  text: string;
  /** `signup_existing_account` only */
  signupId?: string;
}

/**
 * An alert: an event of GET /v1/events that a person should hear of (src/domain/platform/alert-mail.ts),
 * sent to each account of the tenant. Carries no secret.
 */
export interface AlertMessage {
  kind: 'alert';
  to: string;
  subject: string;
  text: string;
  eventId: string;
  eventType: string;
}

export type MailMessage = TokenMessage | NoticeMessage | AlertMessage;

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * One line per message: `{"at": "<ISO>", ...message}`. `OutboxLine` alone is a line that
 * delivers a token (what most readers look for); `OutboxLine<MailMessage>` is any line.
 */
export type OutboxLine<M extends MailMessage = TokenMessage> = M & { at: string };

export const outboxPath = (dataDir: string) => join(dataDir, 'outbox.jsonl');

export class OutboxMailer implements Mailer {
  constructor(private path: string, private clock: Clock) {}

  async send(message: MailMessage): Promise<void> {
    const line: OutboxLine<MailMessage> = { at: new Date(this.clock.now()).toISOString(), ...message };
    await appendFile(this.path, JSON.stringify(line) + '\n', { mode: 0o600 });
    // the mode above applies only when the file is created; keep it private regardless
    await chmod(this.path, 0o600);
  }
}

/** Keeps messages in memory: for gateways built without a data directory. */
export class MemoryMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }
}
